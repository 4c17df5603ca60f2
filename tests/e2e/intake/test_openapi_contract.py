"""The intake contract as a checked-in file (``schemas/openapi.yaml``, which holds the product origin's
part too, tests/support/openapi_contract.py): the running app's OpenAPI is its part, so a change to a route, a
status or an error body is a visible change to the contract.

After an intentional change: ``PRW_UPDATE_OPENAPI=1 ./run tests tests/e2e/intake/test_openapi_contract.py``
rewrites the intake part; review the diff like any contract change.
"""

from __future__ import annotations

import httpx
import yaml

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform
from tests.support.openapi_contract import CONTRACT, ORIGINS, check_origin


def test_the_running_intake_app_serves_exactly_the_checked_in_contract(platform: Platform) -> None:
    """The app as the composition root builds it for ``prw serve intake``: every route it serves, the export
    stream and the snapshot exports (if_projection_bootstrap) included."""
    with BackgroundServer(compose.intake_app(platform)) as server:
        served = httpx.get(f"{server.url}/openapi.json")
    assert served.status_code == 200
    document = served.json()
    assert {"/v1/exports/snapshots", "/v1/exports/snapshots/{export_id}/lease"} <= set(document["paths"])
    check_origin("intake", document)


#: The token endpoint authenticates the client itself; an export object's signed link is its own credential,
#: scoped to one export and one object (if_projection_bootstrap Authorization).
_NO_BEARER = frozenset({"/v1/oauth/token", "/v1/exports/snapshots/{export_id}/objects/{aggregate}"})


def test_the_contract_declares_the_collector_oauth2_scheme_on_every_collector_route() -> None:
    document = yaml.safe_load(CONTRACT.read_text())
    schemes = document["components"]["securitySchemes"]
    assert schemes["collectorOAuth2"]["flows"]["clientCredentials"]["tokenUrl"] == "/v1/oauth/token"
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if path in _NO_BEARER or path in document[ORIGINS]["product"]:
                continue  # the token endpoint authenticates the client itself; public reads need nothing
            assert {"collectorOAuth2": []} in operation.get("security", []) or any(
                "collectorOAuth2" in s for s in operation.get("security", [])
            ), f"{method.upper()} {path} does not declare collectorOAuth2"

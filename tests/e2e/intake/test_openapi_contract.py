"""The intake contract as a checked-in file (issue 7: ``schemas/openapi.yaml``, which holds the product origin's
part too, tests/support/openapi_contract.py): the running app's OpenAPI is its part, so a change to a route, a
status or an error body is a visible change to the contract.

After an intentional change: ``PRW_UPDATE_OPENAPI=1 ./run tests tests/e2e/intake/test_openapi_contract.py``
rewrites the intake part; review the diff like any contract change.
"""

from __future__ import annotations

import httpx
import yaml

from tests.support.openapi_contract import CONTRACT, ORIGINS, check_origin


def test_the_running_intake_app_serves_exactly_the_checked_in_contract(http: httpx.Client) -> None:
    served = http.get("/openapi.json")
    assert served.status_code == 200
    check_origin("intake", served.json())


def test_the_contract_declares_the_collector_oauth2_scheme_on_every_collector_route() -> None:
    document = yaml.safe_load(CONTRACT.read_text())
    schemes = document["components"]["securitySchemes"]
    assert schemes["collectorOAuth2"]["flows"]["clientCredentials"]["tokenUrl"] == "/v1/oauth/token"
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if path == "/v1/oauth/token" or path in document[ORIGINS]["product"]:
                continue  # the token endpoint authenticates the client itself; public reads need nothing
            assert {"collectorOAuth2": []} in operation.get("security", []) or any(
                "collectorOAuth2" in s for s in operation.get("security", [])
            ), f"{method.upper()} {path} does not declare collectorOAuth2"

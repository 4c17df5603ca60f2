"""The admin contract as a checked-in file (``schemas/openapi-admin.yaml``): the running admin app's OpenAPI
equals it, and every operator route declares the operatorOidc security scheme (if_operator_session:
``securitySchemes.operatorOidc``).

After an intentional change: ``PRW_UPDATE_OPENAPI=1 ./run tests tests/e2e/admin/test_admin_openapi_contract.py``
rewrites the file; review the diff like any contract change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import yaml

from prw_api.server import BackgroundServer

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = ROOT / "schemas" / "openapi-admin.yaml"


def _dump(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=True, allow_unicode=True, width=110)


def test_the_running_admin_app_serves_exactly_the_checked_in_contract(admin: BackgroundServer) -> None:
    served = httpx.get(f"{admin.url}/openapi.json")
    assert served.status_code == 200
    document = served.json()
    if os.environ.get("PRW_UPDATE_OPENAPI") == "1":
        CONTRACT.write_text(_dump(document))
    assert CONTRACT.exists(), f"{CONTRACT} is missing: run with PRW_UPDATE_OPENAPI=1 to write it"
    assert yaml.safe_load(CONTRACT.read_text()) == document, (
        "the admin OpenAPI changed: review it, then rerun with PRW_UPDATE_OPENAPI=1"
    )


#: if_review_read: "Evidence artifact links are short-lived signed reads": the signed link is the authorization.
SIGNED_LINK_ROUTES = frozenset({"/v1/evidence/{token}"})


def test_every_operator_route_declares_the_operator_oidc_scheme() -> None:
    document = yaml.safe_load(CONTRACT.read_text())
    scheme = document["components"]["securitySchemes"]["operatorOidc"]
    assert scheme["type"] == "openIdConnect"
    assert scheme["openIdConnectUrl"] == "/auth/openid-configuration"
    operator_routes = [
        (method, path, operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if (path.startswith("/v1/") or path == "/auth/logout") and path not in SIGNED_LINK_ROUTES
    ]
    assert {(m, p) for m, p, _ in operator_routes} >= {("post", "/v1/decisions"), ("get", "/v1/session")}
    for method, path, operation in operator_routes:
        assert {"operatorOidc": []} in operation.get("security", []), f"{method.upper()} {path}"

"""The intake contract as a checked-in file (issue 7: ``schemas/openapi.yaml``): the running app's OpenAPI equals
it, so a change to a route, a status or an error body is a visible change to the contract.

After an intentional change: ``PRW_UPDATE_OPENAPI=1 ./run tests tests/e2e/intake/test_openapi_contract.py``
rewrites the file; review the diff like any contract change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = ROOT / "schemas" / "openapi.yaml"


def _dump(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=True, allow_unicode=True, width=110)


def test_the_running_intake_app_serves_exactly_the_checked_in_contract(http: httpx.Client) -> None:
    served = http.get("/openapi.json")
    assert served.status_code == 200
    document = served.json()
    if os.environ.get("PRW_UPDATE_OPENAPI") == "1":
        CONTRACT.write_text(_dump(document))
    assert CONTRACT.exists(), f"{CONTRACT} is missing: run with PRW_UPDATE_OPENAPI=1 to write it"
    assert yaml.safe_load(CONTRACT.read_text()) == document, (
        "the intake OpenAPI changed: review it, then rerun with PRW_UPDATE_OPENAPI=1"
    )


def test_the_contract_declares_the_collector_oauth2_scheme_on_every_collector_route() -> None:
    document = yaml.safe_load(CONTRACT.read_text())
    schemes = document["components"]["securitySchemes"]
    assert schemes["collectorOAuth2"]["flows"]["clientCredentials"]["tokenUrl"] == "/v1/oauth/token"
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if path == "/v1/oauth/token":
                continue
            assert {"collectorOAuth2": []} in operation.get("security", []) or any(
                "collectorOAuth2" in s for s in operation.get("security", [])
            ), f"{method.upper()} {path} does not declare collectorOAuth2"

"""A snapshot export's object link has one spelling (prw_platform.auth.signed): the link's token spelled another
way that a lenient base64 decoder reads as the same mac (unused low bits, ``=`` padding, the standard alphabet)
is refused with the same error as a forged mac, on the intake origin over HTTP."""

from __future__ import annotations

from datetime import timedelta

import pytest

from prw_platform.runtime import run_stage
from tests.e2e.retention.test_snapshot_exports_http import (  # noqa: F401  (fixtures)
    Deployment,
    bearer,
    deployment,
    request_export,
    world,
)
from tests.support.token_spellings import SPELLINGS, respell, token_with_url_safe_mac


def _forged(token: str) -> str:
    payload, _, mac = token.rpartition(".")
    return f"{payload}.{'B' if mac[0] == 'A' else 'A'}{mac[1:]}"


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_object_link_spelled_another_way_is_refused_like_a_forged_mac(
    deployment: Deployment,  # noqa: F811
    spelling: str,
) -> None:
    deployment.decide(1)
    with deployment.http() as http:
        headers = bearer(http, deployment.product)
        export_id = request_export(http, headers, f"spell-{spelling}", aggregates=["catalog_item"]).json()[
            "export_id"
        ]
        assert run_stage(deployment.platform, "exports").counts == {"ready": 1}

        def issue(n: int) -> str:
            # Every GET of the manifest signs fresh links that expire a fixed time later: another mac.
            deployment.clock.advance(timedelta(seconds=n and 1))
            manifest = http.get(f"/v1/exports/snapshots/{export_id}", headers=headers)
            assert manifest.status_code == 200, manifest.text
            [link] = manifest.json()["objects"]
            return str(link["url"]).split("token=")[1]

        def present(token: str) -> tuple[int, str | None]:
            response = http.get(
                f"/v1/exports/snapshots/{export_id}/objects/catalog_item", params={"token": token}
            )
            return response.status_code, response.json()["error"]["code"] if response.is_error else None

        token = token_with_url_safe_mac(issue) if spelling == "standard alphabet" else issue(0)

        assert present(token) == (200, None)
        assert present(_forged(token)) == (404, "NOT_FOUND")
        assert present(respell(token, spelling)) == present(_forged(token))

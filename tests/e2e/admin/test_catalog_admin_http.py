"""Catalog administration over real HTTP on the admin origin (INV-07): retiring an item and
provisioning a merchant, its source binding and its shipping policy are operator_admin decisions (AW-01) with the
operator as actor; a refused request writes nothing and consumes no stream position."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.e2e.admin.conftest import Cases, Operator
from tests.integration.resolution.pipeline import CATALOG, SOURCE

Login = Callable[[str], Operator]
MERCHANT = {"catalog_id": CATALOG, "name": "Lumen Store", "url": "https://lumen.example"}
POLICY = {
    "catalog_id": CATALOG,
    "currency": "EUR",
    "rates": {"DE": "4.90", "FR": "6.50"},
    "free_shipping_threshold": "100",
}


def _put(operator: Operator, path: str, body: dict[str, Any]) -> httpx.Response:
    return operator.http.put(path, json=body, headers={"X-CSRF-Token": operator.csrf})


def _retire(operator: Operator, item_id: str, key: str | None = None, **body: Any) -> httpx.Response:
    headers = {"X-CSRF-Token": operator.csrf, **({"Idempotency-Key": key} if key else {})}
    payload = {"catalog_id": CATALOG, "rationale": "discontinued by the maker", **body}
    return operator.http.post(f"/v1/items/{item_id}/retirement", json=payload, headers=headers)


def _decisions(cases: Cases) -> list[dict[str, Any]]:
    return cases.resolution.rows("SELECT action, actor, rationale FROM resolver.decision ORDER BY created_at")


def _positions(cases: Cases) -> int:
    return cases.count("resolver.outbox")


def test_an_operator_provisions_a_merchant_binds_the_source_and_has_its_policy_accepted(
    login: Login, cases: Cases
) -> None:
    ada = login("ada")
    cases.item()  # the catalog's stream is open
    before = _positions(cases)

    created = _put(ada, "/v1/merchants/mer_lumen", {**MERCHANT, "rationale": "new partner"})
    bound = _put(ada, f"/v1/sources/{SOURCE}/merchant", {"catalog_id": CATALOG, "merchant_id": "mer_lumen"})
    policy = _put(ada, "/v1/merchants/mer_lumen/shipping-policy", POLICY)

    assert [r.status_code for r in (created, bound, policy)] == [200, 200, 200], policy.text
    assert [r.json()["action"] for r in (created, bound, policy)] == [
        "provision_merchant",
        "bind_source",
        "accept_shipping_policy",
    ]
    # The test catalog releases automatically: each decision also commits a release.authorized event.
    assert [next(e["type"] for e in r.json()["outbox"]) for r in (created, bound, policy)] == [
        "merchant.created",
        "merchant.source_bound",
        "shipping_policy.accepted",
    ]
    assert _positions(cases) > before
    rows = cases.resolution.rows(
        "SELECT currency, rates, free_shipping_threshold FROM resolver.shipping_policy WHERE merchant_id = %s",
        "mer_lumen",
    )
    assert len(rows) == 1
    assert rows[0]["currency"] == "EUR"
    decided = [d for d in _decisions(cases) if d["action"] != "map"]
    assert {d["actor"] for d in decided[-3:]} == {"operator:ada"}
    assert decided[-3]["rationale"] == "new partner"


def test_asking_again_for_the_state_a_fact_has_decides_nothing(login: Login, cases: Cases) -> None:
    ada = login("ada")
    cases.item()
    _put(ada, "/v1/merchants/mer_lumen", MERCHANT)
    positions, decisions = _positions(cases), len(_decisions(cases))

    again = _put(ada, "/v1/merchants/mer_lumen", MERCHANT)
    renamed = _put(ada, "/v1/merchants/mer_lumen", {**MERCHANT, "name": "Lumen"})

    assert again.status_code == 200
    assert again.json() == {"outcome": "unchanged", "decision_id": None, "action": None, "outbox": []}
    assert renamed.json()["outcome"] == "decided"
    assert next(e["type"] for e in renamed.json()["outbox"]) == "merchant.updated"
    assert len(_decisions(cases)) == decisions + 1
    assert _positions(cases) > positions


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        (
            "/v1/sources/{source}/merchant",
            {"catalog_id": CATALOG, "merchant_id": "mer_ghost"},
            404,
            "MERCHANT_NOT_FOUND",
        ),
        ("/v1/merchants/mer_ghost/shipping-policy", POLICY, 404, "MERCHANT_NOT_FOUND"),
        (
            "/v1/sources/src_elsewhere/merchant",
            {"catalog_id": CATALOG, "merchant_id": "mer_lumen"},
            409,
            "SOURCE_NOT_IN_CATALOG",
        ),
        (
            "/v1/merchants/mer_lumen/shipping-policy",
            {**POLICY, "rates": {"ZZZ": "1"}},
            422,
            "VALIDATION_FAILED",
        ),
        (
            "/v1/merchants/mer_lumen/shipping-policy",
            {**POLICY, "rates": {"DE": "-1"}},
            422,
            "VALIDATION_FAILED",
        ),
        ("/v1/merchants/mer_lumen/shipping-policy", {**POLICY, "rates": {}}, 422, "VALIDATION_FAILED"),
        ("/v1/merchants/mer_lumen", {**MERCHANT, "name": "   "}, 422, "INVALID_MERCHANT_FACT"),
        ("/v1/merchants/mer_lumen", {**MERCHANT, "catalog_id": "cat_nowhere"}, 404, "NOT_FOUND"),
        ("/v1/merchants/Mer-Lumen", MERCHANT, 422, "VALIDATION_FAILED"),
    ],
)
def test_a_refused_provisioning_request_writes_nothing(
    login: Login, cases: Cases, path: str, body: dict[str, Any], status: int, code: str
) -> None:
    ada = login("ada")
    cases.item()
    _put(ada, "/v1/merchants/mer_lumen", MERCHANT)
    positions, decisions = _positions(cases), len(_decisions(cases))

    response = _put(ada, path.format(source=SOURCE), body)

    assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
    assert (_positions(cases), len(_decisions(cases))) == (positions, decisions)


def test_retiring_an_item_is_a_decision_replayed_by_its_key_and_final(login: Login, cases: Cases) -> None:
    ada = login("ada")
    item = cases.item()

    first = _retire(ada, item, key="retire-1")
    replay = _retire(ada, item, key="retire-1")
    again = _retire(ada, item, key="retire-2")

    assert first.status_code == 201, first.text
    body = first.json()
    assert body["item_id"] == item
    assert body["revision"] == 2
    assert next(e["type"] for e in body["outbox"]) == "catalog_item.updated"
    assert (replay.status_code, replay.headers.get("Idempotent-Replayed")) == (200, "true")
    assert replay.json()["decision_id"] == body["decision_id"]
    assert (again.status_code, again.json()["error"]["code"]) == (409, "ITEM_RETIRED")
    status = cases.resolution.one("SELECT status FROM resolver.catalog_item WHERE item_id = %s", item)[
        "status"
    ]
    assert status == "retired"
    retirements = [d for d in _decisions(cases) if d["action"] == "retire_item"]
    assert retirements == [
        {"action": "retire_item", "actor": "operator:ada", "rationale": "discontinued by the maker"}
    ]


def test_retiring_an_unknown_item_is_404_and_a_reviewer_may_not_retire(login: Login, cases: Cases) -> None:
    item = cases.item()
    positions = _positions(cases)

    missing = _retire(login("ada"), "itm_nowhere")
    forbidden = _retire(login("rita"), item)
    no_rationale = _retire(login("ada"), item, rationale="")

    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "NOT_FOUND")
    assert (forbidden.status_code, forbidden.json()["error"]["code"]) == (403, "FORBIDDEN")
    assert (no_rationale.status_code, no_rationale.json()["error"]["code"]) == (422, "VALIDATION_FAILED")
    assert _positions(cases) == positions

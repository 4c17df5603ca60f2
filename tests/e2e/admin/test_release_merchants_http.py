"""An operator's release publishes merchants too: ``POST /v1/releases`` over real
HTTP on a manual catalog whose merchant, source binding and shipping policy were accepted by operator decisions
(AW-01) publishes them in its ``release.authorized`` event, remembers their revisions (``released_merchant``,
``released_merchant_source``, ``released_shipping_policy``), and the next release publishes only what changed;
409 NOTHING_TO_RELEASE once everything is released, including what automatic releases already published."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import httpx

from prw_platform.bootstrap import Platform
from prw_platform.resolver.decisions import MerchantSpec, ShippingPolicySpec
from tests.e2e.admin.conftest import TENANT, Cases, Operator
from tests.integration.resolution.pipeline import CATALOG, SOURCE

Login = Callable[[str], Operator]
OPERATOR = "operator:ada"
LUMEN = MerchantSpec("mer_lumen", "Lumen Store", "https://lumen.example")
POLICY = ShippingPolicySpec("mer_lumen", "EUR", {"DE": Decimal("4.90")}, Decimal("50"))
TRACKING = (
    "resolver.released_merchant",
    "resolver.released_merchant_source",
    "resolver.released_shipping_policy",
)


def _release(operator: Operator) -> httpx.Response:
    return operator.http.post(
        "/v1/releases", json={"catalog_id": CATALOG}, headers={"X-CSRF-Token": operator.csrf}
    )


def _manual(operator: Operator) -> None:
    response = operator.http.put(
        f"/v1/catalogs/{CATALOG}/release-policy",
        json={"release_policy": "manual", "rationale": "publications are reviewed"},
        headers={"X-CSRF-Token": operator.csrf},
    )
    assert response.status_code == 200, response.text


def _accept_merchant(platform: Platform, policy: ShippingPolicySpec = POLICY) -> None:
    """The merchant, the source's binding and the policy, each an operator decision."""
    merchants = platform.merchants
    merchants.provision(TENANT, CATALOG, LUMEN, actor=OPERATOR)
    merchants.bind_source(TENANT, CATALOG, SOURCE, LUMEN.merchant_id, actor=OPERATOR)
    merchants.accept_shipping_policy(TENANT, CATALOG, policy, actor=OPERATOR)


def _published(cases: Cases, release: dict[str, Any]) -> dict[str, Any]:
    """The payload of the release's one ``release.authorized`` event."""
    row = cases.resolution.one("SELECT body FROM resolver.outbox WHERE event_id = %s", release["outbox"][0])
    payload: dict[str, Any] = row["body"]["payload"]
    return payload


def test_a_manual_catalogs_release_publishes_its_merchant_binding_and_policy_201(
    login: Login, cases: Cases, admin_platform: Platform
) -> None:
    ada = login("ada")
    _manual(ada)
    _accept_merchant(admin_platform)
    assert [cases.count(table) for table in TRACKING] == [0, 0, 0]
    assert cases.count("resolver.release") == 0

    response = _release(ada)

    assert response.status_code == 201, response.text
    payload = _published(cases, response.json())
    assert payload["merchants"] == [
        {
            "merchant": "mer_lumen",
            "revision": 1,
            "fields": {"merchant": "mer_lumen", "name": "Lumen Store", "url": "https://lumen.example"},
        }
    ]
    assert payload["merchant_sources"] == [{"source_id": SOURCE, "merchant": "mer_lumen", "revision": 1}]
    (policy,) = payload["shipping_policies"]
    assert (policy["merchant"], policy["revision"]) == ("mer_lumen", 1)
    assert policy["fields"]["rates"] == [{"destination": "DE", "rate": "4.90"}]
    assert (payload["items"], payload["listings"]) == ([], [])
    decision = cases.resolution.one(
        "SELECT details FROM resolver.decision WHERE decision_id = %s", response.json()["decision_id"]
    )
    assert decision["details"]["merchants"] == 1
    assert decision["details"]["merchant_sources"] == 1
    assert decision["details"]["shipping_policies"] == 1
    assert [cases.count(table) for table in TRACKING] == [1, 1, 1]


def test_the_next_release_publishes_only_the_changed_policy_then_409_nothing_to_release(
    login: Login, cases: Cases, admin_platform: Platform
) -> None:
    ada = login("ada")
    _manual(ada)
    _accept_merchant(admin_platform)
    assert _release(ada).status_code == 201
    cheaper = ShippingPolicySpec("mer_lumen", "EUR", {"DE": Decimal("2.90")}, Decimal("50"))
    admin_platform.merchants.accept_shipping_policy(TENANT, CATALOG, cheaper, actor=OPERATOR)

    second = _release(ada)

    assert second.status_code == 201, second.text
    payload = _published(cases, second.json())
    assert (payload["merchants"], payload["merchant_sources"]) == ([], [])
    (policy,) = payload["shipping_policies"]
    assert (policy["revision"], policy["fields"]["rates"]) == (2, [{"destination": "DE", "rate": "2.90"}])
    released = cases.resolution.one(
        "SELECT revision, publication_revision FROM resolver.released_shipping_policy"
    )
    assert released == {"revision": 2, "publication_revision": 2}
    third = _release(ada)
    assert third.status_code == 409, third.text
    assert third.json()["error"]["code"] == "NOTHING_TO_RELEASE"


def test_merchants_an_automatic_release_published_are_not_released_again_409_nothing_to_release(
    login: Login, cases: Cases, admin_platform: Platform
) -> None:
    ada = login("ada")
    _accept_merchant(admin_platform)  # automatic: each decision released what it changed
    assert [cases.count(table) for table in TRACKING] == [1, 1, 1]
    _manual(ada)

    response = _release(ada)

    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "NOTHING_TO_RELEASE"
    assert cases.count("resolver.release") == 3

"""Merchants on the resolver side: operators provision merchants, bind sources to them and have shipping policies
accepted, each a decision like any other fact (AW-01): immutable decision row, fact at revision + 1, outbox events
``merchant.*`` / ``shipping_policy.accepted`` at the next positions (INV-03), schema-valid (if_accepted_change)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prw_platform.contracts import AcceptedChange, validate
from prw_platform.resolver.decisions import (
    InvalidMerchantFact,
    MerchantNotFound,
    MerchantService,
    MerchantSpec,
    ShippingPolicySpec,
    SourceNotInCatalog,
)
from tests.integration.resolver.decision_builders import Catalog

OPERATOR = "operator:ops_anna"
LUMEN = MerchantSpec("mer_lumen", "Lumen Store", "https://lumen.example")
POLICY = ShippingPolicySpec("mer_lumen", "EUR", {"DE": Decimal("4.90"), "FR": Decimal("6.50")}, Decimal("50"))


def _service(catalog: Catalog) -> MerchantService:
    return MerchantService(
        catalog.resolver_db, lambda tenant, catalog_id: catalog.stream, clock=catalog.clock
    )


def _provision(catalog: Catalog) -> MerchantService:
    service = _service(catalog)
    service.provision(catalog.tenant_id, catalog.stream.catalog_id, LUMEN, actor=OPERATOR)
    return service


def test_provision_bind_and_policy_are_decisions_with_events_and_automatic_releases(catalog: Catalog) -> None:
    service = _service(catalog)
    cat = catalog.stream.catalog_id
    created = service.provision(catalog.tenant_id, cat, LUMEN, actor=OPERATOR)
    bound = service.bind_source(catalog.tenant_id, cat, "src_lumen", "mer_lumen", actor=OPERATOR)
    accepted = service.accept_shipping_policy(catalog.tenant_id, cat, POLICY, actor=OPERATOR)
    assert created
    assert bound
    assert accepted

    rows = catalog.outbox()
    assert [r["event_type"] for r in rows] == [
        "merchant.created",
        "release.authorized",
        "merchant.source_bound",
        "release.authorized",
        "shipping_policy.accepted",
        "release.authorized",
    ]
    assert [r["position"] for r in rows] == [1, 2, 3, 4, 5, 6]
    for row in rows:
        validate("product.accepted-change.v1.json", row["body"])
    changes = [AcceptedChange.from_message(r["body"]) for r in rows]
    assert changes[0].payload == {
        "merchant": "mer_lumen",
        "name": "Lumen Store",
        "url": "https://lumen.example",
    }
    assert changes[2].payload == {"source_id": "src_lumen", "merchant": "mer_lumen"}
    assert [d.model_dump() for d in changes[2].dependencies] == [
        {"type": "merchant", "id": "mer_lumen", "revision": 1}
    ]
    assert changes[4].payload == {
        "merchant": "mer_lumen",
        "currency": "EUR",
        "rates": [{"destination": "DE", "rate": "4.90"}, {"destination": "FR", "rate": "6.50"}],
        "free_shipping_threshold": "50",
    }
    release = changes[5].payload
    assert release["shipping_policies"] == [
        {"merchant": "mer_lumen", "revision": 1, "fields": changes[4].payload}
    ]
    assert [(d.type, d.id, d.revision) for d in changes[5].dependencies] == [
        ("shipping_policy", "mer_lumen", 1)
    ]
    assert catalog.count("decision") == 3
    assert catalog.count("release") == 3
    assert {r["decision_id"] for r in rows[4:]} == {accepted.decision_id}


def test_repeating_a_provisioning_decides_nothing_and_a_change_is_revision_plus_one(catalog: Catalog) -> None:
    service = _provision(catalog)
    cat = catalog.stream.catalog_id
    assert service.provision(catalog.tenant_id, cat, LUMEN, actor=OPERATOR) is None
    renamed = service.provision(
        catalog.tenant_id, cat, MerchantSpec("mer_lumen", "Lumen Direct"), actor=OPERATOR
    )
    assert renamed is not None
    assert [(e.type, e.revision) for e in renamed.events] == [
        ("merchant.updated", 2),
        ("release.authorized", 2),
    ]
    assert catalog.count("decision") == 2


def test_manual_catalog_accepts_without_releasing(manual_catalog: Catalog) -> None:
    service = _service(manual_catalog)
    service.provision(manual_catalog.tenant_id, "cat_manual", LUMEN, actor=OPERATOR)
    assert [r["event_type"] for r in manual_catalog.outbox()] == ["merchant.created"]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (ShippingPolicySpec("mer_lumen", "EUR", {"ZZ": Decimal("1")}), "ISO 3166-1"),
        (ShippingPolicySpec("mer_lumen", "euro", {"DE": Decimal("1")}), "ISO 4217"),
        (ShippingPolicySpec("mer_lumen", "EUR", {"DE": Decimal("-1")}), "0 or more"),
    ],
)
def test_an_invalid_policy_is_refused_and_consumes_no_position(
    catalog: Catalog, policy: ShippingPolicySpec, message: str
) -> None:
    service = _provision(catalog)
    before = catalog.committed_position()
    with pytest.raises(InvalidMerchantFact, match=message):
        service.accept_shipping_policy(catalog.tenant_id, catalog.stream.catalog_id, policy, actor=OPERATOR)
    assert catalog.committed_position() == before
    assert catalog.count("shipping_policy") == 0


def test_binding_needs_a_merchant_and_a_source_of_the_catalog(catalog: Catalog) -> None:
    service = _service(catalog)
    cat = catalog.stream.catalog_id
    with pytest.raises(MerchantNotFound):
        service.bind_source(catalog.tenant_id, cat, "src_lumen", "mer_nobody", actor=OPERATOR)
    with pytest.raises(MerchantNotFound):
        service.accept_shipping_policy(catalog.tenant_id, cat, POLICY, actor=OPERATOR)
    _provision(catalog)
    with pytest.raises(SourceNotInCatalog):
        service.bind_source(catalog.tenant_id, cat, "src_elsewhere", "mer_lumen", actor=OPERATOR)
    with pytest.raises(InvalidMerchantFact):
        service.provision(catalog.tenant_id, cat, MerchantSpec("Lumen", "Lumen"), actor=OPERATOR)
    with pytest.raises(InvalidMerchantFact, match="url"):
        service.provision(
            catalog.tenant_id, cat, MerchantSpec("mer_x", "X", "javascript:alert(1)"), actor=OPERATOR
        )
    with pytest.raises(ValueError, match="operator"):
        service.provision(catalog.tenant_id, cat, LUMEN, actor="rule:auto@1")
    assert catalog.count("merchant_source") == 0


def test_rebinding_a_source_moves_it_to_the_other_merchant(catalog: Catalog) -> None:
    service = _provision(catalog)
    cat = catalog.stream.catalog_id
    service.provision(catalog.tenant_id, cat, MerchantSpec("mer_bazaar", "Bazaarline"), actor=OPERATOR)
    service.bind_source(catalog.tenant_id, cat, "src_lumen", "mer_lumen", actor=OPERATOR)
    assert service.bind_source(catalog.tenant_id, cat, "src_lumen", "mer_lumen", actor=OPERATOR) is None
    moved = service.bind_source(catalog.tenant_id, cat, "src_lumen", "mer_bazaar", actor=OPERATOR)
    assert moved is not None
    assert moved.events[0].type == "merchant.source_bound"
    assert moved.events[0].revision == 2

"""AW-01: an automatic decision writes the decision, the facts and the outbox events in one transaction, at
consecutive positions from the stream cursor (INV-03), following docs/events.md."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prw_platform.contracts import AcceptedChange, validate
from prw_platform.db.database import Database
from prw_platform.plugins.types import AttributeDefinition, NormalizedAttribute
from prw_platform.resolver.decisions import (
    AmbiguousIdentity,
    CreateItemAndMap,
    IdentifierConflict,
    InvariantViolation,
    ItemFacts,
    ListingObservation,
    SourceNotInCatalog,
    decide,
    find_item_by_identifiers,
)
from tests.integration.resolver.decision_builders import T0, Catalog, gtin_for

SCHEMA = "product.accepted-change.v1.json"


def _dep(kind: str, aggregate_id: str, revision: int) -> dict[str, object]:
    return {"type": kind, "id": aggregate_id, "revision": revision}


def test_create_item_and_map_writes_decision_facts_and_schema_valid_events_at_positions_1_to_4(
    catalog: Catalog,
) -> None:
    result = catalog.decide(catalog.create(1))

    rows = catalog.outbox()
    assert [r["position"] for r in rows] == [1, 2, 3, 4]
    assert [r["event_type"] for r in rows] == [
        "catalog_item.created",
        "listing.observed",
        "listing_mapping.created",
        "release.authorized",
    ]
    for row in rows:
        validate(SCHEMA, row["body"])  # every stored event conforms to product.accepted-change.v1
        change = AcceptedChange.from_message(row["body"])
        assert change.sequence == row["position"]
        assert (change.tenant_id, change.catalog_id, change.history_epoch) == (
            catalog.stream.tenant_id,
            catalog.stream.catalog_id,
            catalog.stream.history_epoch,
        )
        assert change.decision_id == result.decision_id
        assert change.evidence == ("cap_obs_rec_1",)
        assert row["published_at"] is None
    item, listing, mapping, release = (r["body"] for r in rows)
    item_id, listing_id = result.item_id, result.listing_id
    assert item_id
    assert listing_id
    assert item["aggregate"] == _dep("catalog_item", item_id, 1)
    assert item["dependencies"] == []
    assert item["payload"]["identifiers"] == {"gtin": gtin_for(1), "mpn": "CVN-SP5-1T0"}
    assert item["payload"]["attributes"]["storage:capacity"] == {
        "value": "1000",
        "unit": "GB",
        "definition_version": 1,
    }
    assert listing["aggregate"] == _dep("listing", listing_id, 1)
    assert listing["payload"]["price"] == "129.00"
    assert mapping["aggregate"] == _dep("listing_mapping", listing_id, 1)
    assert mapping["payload"] == {"listing": listing_id, "from": None, "item": item_id}
    assert mapping["dependencies"] == [_dep("catalog_item", item_id, 1), _dep("listing", listing_id, 1)]
    # docs/events.md: the release depends on every item revision and mapping revision it publishes.
    assert release["aggregate"] == _dep("release", "rel_cat_primary", 1)
    assert release["dependencies"] == [
        _dep("catalog_item", item_id, 1),
        _dep("listing_mapping", listing_id, 1),
    ]
    published = release["payload"]
    assert published["publication_revision"] == 1
    assert [i["item"] for i in published["items"]] == [item_id]
    assert "status" not in published["items"][0]["fields"]
    assert published["listings"][0]["mapping_revision"] == 1
    assert published["listings"][0]["listing_revision"] == 1

    assert result.positions == (1, 2, 3, 4)
    assert catalog.committed_position() == 4
    with catalog.owner_db.transaction() as conn:
        decision = conn.execute("SELECT * FROM resolver.decision").fetchone()
        mapped = conn.execute("SELECT item_id, revision FROM resolver.listing_mapping").fetchall()
    assert decision is not None
    assert decision["action"] == "create_item_and_map"
    assert decision["actor"] == "rule:create_on_required_identifiers@1"
    assert decision["case_id"] is None
    assert decision["evidence"] == ["cap_obs_rec_1"]
    assert mapped == [{"item_id": item_id, "revision": 1}]


def test_a_second_decision_continues_the_stream_at_n_plus_1(catalog: Catalog) -> None:
    first = catalog.decide(catalog.create(1))
    assert first.item_id
    second = catalog.decide(catalog.map("rec_other_shop", first.item_id, source_id="src_bazaar"))
    # The item is already public: the release publishes only the new listing assignment.
    assert second.positions == (5, 6, 7)
    assert [e.type for e in second.events] == [
        "listing.observed",
        "listing_mapping.created",
        "release.authorized",
    ]
    release = catalog.outbox()[-1]["body"]
    assert release["payload"]["items"] == []
    assert release["aggregate"]["revision"] == 2
    assert release["dependencies"] == [_dep("listing_mapping", second.listing_id or "", 1)]
    assert [r["position"] for r in catalog.outbox()] == list(range(1, 8))


def test_a_manual_catalog_decides_without_publishing(manual_catalog: Catalog) -> None:
    result = manual_catalog.decide(manual_catalog.create(1, source_id="src_manual"))
    assert [e.type for e in result.events] == [
        "catalog_item.created",
        "listing.observed",
        "listing_mapping.created",
    ]
    assert manual_catalog.count("release") == 0


def test_remapping_a_listing_emits_listing_mapping_corrected_from_the_previous_item(catalog: Catalog) -> None:
    first = catalog.decide(catalog.create(1))
    other = catalog.decide(catalog.create(2))
    assert first.item_id
    assert other.item_id
    remap = catalog.decide(catalog.map("rec_1", other.item_id))
    assert [e.type for e in remap.events] == ["listing_mapping.corrected", "release.authorized"]
    corrected = catalog.outbox()[-2]["body"]
    assert corrected["aggregate"]["revision"] == 2
    assert corrected["payload"] == {"listing": first.listing_id, "from": first.item_id, "item": other.item_id}
    with catalog.owner_db.transaction() as conn:
        decision = conn.execute(
            "SELECT prior_decisions FROM resolver.decision WHERE decision_id = %s", (remap.decision_id,)
        ).fetchone()
    assert decision == {"prior_decisions": [first.decision_id]}


def test_reobserving_an_unchanged_mapped_listing_records_the_decision_and_emits_nothing(
    catalog: Catalog,
) -> None:
    first = catalog.decide(catalog.create(1))
    assert first.item_id
    again = catalog.decide(catalog.map("rec_1", first.item_id))
    assert again.events == ()
    assert catalog.committed_position() == 4
    assert catalog.count("decision") == 2


def test_a_price_change_of_a_mapped_listing_is_observed_and_released(catalog: Catalog) -> None:
    first = catalog.decide(catalog.create(1))
    assert first.item_id
    later = T0.replace(hour=12)
    change = catalog.decide(catalog.map("rec_1", first.item_id, price="99.50", observed_at=later))
    assert [e.type for e in change.events] == ["listing.observed", "release.authorized"]
    observed, release = (r["body"] for r in catalog.outbox()[-2:])
    assert observed["aggregate"]["revision"] == 2
    assert observed["payload"]["price"] == "99.50"
    assert release["payload"]["listings"][0]["listing_revision"] == 2
    assert release["payload"]["listings"][0]["fields"]["price"] == "99.50"


def test_an_older_observation_never_rolls_a_listing_back(catalog: Catalog) -> None:
    first = catalog.decide(catalog.create(1, observed_at=T0.replace(hour=12), price="99.50"))
    assert first.item_id
    stale = catalog.decide(catalog.map("rec_1", first.item_id, observed_at=T0, price="129.00"))
    assert stale.events == ()
    with catalog.owner_db.transaction() as conn:
        listing = conn.execute("SELECT price, revision FROM resolver.listing").fetchone()
    assert listing == {"price": Decimal("99.50"), "revision": 1}


def test_opening_a_review_case_records_the_listing_and_a_case_awaiting_a_human(catalog: Catalog) -> None:
    result = catalog.decide(catalog.review("rec_unknown"))
    assert [e.type for e in result.events] == ["listing.observed"]
    assert result.case_id
    assert result.case_revision == 1
    with catalog.owner_db.transaction() as conn:
        case = conn.execute("SELECT * FROM resolver.review_case").fetchone()
    assert case is not None
    assert (case["status"], case["revision"], case["kind"]) == ("awaiting_human", 1, "identity")
    assert case["listing_id"] == result.listing_id
    assert case["opened_by"] == result.decision_id
    assert case["evidence"] == {"problems": ["core:gtin missing"]}
    assert catalog.count("listing_mapping") == 0
    assert catalog.count("release") == 0


def test_strong_identifiers_find_the_item_by_gtin_or_brand_and_mpn(catalog: Catalog) -> None:
    created = catalog.decide(catalog.create(1))
    tenant, catalog_id = catalog.stream.tenant_id, catalog.stream.catalog_id
    with catalog.resolver_db.transaction(tenant_id=tenant) as conn:
        by_gtin = find_item_by_identifiers(conn, tenant, catalog_id, gtin=gtin_for(1)[1:])  # as a GTIN-13
        by_brand = find_item_by_identifiers(conn, tenant, catalog_id, brand=" corvana ", mpn="cvn-sp5-1t0")
        both = find_item_by_identifiers(
            conn, tenant, catalog_id, gtin=gtin_for(1), brand="Corvana", mpn="CVN-SP5-1T0"
        )
        unknown = find_item_by_identifiers(conn, tenant, catalog_id, gtin=gtin_for(9))
        brand_only = find_item_by_identifiers(conn, tenant, catalog_id, brand="Corvana")
        other_catalog = find_item_by_identifiers(conn, tenant, "cat_other", gtin=gtin_for(1))
    assert by_gtin is not None
    assert by_gtin.item_id == created.item_id
    assert by_gtin.matched_on == ("gtin",)
    assert by_brand is not None
    assert by_brand.item_id == created.item_id
    assert both is not None
    assert set(both.matched_on) == {"gtin", "brand_mpn"}
    assert (unknown, brand_only, other_catalog) == (None, None, None)


def test_identifiers_naming_two_items_are_ambiguous(catalog: Catalog) -> None:
    catalog.decide(catalog.create(1))
    catalog.decide(catalog.create(2))
    tenant = catalog.stream.tenant_id
    with (
        pytest.raises(AmbiguousIdentity) as raised,
        catalog.resolver_db.transaction(tenant_id=tenant) as conn,
    ):
        find_item_by_identifiers(
            conn, tenant, "cat_primary", gtin=gtin_for(1), brand="Corvana", mpn="CVN-SP5-2T0"
        )
    assert len(raised.value.matches) == 2


def test_creating_an_item_with_a_taken_identifier_is_refused_and_commits_nothing(catalog: Catalog) -> None:
    catalog.decide(catalog.create(1))
    duplicate = catalog.create(2)
    duplicate = CreateItemAndMap(
        item=catalog.item(2, gtin=gtin_for(1)),
        listing=duplicate.listing,
        actor=duplicate.actor,
        rationale=duplicate.rationale,
        idempotency_key=duplicate.idempotency_key,
    )
    with pytest.raises(IdentifierConflict) as raised:
        catalog.decide(duplicate)
    assert raised.value.scheme == "gtin"
    assert catalog.count("catalog_item") == 1
    assert catalog.count("decision") == 1
    assert catalog.committed_position() == 4


def test_a_listing_of_a_source_outside_the_catalog_is_refused(
    catalog: Catalog, manual_catalog: Catalog
) -> None:
    with pytest.raises(SourceNotInCatalog):
        catalog.decide(catalog.create(1, source_id="src_manual"))
    assert catalog.count("listing") == 0


def test_inv02_attributes_are_stored_with_their_definition_version_and_checked_against_definitions(
    catalog: Catalog,
) -> None:
    definitions = {
        "storage:capacity": AttributeDefinition("storage:capacity", 1, "quantity", "Capacity", unit="GB"),
        "storage:heatsink": AttributeDefinition("storage:heatsink", 1, "boolean", "Heatsink"),
    }
    conforming = catalog.create(1)
    decide(conforming, catalog.resolver_db, catalog.stream, clock=catalog.clock, definitions=definitions)

    wrong_unit = catalog.create(2)
    wrong_unit = CreateItemAndMap(
        item=catalog.item(
            2,
            attributes=(NormalizedAttribute("storage:capacity", Decimal(2), 1, unit="TB"),),
        ),
        listing=wrong_unit.listing,
        actor=wrong_unit.actor,
        rationale=wrong_unit.rationale,
        idempotency_key=wrong_unit.idempotency_key,
    )
    with pytest.raises(InvariantViolation) as raised:
        decide(wrong_unit, catalog.resolver_db, catalog.stream, clock=catalog.clock, definitions=definitions)
    assert raised.value.invariant == "INV-02"
    assert "unit" in str(raised.value)
    assert catalog.count("catalog_item") == 1
    assert catalog.committed_position() == 4


def test_a_rule_cannot_create_an_item_without_a_strong_identifier() -> None:
    observation = ListingObservation(
        source_id="src_lumen", observed_at=T0, capture_id="cap_1", url="https://x.test"
    )
    with pytest.raises(ValueError, match="strong identifier"):
        CreateItemAndMap(
            item=ItemFacts(profile="np_storage@2", title="No identifiers", brand="Corvana"),
            listing=observation,
            actor="rule:create_on_required_identifiers@1",
            rationale="x",
            idempotency_key="job:x",
        )


def test_decisions_run_as_resolver_app_under_row_level_security(
    catalog: Catalog, resolver_db: Database
) -> None:
    catalog.decide(catalog.create(1))
    with resolver_db.transaction() as conn:  # no tenant: RLS shows nothing
        assert conn.execute("SELECT count(*) AS n FROM resolver.decision").fetchone() == {"n": 0}
        assert conn.execute("SELECT count(*) AS n FROM resolver.catalog_item").fetchone() == {"n": 0}

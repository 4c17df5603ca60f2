"""Item merges and splits on the decision path (AW-01, INV-07): a reviewer's merge remaps the merged item's
listings to the survivor and retires it with ``catalog_item.merged``; a split moves listings to a new item. A
refused merge or split changes no row of any table the decision path writes and consumes no stream position."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.decisions import (
    AuthorizeRelease,
    DecisionError,
    DecisionService,
    IdempotencyConflict,
    ItemsMerged,
    MergeItems,
    RetireItem,
    SplitItem,
    find_item_by_identifiers,
)
from tests.integration.resolver.decision_builders import Catalog, gtin_for

REVIEWER = "reviewer:op_rita"
#: Every table a merge or split may write, with the columns that say what it changed (ordered rows).
_TABLES: dict[str, str] = {
    "decision": "decision_id, action",
    "catalog_item": "item_id, revision, status, merged_into, title, brand",
    "item_identifier": "scheme, value, item_id",
    "listing_mapping": "listing_id, item_id, revision",
    "outbox": "position, event_type, aggregate_id",
    "release": "publication_revision",
    "released_item": "item_id, revision, merged_into",
    "released_listing": "listing_id, item_id, mapping_revision",
    "stream_cursor": "catalog_id, committed_position",
}


def table_snapshot(owner_db: Database) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table a merge or split writes (all tenants and catalogs)."""
    with owner_db.transaction() as conn:
        return {
            table: conn.execute(f"SELECT {columns} FROM resolver.{table} ORDER BY {columns}").fetchall()  # noqa: S608
            for table, columns in _TABLES.items()
        }


@pytest.fixture
def service(catalog: Catalog, manual_catalog: Catalog) -> DecisionService:
    streams = {c.stream.catalog_id: c.stream for c in (catalog, manual_catalog)}
    return DecisionService(
        catalog.resolver_db,
        lambda tenant, catalog_id: streams[catalog_id],
        lambda pin: {},
        clock=catalog.clock,
    )


def _merge(catalog: Catalog, item_id: str, into: str, key: str | None = None) -> MergeItems:
    return MergeItems(catalog.stream.catalog_id, item_id, into, REVIEWER, "same product, two pages", key)


def _split(catalog: Catalog, item_id: str, *listings: str, **extra: Any) -> SplitItem:
    fields: dict[str, Any] = {"title": "Strata P5 2 TB (the other model)", **extra}
    return SplitItem(
        catalog.stream.catalog_id, item_id, listings, actor=REVIEWER, rationale="two products", **fields
    )


def _rows(catalog: Catalog, sql: str, *params: object) -> list[dict[str, Any]]:
    with catalog.owner_db.transaction() as conn:
        return conn.execute(sql, params).fetchall()


def _events(catalog: Catalog, decision_id: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (row["event_type"], row["aggregate_id"], row["body"])
        for row in catalog.outbox()
        if row["decision_id"] == decision_id
    ]


def test_a_merge_remaps_every_listing_retires_the_merged_item_and_releases_the_redirect(
    catalog: Catalog, service: DecisionService
) -> None:
    duplicate = catalog.decide(catalog.create(1, "rec_a"))
    catalog.decide(catalog.map("rec_b", str(duplicate.item_id), source_id="src_bazaar"))
    survivor = catalog.decide(catalog.create(2, "rec_c"))
    loser, kept = str(duplicate.item_id), str(survivor.item_id)

    merged = service.merge_items(_merge(catalog, loser, kept, "merge-1"), catalog.tenant_id)

    assert (merged.item_id, merged.into, merged.revision, merged.replayed) == (loser, kept, 2, False)
    assert len(merged.listings) == 2
    events = _events(catalog, merged.decision_id)
    assert [e[0] for e in events] == [
        "listing_mapping.corrected",
        "listing_mapping.corrected",
        "catalog_item.merged",
        "release.authorized",
    ]
    _, _, merged_event = events[2]
    assert merged_event["payload"]["status"] == "retired"
    assert merged_event["payload"]["merged_into"] == kept
    # docs/events.md: the merge depends on the survivor at its current revision.
    assert merged_event["dependencies"] == [{"type": "catalog_item", "id": kept, "revision": 1}]
    release = events[3][2]["payload"]
    assert release["merged_items"] == [{"item": loser, "revision": 2, "into": kept}]
    assert sorted(entry["item"] for entry in release["listings"]) == [kept, kept]
    assert _rows(catalog, "SELECT DISTINCT item_id FROM resolver.listing_mapping") == [{"item_id": kept}]
    assert _rows(
        catalog, "SELECT status, merged_into FROM resolver.catalog_item WHERE item_id = %s", loser
    ) == [{"status": "retired", "merged_into": kept}]
    assert _rows(catalog, "SELECT merged_into FROM resolver.released_item WHERE item_id = %s", loser) == [
        {"merged_into": kept}
    ]
    decision = _rows(
        catalog, "SELECT action, actor FROM resolver.decision WHERE decision_id = %s", merged.decision_id
    )
    assert decision == [{"action": "merge_items", "actor": REVIEWER}]


def test_after_a_merge_the_merged_items_identifiers_name_the_survivor(
    catalog: Catalog, service: DecisionService
) -> None:
    loser = str(catalog.decide(catalog.create(1)).item_id)
    kept = str(catalog.decide(catalog.create(2)).item_id)

    service.merge_items(_merge(catalog, loser, kept), catalog.tenant_id)

    with catalog.resolver_db.transaction(tenant_id=catalog.tenant_id) as conn:
        match = find_item_by_identifiers(conn, catalog.tenant_id, catalog.stream.catalog_id, gtin=gtin_for(1))
    assert match is not None
    assert (match.item_id, match.status) == (kept, "active")


def test_a_merge_with_the_same_key_replays_and_with_another_body_conflicts(
    catalog: Catalog, service: DecisionService
) -> None:
    loser = str(catalog.decide(catalog.create(1)).item_id)
    kept = str(catalog.decide(catalog.create(2)).item_id)
    first = service.merge_items(_merge(catalog, loser, kept, "merge-1"), catalog.tenant_id)
    before = table_snapshot(catalog.owner_db)

    again = service.merge_items(_merge(catalog, loser, kept, "merge-1"), catalog.tenant_id)

    assert isinstance(again, ItemsMerged)
    assert (again.decision_id, again.replayed, again.events) == (first.decision_id, True, first.events)
    with pytest.raises(IdempotencyConflict):
        service.merge_items(_merge(catalog, kept, loser, "merge-1"), catalog.tenant_id)
    assert table_snapshot(catalog.owner_db) == before


RefusedMerge = Callable[[Catalog, Catalog, dict[str, str]], MergeItems]


@pytest.mark.parametrize(
    ("code", "command"),
    [
        ("MERGE_INTO_SELF", lambda c, m, items: _merge(c, items["a"], items["a"])),
        ("NOT_FOUND", lambda c, m, items: _merge(c, "itm_missing", items["a"])),
        ("NOT_FOUND", lambda c, m, items: _merge(c, items["a"], "itm_missing")),
        ("CROSS_CATALOG", lambda c, m, items: _merge(c, items["a"], items["foreign"])),
        ("CROSS_CATALOG", lambda c, m, items: _merge(c, items["foreign"], items["a"])),
        ("ITEM_RETIRED", lambda c, m, items: _merge(c, items["a"], items["merged"])),
        ("ITEM_RETIRED", lambda c, m, items: _merge(c, items["merged"], items["a"])),
    ],
    ids=[
        "into-itself",
        "unknown-merged",
        "unknown-survivor",
        "foreign-survivor",
        "foreign-merged",
        "into-merged",
        "from-merged",
    ],
)
def test_a_refused_merge_changes_nothing(
    catalog: Catalog, manual_catalog: Catalog, service: DecisionService, code: str, command: RefusedMerge
) -> None:
    items = {
        "a": str(catalog.decide(catalog.create(1)).item_id),
        "b": str(catalog.decide(catalog.create(2)).item_id),
        "merged": str(catalog.decide(catalog.create(3)).item_id),
        "foreign": str(manual_catalog.decide(manual_catalog.create(7, source_id="src_manual")).item_id),
    }
    service.merge_items(_merge(catalog, items["merged"], items["b"]), catalog.tenant_id)
    before = table_snapshot(catalog.owner_db)

    with pytest.raises(DecisionError) as refused:
        service.merge_items(command(catalog, manual_catalog, items), catalog.tenant_id)

    assert refused.value.code == code
    assert table_snapshot(catalog.owner_db) == before


def test_a_merge_into_a_retired_item_is_refused(catalog: Catalog, service: DecisionService) -> None:
    loser = str(catalog.decide(catalog.create(1)).item_id)
    retired = str(catalog.decide(catalog.create(2)).item_id)
    service.retire_item(
        RetireItem(catalog.stream.catalog_id, retired, "operator:op", "gone"), catalog.tenant_id
    )
    before = table_snapshot(catalog.owner_db)

    with pytest.raises(DecisionError) as refused:
        service.merge_items(_merge(catalog, loser, retired), catalog.tenant_id)

    assert refused.value.code == "ITEM_RETIRED"
    assert table_snapshot(catalog.owner_db) == before


def test_a_split_moves_the_chosen_listings_to_a_new_item(catalog: Catalog, service: DecisionService) -> None:
    created = catalog.decide(catalog.create(1, "rec_a"))
    moved = catalog.decide(catalog.map("rec_b", str(created.item_id), source_id="src_bazaar"))
    item_id = str(created.item_id)

    split = service.split_item(
        _split(catalog, item_id, str(moved.listing_id), gtin=gtin_for(9), new_item_id="itm_split_1"),
        catalog.tenant_id,
    )

    assert (split.item_id, split.new_item_id, split.listings) == (item_id, "itm_split_1", (moved.listing_id,))
    events = _events(catalog, split.decision_id)
    assert [e[0] for e in events] == [
        "catalog_item.created",
        "listing_mapping.corrected",
        "release.authorized",
    ]
    created_item = events[0][2]["payload"]
    # The split item's profile and brand, the reviewer's title and identifiers, no attributes.
    assert (created_item["profile"], created_item["brand"]) == ("np_storage@2", "Corvana")
    assert created_item["title"] == "Strata P5 2 TB (the other model)"
    assert created_item["identifiers"] == {"gtin": gtin_for(9), "mpn": None}
    assert events[1][2]["payload"] == {"listing": moved.listing_id, "from": item_id, "item": "itm_split_1"}
    release = events[2][2]["payload"]
    assert [entry["item"] for entry in release["items"]] == ["itm_split_1"]
    assert [(entry["listing"], entry["item"]) for entry in release["listings"]] == [
        (moved.listing_id, "itm_split_1")
    ]
    mappings = _rows(catalog, "SELECT listing_id, item_id FROM resolver.listing_mapping ORDER BY item_id")
    assert {m["listing_id"]: m["item_id"] for m in mappings} == {
        created.listing_id: item_id,
        moved.listing_id: "itm_split_1",
    }


def test_splitting_every_listing_away_leaves_the_item_active_without_listings(
    catalog: Catalog, service: DecisionService
) -> None:
    created = catalog.decide(catalog.create(1))
    item_id = str(created.item_id)

    split = service.split_item(_split(catalog, item_id, str(created.listing_id)), catalog.tenant_id)

    assert _rows(catalog, "SELECT status FROM resolver.catalog_item WHERE item_id = %s", item_id) == [
        {"status": "active"}
    ]
    assert _rows(catalog, "SELECT item_id FROM resolver.listing_mapping") == [{"item_id": split.new_item_id}]


RefusedSplit = Callable[[Catalog, dict[str, str]], SplitItem]


@pytest.mark.parametrize(
    ("code", "command"),
    [
        ("NOTHING_TO_SPLIT", lambda c, ids: _split(c, ids["a"])),
        ("LISTING_NOT_ON_ITEM", lambda c, ids: _split(c, ids["a"], ids["b_listing"])),
        ("LISTING_NOT_ON_ITEM", lambda c, ids: _split(c, ids["a"], "lst_missing")),
        ("NOT_FOUND", lambda c, ids: _split(c, "itm_missing", ids["a_listing"])),
        ("CROSS_CATALOG", lambda c, ids: _split(c, ids["foreign"], ids["a_listing"])),
        ("ITEM_RETIRED", lambda c, ids: _split(c, ids["merged"], ids["a_listing"])),
        ("ITEM_EXISTS", lambda c, ids: _split(c, ids["a"], ids["a_listing"], new_item_id=ids["b"])),
        ("IDENTIFIER_CONFLICT", lambda c, ids: _split(c, ids["a"], ids["a_listing"], gtin=gtin_for(2))),
    ],
    ids=[
        "no-listing",
        "listing-of-another-item",
        "unknown-listing",
        "unknown-item",
        "foreign-item",
        "merged-item",
        "new-id-taken",
        "identifier-taken",
    ],
)
def test_a_refused_split_changes_nothing(
    catalog: Catalog, manual_catalog: Catalog, service: DecisionService, code: str, command: RefusedSplit
) -> None:
    a = catalog.decide(catalog.create(1))
    b = catalog.decide(catalog.create(2))
    merged = catalog.decide(catalog.create(3))
    foreign = manual_catalog.decide(manual_catalog.create(7, source_id="src_manual"))
    service.merge_items(_merge(catalog, str(merged.item_id), str(b.item_id)), catalog.tenant_id)
    ids = {
        "a": str(a.item_id),
        "a_listing": str(a.listing_id),
        "b": str(b.item_id),
        "b_listing": str(b.listing_id),
        "merged": str(merged.item_id),
        "foreign": str(foreign.item_id),
    }
    before = table_snapshot(catalog.owner_db)

    with pytest.raises(DecisionError) as refused:
        service.split_item(command(catalog, ids), catalog.tenant_id)

    assert refused.value.code == code
    assert table_snapshot(catalog.owner_db) == before


def test_on_a_manual_catalog_the_next_release_names_every_merge_of_a_chain(
    manual_catalog: Catalog, service: DecisionService
) -> None:
    catalog = manual_catalog
    a, b, c = (str(catalog.decide(catalog.create(n, source_id="src_manual")).item_id) for n in (1, 2, 3))
    service.merge_items(_merge(catalog, a, b), catalog.tenant_id)
    merged = service.merge_items(_merge(catalog, b, c), catalog.tenant_id)
    # Without a release nothing is published: the merge writes no release.authorized.
    assert [e.type for e in merged.events][-1] == "catalog_item.merged"

    release = service.release(
        AuthorizeRelease(catalog.stream.catalog_id, "operator:op", "publish"), catalog.tenant_id
    )

    ((_, _, body),) = _events(catalog, release.decision_id)
    assert sorted(body["payload"]["merged_items"], key=lambda entry: entry["item"] != a) == [
        {"item": a, "revision": 2, "into": b},
        {"item": b, "revision": 2, "into": c},
    ]
    assert [entry["item"] for entry in body["payload"]["items"]] == [c]
    assert {entry["item"] for entry in body["payload"]["listings"]} == {c}
    dependencies = {(d["id"], d["revision"]) for d in body["dependencies"] if d["type"] == "catalog_item"}
    assert {(a, 2), (b, 2), (c, 1)} <= dependencies

"""AW-04 product consumer apply, one outcome per test (if_accepted_change "Errors"), on a real PostgreSQL as
product_app."""

from __future__ import annotations

import pytest

from prw_platform.db.database import Database
from prw_platform.product.consumer import Outcome, apply_batch, apply_delivery
from prw_platform.product.consumer.apply import recorded_result
from prw_platform.product.errors import (
    PositionConflict,
    SchemaInvalid,
    ScopeNotProjected,
    UnsupportedEventType,
)
from prw_platform.product.events import parse_delivery
from prw_platform.product.scopes import ProjectedScope, project_catalog
from tests.integration.product.tables import (
    contiguous_position,
    inbox_rows,
    item_projection,
    parked_event_ids,
)
from tests.unit.product.stream import CATALOG, EPOCH, TENANT, StreamBuilder


def test_aw04_ready_event_is_applied_with_its_full_state_and_revision(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    created = stream.item("itm_ssd_p5_1t", gtin="04006381333931")

    result = apply_delivery(product_db, created)

    assert result.outcome is Outcome.APPLIED
    assert result.contiguous_position == 1
    row = item_projection(owner_db, "itm_ssd_p5_1t")
    assert row is not None
    assert (row["revision"], row["status"], row["position"]) == (1, "active", 1)
    assert row["fields"] == created["payload"]
    assert inbox_rows(owner_db, created["event_id"]) == [
        {"event_id": created["event_id"], "position": 1, "outcome": "applied"}
    ]


def test_aw04_same_event_twice_is_a_duplicate_with_one_inbox_row_and_unchanged_projection(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    created = stream.item("itm_ssd_p5_1t")
    apply_delivery(product_db, created)
    before = item_projection(owner_db, "itm_ssd_p5_1t")

    again = apply_delivery(product_db, created)

    assert again.outcome is Outcome.IGNORED_DUPLICATE
    assert item_projection(owner_db, "itm_ssd_p5_1t") == before
    assert len(inbox_rows(owner_db, created["event_id"])) == 1
    assert contiguous_position(owner_db) == 1


def test_aw04_revision_at_or_below_the_applied_one_is_ignored_as_stale_and_counts_as_processed(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    first = stream.item("itm_ssd_p5_1t", title="Lumen P5")
    second = stream.item("itm_ssd_p5_1t", title="Lumen P5 (2024)")
    assert apply_delivery(product_db, second).outcome is Outcome.APPLIED

    late = apply_delivery(product_db, first)

    assert late.outcome is Outcome.IGNORED_STALE_REVISION
    row = item_projection(owner_db, "itm_ssd_p5_1t")
    assert row is not None
    assert (row["revision"], row["fields"]["title"]) == (2, "Lumen P5 (2024)")
    assert inbox_rows(owner_db, first["event_id"])[0]["outcome"] == "ignored_stale_revision"
    # if_accepted_change: progress advances through safely ignored stale revisions.
    assert late.contiguous_position == 2


def test_aw04_missing_dependency_parks_the_event_until_the_dependency_applies(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    listing = stream.listing("lst_lum_p5")
    mapping = stream.mapping("lst_lum_p5", "itm_ssd_p5_1t")
    apply_delivery(product_db, listing)

    parked = apply_delivery(product_db, mapping)

    assert parked.outcome is Outcome.PARKED
    assert parked_event_ids(owner_db) == [mapping["event_id"]]
    assert inbox_rows(owner_db, mapping["event_id"])[0]["outcome"] == "parked"

    released = apply_delivery(product_db, item)

    assert released.outcome is Outcome.APPLIED
    assert released.released == (mapping["event_id"],)
    assert parked_event_ids(owner_db) == []
    assert inbox_rows(owner_db, mapping["event_id"])[0]["outcome"] == "applied"
    with owner_db.transaction() as conn:
        mapped = conn.execute("SELECT item_id, revision FROM product.listing_mapping_projection").fetchall()
    assert mapped == [{"item_id": "itm_ssd_p5_1t", "revision": 1}]
    assert released.contiguous_position == 3


def test_aw04_release_cascades_through_two_levels_of_parked_events(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    listing = stream.listing("lst_lum_p5")
    mapping = stream.mapping("lst_lum_p5", "itm_ssd_p5_1t")
    release = stream.release()
    apply_delivery(product_db, listing)
    # The release waits for the mapping, which waits for the item.
    assert apply_delivery(product_db, release).outcome is Outcome.PARKED
    assert apply_delivery(product_db, mapping).outcome is Outcome.PARKED

    result = apply_delivery(product_db, item)

    assert result.released == (mapping["event_id"], release["event_id"])
    assert parked_event_ids(owner_db) == []
    assert result.contiguous_position == 4
    with owner_db.transaction() as conn:
        public = conn.execute("SELECT listing_id, item_id FROM product.public_listing").fetchall()
    assert public == [{"listing_id": "lst_lum_p5", "item_id": "itm_ssd_p5_1t"}]


def test_aw04_event_missing_two_dependencies_parks_again_until_both_are_applied(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    listing = stream.listing("lst_lum_p5")
    mapping = stream.mapping("lst_lum_p5", "itm_ssd_p5_1t")
    assert apply_delivery(product_db, mapping).outcome is Outcome.PARKED

    after_item = apply_delivery(product_db, item)

    assert after_item.released == ()
    assert parked_event_ids(owner_db) == [mapping["event_id"]]
    with owner_db.transaction() as conn:
        waiting = conn.execute("SELECT waiting_for_type, waiting_for_id FROM product.parked_event").fetchone()
    assert waiting == {"waiting_for_type": "listing", "waiting_for_id": "lst_lum_p5"}

    after_listing = apply_delivery(product_db, listing)

    assert after_listing.released == (mapping["event_id"],)
    assert after_listing.contiguous_position == 3


def test_aw04_duplicate_of_a_parked_event_is_a_duplicate_and_keeps_it_parked(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    stream.item("itm_ssd_p5_1t")
    stream.listing("lst_lum_p5")
    mapping = stream.mapping("lst_lum_p5", "itm_ssd_p5_1t")
    apply_delivery(product_db, mapping)

    assert apply_delivery(product_db, mapping).outcome is Outcome.IGNORED_DUPLICATE
    assert parked_event_ids(owner_db) == [mapping["event_id"]]


def test_old_epoch_delivery_is_audited_ignored_and_does_not_advance_progress(
    product_db: Database, owner_db: Database
) -> None:
    restored_epoch = "hep_ten_synth_a_cat_primary_2"
    old = StreamBuilder()
    project_catalog(product_db, TENANT, CATALOG, EPOCH)
    apply_delivery(product_db, old.item("itm_ssd_p5_1t", title="before the restore"))
    # if_projection_bootstrap: a restore issues a new epoch; events of the fenced history are terminally ignored.
    project_catalog(product_db, TENANT, CATALOG, restored_epoch)
    late = old.item("itm_ssd_p5_1t", title="written by a fenced worker")

    first = apply_delivery(product_db, late)
    again = apply_delivery(product_db, late)

    assert first.outcome is Outcome.IGNORED_OLD_EPOCH
    assert again.outcome is Outcome.IGNORED_OLD_EPOCH
    assert first.contiguous_position is None
    row = item_projection(owner_db, "itm_ssd_p5_1t")
    assert row is not None
    assert (row["revision"], row["fields"]["title"]) == (1, "before the restore")
    # Recorded once under its own epoch, never relabeled into the current one.
    with owner_db.transaction() as conn:
        rows = conn.execute(
            "SELECT history_epoch, outcome FROM product.inbox WHERE event_id = %s", (late["event_id"],)
        ).fetchall()
    assert rows == [{"history_epoch": EPOCH, "outcome": "ignored_old_epoch"}]
    assert contiguous_position(owner_db, restored_epoch) == 0
    assert contiguous_position(owner_db, EPOCH) == 1


def test_if_accepted_change_unprojected_catalog_is_rejected_with_scope_not_projected(
    scope: ProjectedScope, product_db: Database, owner_db: Database
) -> None:
    other_catalog = StreamBuilder(catalog_id="cat_unprojected")
    message = other_catalog.item("itm_ssd_p5_1t")

    with pytest.raises(ScopeNotProjected) as raised:
        apply_delivery(product_db, message)

    assert raised.value.code == "SCOPE_NOT_PROJECTED"
    assert raised.value.event_id == message["event_id"]
    assert inbox_rows(owner_db, message["event_id"]) == []


def test_schema_invalid_message_is_rejected_with_schema_invalid_before_any_write(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    message = stream.item("itm_ssd_p5_1t")
    del message["accepted_at"]

    with pytest.raises(SchemaInvalid) as raised:
        apply_delivery(product_db, message)

    assert raised.value.code == "SCHEMA_INVALID"
    assert inbox_rows(owner_db, message["event_id"]) == []


def test_inv03_another_event_at_a_settled_position_is_rejected_as_position_conflict(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    first = stream.item("itm_ssd_p5_1t")
    apply_delivery(product_db, first)
    impostor = StreamBuilder().item("itm_other")
    impostor["event_id"] = "evt_impostor"

    with pytest.raises(PositionConflict):
        apply_delivery(product_db, impostor)

    assert item_projection(owner_db, "itm_other") is None


def test_apply_batch_settles_each_message_and_returns_rejections_for_the_dlq(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    unknown = stream.listing("lst_lum_p5")
    unknown["type"] = "listing.vanished"

    entries = apply_batch(product_db, [item, unknown, item])

    assert [e.result.outcome if e.result else None for e in entries] == [
        Outcome.APPLIED,
        None,
        Outcome.IGNORED_DUPLICATE,
    ]
    assert isinstance(entries[1].rejection, UnsupportedEventType)
    assert entries[1].rejection.code == "UNSUPPORTED_EVENT_TYPE"


def test_if_db_ambiguous_commit_check_finds_the_recorded_outcome_by_inbox_key(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    delivered = stream.item("itm_ssd_p5_1t")
    never_delivered = stream.item("itm_ssd_p5_1t")
    apply_delivery(product_db, delivered)

    with product_db.transaction(tenant_id=TENANT) as conn:
        found = recorded_result(conn, parse_delivery(delivered).change)
        missing = recorded_result(conn, parse_delivery(never_delivered).change)

    assert found is not None
    assert found.outcome is Outcome.APPLIED
    assert missing is None

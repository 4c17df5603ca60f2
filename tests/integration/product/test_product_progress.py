"""AW-04 "Commit contiguous progress": the greatest contiguous processed position, and the lag/parked report."""

from __future__ import annotations

from typing import Any

from prw_platform.db.database import Database
from prw_platform.product.consumer import Outcome, apply_delivery, inbox
from prw_platform.product.progress import stream_progress
from prw_platform.product.scopes import ProjectedScope
from tests.integration.product.tables import contiguous_position
from tests.unit.product.stream import TENANT, StreamBuilder


def _four_items(stream: StreamBuilder) -> list[dict[str, Any]]:
    return [stream.item(f"itm_{n}") for n in range(1, 5)]


def test_progress_stops_at_the_first_gap_and_closes_it_when_the_missing_position_arrives(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    one, two, three, four = _four_items(stream)
    for message in (one, two, four):
        apply_delivery(product_db, message)
    assert contiguous_position(owner_db) == 2

    result = apply_delivery(product_db, three)

    assert result.contiguous_position == 4
    assert contiguous_position(owner_db) == 4


def test_a_parked_position_keeps_the_gap_open_until_it_applies(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    listing = stream.listing("lst_lum_p5")
    mapping = stream.mapping("lst_lum_p5", "itm_ssd_p5_1t")
    later = stream.item("itm_other")
    for message in (item, mapping, later):
        apply_delivery(product_db, message)
    # Position 3 (the mapping) is parked behind position 2: acknowledging it does not close the gap.
    assert contiguous_position(owner_db) == 1

    apply_delivery(product_db, listing)

    assert contiguous_position(owner_db) == 4


def test_a_parked_event_alone_does_not_count_as_processed(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    stream.item("itm_ssd_p5_1t")
    stream.listing("lst_lum_p5")
    mapping = stream.mapping("lst_lum_p5", "itm_ssd_p5_1t")
    # Positions 1 and 2 are missing and position 3 parks: nothing is contiguous yet.
    assert apply_delivery(product_db, mapping).contiguous_position == 0
    assert contiguous_position(owner_db) == 0


def test_duplicates_add_no_positions(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    one, two, _, four = _four_items(stream)
    for message in (one, one, four, four, two, one):
        apply_delivery(product_db, message)
    assert contiguous_position(owner_db) == 2


def test_stream_progress_reports_applied_position_parked_events_and_lag(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    stream.listing("lst_lum_p5")
    mapping = stream.mapping("lst_lum_p5", "itm_ssd_p5_1t")
    later = stream.item("itm_other")
    for message in (item, mapping, later):
        apply_delivery(product_db, message)

    (report,) = stream_progress(product_db, TENANT)

    assert (report.catalog_id, report.history_epoch) == (scope.catalog_id, scope.history_epoch)
    assert report.applied_position == 1
    assert report.received_position == 4
    assert report.parked_count == 1
    assert report.oldest_parked_position == 3
    assert report.oldest_parked_at is not None
    assert report.ignored_old_epoch == 0
    # The resolver committed 4 positions; the projection has processed 1 contiguously.
    assert report.lag(committed_position=4) == 3


def test_stream_progress_of_a_fresh_scope_is_zero_with_nothing_parked(
    scope: ProjectedScope, product_db: Database
) -> None:
    (report,) = stream_progress(product_db, TENANT)
    assert (report.applied_position, report.received_position, report.parked_count) == (0, 0, 0)
    assert report.oldest_parked_position is None
    assert report.oldest_parked_at is None


def test_stream_progress_counts_old_epoch_deliveries_for_the_audit(
    scope: ProjectedScope, product_db: Database
) -> None:
    fenced = StreamBuilder(history_epoch="hep_ten_synth_a_cat_primary_0")
    assert apply_delivery(product_db, fenced.item("itm_ssd_p5_1t")).outcome is Outcome.IGNORED_OLD_EPOCH

    (report,) = stream_progress(product_db, TENANT)

    assert report.ignored_old_epoch == 1
    assert report.applied_position == 0
    assert report.received_position == 0


def test_advance_reads_the_inbox_after_the_current_position_by_one_index_probe(
    scope: ProjectedScope, product_db: Database, owner_db: Database
) -> None:
    """bench/README.md: the page read of ``advance`` goes through the (stream, position) index, so in-order delivery
    reads one inbox row however long the stream already is (the planner once picked ``inbox_by_outcome`` and read
    the stream's whole inbox per step)."""
    with owner_db.transaction() as conn:
        conn.execute(
            """INSERT INTO product.inbox (tenant_id, catalog_id, history_epoch, event_id, position, aggregate_type,
                   aggregate_id, aggregate_revision, outcome)
               SELECT %s, %s, %s, 'evt_' || n, n, 'catalog_item', 'itm_' || n, 1, 'applied'
                 FROM generate_series(1, 5000) AS n""",
            (scope.tenant_id, scope.catalog_id, scope.history_epoch),
        )
        conn.execute("ANALYZE product.inbox")

    with product_db.transaction(tenant_id=TENANT, read_only=True) as conn:
        page = inbox.positions_after(conn, scope, 4_000, 1)
        reads = conn.execute(
            """SELECT seq_scan, idx_scan, idx_tup_fetch FROM pg_stat_xact_user_tables
                WHERE relid = 'product.inbox'::regclass"""
        ).fetchone()

    assert page == [inbox.SettledPosition(4_001, "applied")]
    assert reads == {"seq_scan": 0, "idx_scan": 1, "idx_tup_fetch": 1}

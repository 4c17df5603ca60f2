"""AW-04's inbox probe (``inbox.known``) must cost one index lookup per probed event id and position, whatever the
inbox's statistics say: the inbox grows by every delivery, and a deployment's first statistics are taken while it
is empty (a new stream, too, is not in the last ANALYZE). Counted with ``pg_stat_xact_user_tables.idx_tup_fetch``
in the probe's own transaction: rows the probe's index scans fetched from the inbox."""

from __future__ import annotations

import psycopg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prw_platform.db.database import Database
from prw_platform.product.consumer import inbox
from prw_platform.product.scopes import ProjectedScope

STREAM_ROWS = 3_000
PROBED = 400


def _fill(db_url: str, scope: ProjectedScope) -> None:
    """Statistics taken while the inbox was empty (as after ``prw migrate``), then a stream of rows. TRUNCATE
    first: the module's database is shared, and statistics taken over pages that hold no live row (a test's
    DELETE, which a VACUUM does not always give back) say the table holds no rows at any size, which ties every
    index path at one row (the limit migration 0025 names)."""
    with psycopg.connect(db_url, autocommit=True) as owner:
        owner.execute("TRUNCATE product.inbox")
        owner.execute("ANALYZE product.inbox")
        owner.execute(
            """INSERT INTO product.inbox (tenant_id, catalog_id, history_epoch, generation, event_id, position,
                   aggregate_type, aggregate_id, aggregate_revision, outcome, settled_at)
               SELECT %s, %s, %s, %s, 'evt_known_' || n, n, 'catalog_item', 'itm_' || n, 1, 'applied', now()
                 FROM generate_series(1, %s::bigint) AS n""",
            (scope.tenant_id, scope.catalog_id, scope.history_epoch, scope.serving_generation, STREAM_ROWS),
        )


def _probe(db: Database, scope: ProjectedScope, ids: list[str], positions: list[int]) -> tuple[object, int]:
    def work(conn: psycopg.Connection[dict[str, object]]) -> tuple[object, int]:
        known = inbox.known(conn, scope, ids, positions)
        row = conn.execute(
            "SELECT coalesce(idx_tup_fetch, 0) AS fetched FROM pg_stat_xact_user_tables"
            " WHERE relid = 'product.inbox'::regclass"
        ).fetchone()
        return known, int(row["fetched"]) if row else 0  # type: ignore[call-overload]

    return db.run(work, tenant_id=scope.tenant_id)


def test_the_probe_fetches_no_other_row_of_the_stream_on_an_inbox_analyzed_while_empty(
    db_url: str, product_db: Database, scope: ProjectedScope
) -> None:
    _fill(db_url, scope)
    fresh_ids = [f"evt_fresh_{n}" for n in range(PROBED)]
    fresh_positions = list(range(STREAM_ROWS + 1, STREAM_ROWS + 1 + PROBED))

    known, fetched = _probe(product_db, scope, fresh_ids, fresh_positions)

    assert known == inbox.KnownDeliveries(frozenset(), {})
    # A fresh id or position costs an index lookup that finds nothing: no row fetched (the plan this guards
    # against fetched STREAM_ROWS per probed id).
    assert fetched <= 2 * PROBED, f"{fetched:,} inbox rows fetched for {PROBED} probed ids and positions"


def test_the_probe_still_finds_a_known_id_and_a_taken_position(
    db_url: str, product_db: Database, scope: ProjectedScope
) -> None:
    _fill(db_url, scope)

    known, _ = _probe(product_db, scope, ["evt_known_7", "evt_fresh"], [7, 12])

    assert known.event_ids == frozenset({"evt_known_7", "evt_known_12"})
    assert known.positions == {7: "evt_known_7", 12: "evt_known_12"}


_PARTS = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=10)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tenant=_PARTS,
    catalog=_PARTS,
    epoch=_PARTS,
    generation=st.integers(0, 40_000),
    part=_PARTS | st.integers(1).map(str),
)
def test_the_probed_keys_are_the_keys_the_rows_store(
    owner_db: Database, tenant: str, catalog: str, epoch: str, generation: int, part: str
) -> None:
    """``inbox.stream_key`` (sent as the probe's parameters) spells what migration 0025's ``product.inbox_stream_key``
    stores in ``event_key`` and ``position_key``."""
    stored = owner_db.read_row(
        "SELECT product.inbox_stream_key(%(tenant)s, %(catalog)s, %(epoch)s, %(generation)s, %(part)s) AS key",
        {"tenant": tenant, "catalog": catalog, "epoch": epoch, "generation": generation, "part": part},
        tenant_id=None,
    )
    assert stored == {"key": inbox.stream_key(ProjectedScope(tenant, catalog, epoch, generation), part)}

"""The live consumer's greatest contiguous processed position per stream, and the lag/parked report.

The position advances in the same product transaction as the projection, the inbox outcomes and the parking
(AW-04), and only through processed positions, stale revisions included: an acknowledged parked event or a dead
letter does not close a gap (if_accepted_change). This module owns ``product.progress``; it reads the inbox and
the parked events through ``consumer.inbox``, and the scopes through ``scopes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from psycopg.rows import class_row, scalar_row

from prw_platform.db.database import REPEATABLE_READ, Connection, Database
from prw_platform.product.consumer import inbox
from prw_platform.product.scopes import ProjectedScope, tenant_scopes

#: The live consumer's row in product.progress; a shadow catch-up (rebuild) uses its own (``REBUILD_CONSUMER``).
LIVE_CONSUMER: Final = "product_live"
#: A rebuild's shadow catch-up cursor (if_accepted_change: "Shadow catch-up has a separate cursor and lease; it
#: never advances the live cursor"). One rebuild per stream at a time (``product.rebuild``).
REBUILD_CONSUMER: Final = "product_rebuild"

#: Inbox rows read per step of ``advance``.
_ADVANCE_PAGE: Final = 500

#: Outcomes that settle a position: it never needs to be delivered again for the projection to be complete.
PROCESSED_OUTCOMES: Final = ("applied", "ignored_stale_revision")


def lock_stream(conn: Connection, scope: ProjectedScope, consumer: str = LIVE_CONSUMER) -> int:
    """Take the stream's progress row FOR UPDATE and return the contiguous position.

    Deliveries of one stream apply one at a time: otherwise an event parked in one transaction could miss the
    release by its dependency committing concurrently in another, and two concurrent commits could each leave
    the other's position out of the contiguous run."""
    conn.execute(
        """INSERT INTO product.progress (tenant_id, catalog_id, history_epoch, consumer)
           VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING""",
        (scope.tenant_id, scope.catalog_id, scope.history_epoch, consumer),
    )
    position: int | None = (
        conn.cursor(row_factory=scalar_row)
        .execute(
            """SELECT contiguous_position FROM product.progress
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s
               FOR UPDATE""",
            (scope.tenant_id, scope.catalog_id, scope.history_epoch, consumer),
        )
        .fetchone()
    )
    assert position is not None
    return position


def contiguous_position(
    db: Database, tenant_id: str, catalog_id: str, history_epoch: str, consumer: str = LIVE_CONSUMER
) -> int:
    """The consumer's committed contiguous position of the stream (0 before its first delivery)."""

    def read(conn: Connection) -> int:
        position: int | None = (
            conn.cursor(row_factory=scalar_row)
            .execute(
                """SELECT contiguous_position FROM product.progress
                   WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s""",
                (tenant_id, catalog_id, history_epoch, consumer),
            )
            .fetchone()
        )
        return position or 0

    return db.run(read, tenant_id=tenant_id, read_only=True)


def advance(conn: Connection, scope: ProjectedScope, current: int, consumer: str = LIVE_CONSUMER) -> int:
    """Advance through every following position the inbox records as processed; stop at the first gap.

    Reads the inbox rows after ``current`` in position order, a bounded page at a time (``inbox.positions_after``:
    one index probe per page, so apply does not slow down as the stream grows). In-order delivery reads one row;
    the cost is the advance, not the backlog behind a gap."""
    through = current
    while True:
        # The consecutive run after ``through``; a short page ends at a gap (or the end of the inbox).
        page = inbox.positions_after(conn, scope, through, _ADVANCE_PAGE)
        for settled in page:
            if settled.position != through + 1 or settled.outcome not in PROCESSED_OUTCOMES:
                break
            through += 1
        else:
            if len(page) == _ADVANCE_PAGE:
                continue  # the whole page was contiguous: read the next one
        break
    if through > current:
        conn.execute(
            """UPDATE product.progress SET contiguous_position = %s, updated_at = now()
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s""",
            (through, scope.tenant_id, scope.catalog_id, scope.history_epoch, consumer),
        )
    return through


def start_cursor(conn: Connection, scope: ProjectedScope, consumer: str, position: int) -> None:
    """Set ``consumer``'s cursor of the stream to ``position`` (a shadow load's W: its starting contiguous
    applied position), creating the row if needed."""
    conn.execute(
        """INSERT INTO product.progress (tenant_id, catalog_id, history_epoch, consumer, contiguous_position)
           VALUES (%s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, history_epoch, consumer)
           DO UPDATE SET contiguous_position = excluded.contiguous_position, updated_at = now()""",
        (scope.tenant_id, scope.catalog_id, scope.history_epoch, consumer, position),
    )


def cut_over_cursor(conn: Connection, scope: ProjectedScope, position: int) -> None:
    """if_projection_bootstrap cutover: the durable live cursor becomes H and the shadow cursor is dropped, in the
    caller's transaction (the one that swaps the serving generation). ``reported_position`` is kept: what retention
    control acknowledged stays acknowledged (reports are monotonic), and the live cursor never goes below it."""
    lock_stream(conn, scope, LIVE_CONSUMER)
    conn.execute(
        """UPDATE product.progress SET contiguous_position = %s, updated_at = now()
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s""",
        (position, scope.tenant_id, scope.catalog_id, scope.history_epoch, LIVE_CONSUMER),
    )
    drop_cursor(conn, scope, REBUILD_CONSUMER)


def drop_cursor(conn: Connection, scope: ProjectedScope, consumer: str) -> None:
    conn.execute(
        """DELETE FROM product.progress
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s""",
        (scope.tenant_id, scope.catalog_id, scope.history_epoch, consumer),
    )


def live_position(conn: Connection, scope: ProjectedScope) -> int:
    """The live cursor in the caller's transaction (0 without a row)."""
    position: int | None = (
        conn.cursor(row_factory=scalar_row)
        .execute(
            """SELECT contiguous_position FROM product.progress
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s""",
            (scope.tenant_id, scope.catalog_id, scope.history_epoch, LIVE_CONSUMER),
        )
        .fetchone()
    )
    return position or 0


@dataclass(frozen=True, slots=True)
class StreamProgress:
    """The product projection of one stream, for the Dagster assets and checks (INV-08 as lag)."""

    tenant_id: str
    catalog_id: str
    history_epoch: str
    #: The greatest contiguous processed position (durable, committed with the projection).
    applied_position: int
    #: The highest position delivered so far in this epoch (processed, parked or not).
    received_position: int
    parked_count: int
    oldest_parked_position: int | None
    oldest_parked_at: datetime | None
    #: Deliveries stamped with another epoch, audited in the inbox and terminally ignored.
    ignored_old_epoch: int
    #: When the oldest delivery waiting behind the first gap arrived; None when no gap is open.
    gap_opened_at: datetime | None = None

    def gap_age_seconds(self, now: datetime) -> float:
        """How long the stream's first gap has been open (0 without one): the gap closer fetches the missing
        positions from the export stream once this passes ``PRW_GAP_FETCH_AFTER_SECONDS``."""
        return 0.0 if self.gap_opened_at is None else max(0.0, (now - self.gap_opened_at).total_seconds())

    def lag(self, committed_position: int) -> int:
        """Positions the resolver committed that this projection has not processed contiguously."""
        return max(0, committed_position - self.applied_position)


def stream_progress(db: Database, tenant_id: str) -> list[StreamProgress]:
    """One row per projected catalog of the tenant, for its current history epoch.

    The scopes, the progress rows and the inbox are read through their owners in one REPEATABLE READ snapshot,
    so the figures of a stream agree with each other."""

    def work(conn: Connection) -> list[StreamProgress]:
        applied = _applied_positions(conn, tenant_id)
        report: list[StreamProgress] = []
        for scope in tenant_scopes(conn, tenant_id):
            backlog = inbox.stream_backlog(conn, scope)
            contiguous = applied.get((scope.catalog_id, scope.history_epoch), 0)
            report.append(
                StreamProgress(
                    tenant_id=scope.tenant_id,
                    catalog_id=scope.catalog_id,
                    history_epoch=scope.history_epoch,
                    applied_position=contiguous,
                    received_position=backlog.received_position,
                    parked_count=backlog.parked_count,
                    oldest_parked_position=backlog.oldest_parked_position,
                    oldest_parked_at=backlog.oldest_parked_at,
                    ignored_old_epoch=backlog.ignored_old_epoch,
                    gap_opened_at=inbox.gap_opened_at(conn, scope, contiguous),
                )
            )
        return report

    return db.run(work, tenant_id=tenant_id, isolation=REPEATABLE_READ, read_only=True)


@dataclass(frozen=True, slots=True)
class _AppliedPosition:
    catalog_id: str
    history_epoch: str
    contiguous_position: int


def _applied_positions(conn: Connection, tenant_id: str) -> dict[tuple[str, str], int]:
    """The live consumer's contiguous position per (catalog, epoch) of the tenant."""
    rows = (
        conn.cursor(row_factory=class_row(_AppliedPosition))
        .execute(
            """SELECT catalog_id, history_epoch, contiguous_position FROM product.progress
               WHERE tenant_id = %s AND consumer = %s""",
            (tenant_id, LIVE_CONSUMER),
        )
        .fetchall()
    )
    return {(row.catalog_id, row.history_epoch): row.contiguous_position for row in rows}


# -- Reports to resolver retention control (``retention_report``). ---------------------------------------------


@dataclass(frozen=True, slots=True)
class UnreportedProgress:
    """A stream whose durable contiguous position is above what retention control last acknowledged."""

    tenant_id: str
    catalog_id: str
    history_epoch: str
    contiguous_position: int
    reported_position: int


def unreported(db: Database, limit: int) -> list[UnreportedProgress]:
    """The live consumer's streams with progress not yet reported, every tenant (``prw_operator``, read-only)."""

    def read(conn: Connection) -> list[UnreportedProgress]:
        with conn.cursor(row_factory=class_row(UnreportedProgress)) as cur:
            return cur.execute(
                """SELECT tenant_id, catalog_id, history_epoch, contiguous_position, reported_position
                   FROM product.progress
                   WHERE consumer = %s AND contiguous_position > reported_position
                   ORDER BY tenant_id, catalog_id, history_epoch
                   LIMIT %s""",
                (LIVE_CONSUMER, limit),
            ).fetchall()

    return db.run(read, read_only=True)


def mark_reported(db: Database, tenant_id: str, catalog_id: str, history_epoch: str, position: int) -> None:
    """Remember (monotonically) that retention control acknowledged ``position`` of the stream."""
    db.run(
        lambda conn: conn.execute(
            """UPDATE product.progress SET reported_position = GREATEST(reported_position, %s)
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s""",
            (position, tenant_id, catalog_id, history_epoch, LIVE_CONSUMER),
        ),
        tenant_id=tenant_id,
    )

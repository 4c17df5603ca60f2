"""The live consumer's greatest contiguous processed position per stream, and the lag/parked report.

AW-04 "Commit contiguous progress": the position advances in the same product transaction as the projection,
the inbox outcomes and the parking. if_accepted_change: "Durable progress advances only through every processed
position, including safely ignored stale revisions. A DLQ entry or an ACK of a parked event does not close a
gap." This module owns ``product.progress``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from prw_platform.db.database import Connection, Database
from prw_platform.product.scopes import ProjectedScope

#: The live consumer's row in product.progress; a shadow catch-up (rebuild) will use its own name.
LIVE_CONSUMER: Final = "product_live"

#: Inbox rows read per step of ``advance``.
_ADVANCE_PAGE: Final = 500

#: Outcomes that settle a position: it never needs to be delivered again for the projection to be complete.
PROCESSED_OUTCOMES: Final = ("applied", "ignored_stale_revision")


def lock_stream(conn: Connection, scope: ProjectedScope) -> int:
    """Take the stream's progress row FOR UPDATE and return the contiguous position.

    Deliveries of one stream apply one at a time: otherwise an event parked in one transaction could miss the
    release by its dependency committing concurrently in another, and two concurrent commits could each leave
    the other's position out of the contiguous run."""
    conn.execute(
        """INSERT INTO product.progress (tenant_id, catalog_id, history_epoch, consumer)
           VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING""",
        (scope.tenant_id, scope.catalog_id, scope.history_epoch, LIVE_CONSUMER),
    )
    row = conn.execute(
        """SELECT contiguous_position FROM product.progress
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s
           FOR UPDATE""",
        (scope.tenant_id, scope.catalog_id, scope.history_epoch, LIVE_CONSUMER),
    ).fetchone()
    assert row is not None
    return int(str(row["contiguous_position"]))


def advance(conn: Connection, scope: ProjectedScope, current: int) -> int:
    """Advance through every following position the inbox records as processed; stop at the first gap.

    Reads the inbox rows after ``current`` in position order, a bounded page at a time, through the (stream,
    position) unique index (ORDER BY position + LIMIT pins that index: an equality probe inside a recursive query
    was planned on another inbox index and read the whole stream's inbox per step, so apply slowed down as the
    stream grew). In-order delivery reads one row; the cost is the advance, not the backlog behind a gap."""
    through = current
    while True:
        rows = conn.execute(
            """SELECT position, outcome FROM product.inbox
                WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND position > %s
                ORDER BY position LIMIT %s""",
            (scope.tenant_id, scope.catalog_id, scope.history_epoch, through, _ADVANCE_PAGE),
        ).fetchall()
        for row in rows:
            if int(str(row["position"])) != through + 1 or row["outcome"] not in PROCESSED_OUTCOMES:
                break
            through += 1
        else:
            if len(rows) == _ADVANCE_PAGE:
                continue  # the whole page was contiguous: read the next one
        break
    if through > current:
        conn.execute(
            """UPDATE product.progress SET contiguous_position = %s, updated_at = now()
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s""",
            (through, scope.tenant_id, scope.catalog_id, scope.history_epoch, LIVE_CONSUMER),
        )
    return through


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

    def lag(self, committed_position: int) -> int:
        """Positions the resolver committed that this projection has not processed contiguously."""
        return max(0, committed_position - self.applied_position)


def stream_progress(db: Database, tenant_id: str) -> list[StreamProgress]:
    """One row per projected catalog of the tenant, for its current history epoch."""

    def work(conn: Connection) -> list[StreamProgress]:
        rows = conn.execute(
            """SELECT s.tenant_id, s.catalog_id, s.history_epoch,
                      coalesce(p.contiguous_position, 0) AS applied_position,
                      (SELECT coalesce(max(i.position), 0) FROM product.inbox i
                        WHERE i.tenant_id = s.tenant_id AND i.catalog_id = s.catalog_id
                          AND i.history_epoch = s.history_epoch) AS received_position,
                      parked.n AS parked_count, parked.oldest_position, parked.oldest_at,
                      (SELECT count(*) FROM product.inbox i
                        WHERE i.tenant_id = s.tenant_id AND i.catalog_id = s.catalog_id
                          AND i.outcome = 'ignored_old_epoch') AS ignored_old_epoch
                 FROM product.projected_scope s
                 LEFT JOIN product.progress p
                   ON p.tenant_id = s.tenant_id AND p.catalog_id = s.catalog_id
                  AND p.history_epoch = s.history_epoch AND p.consumer = %s
                 CROSS JOIN LATERAL (
                     SELECT count(*) AS n, min(e.position) AS oldest_position, min(e.parked_at) AS oldest_at
                       FROM product.parked_event e
                      WHERE e.tenant_id = s.tenant_id AND e.catalog_id = s.catalog_id
                        AND e.history_epoch = s.history_epoch
                 ) parked
                WHERE s.tenant_id = %s
                ORDER BY s.catalog_id""",
            (LIVE_CONSUMER, tenant_id),
        ).fetchall()
        return [_progress(row) for row in rows]

    return db.run(work, tenant_id=tenant_id, read_only=True)


def _progress(row: dict[str, object]) -> StreamProgress:
    oldest_position = row["oldest_position"]
    oldest_at = row["oldest_at"]
    return StreamProgress(
        tenant_id=str(row["tenant_id"]),
        catalog_id=str(row["catalog_id"]),
        history_epoch=str(row["history_epoch"]),
        applied_position=int(str(row["applied_position"])),
        received_position=int(str(row["received_position"])),
        parked_count=int(str(row["parked_count"])),
        oldest_parked_position=int(str(oldest_position)) if oldest_position is not None else None,
        oldest_parked_at=oldest_at if isinstance(oldest_at, datetime) else None,
        ignored_old_epoch=int(str(row["ignored_old_epoch"])),
    )

"""The product inbox and the parked events (AW-04). This module owns ``product.inbox`` and ``product.parked_event``.

if_accepted_change: "Dedupe on tenant/catalog/history_epoch/event_id." The inbox row records how a delivery was
settled; a parked event keeps its inbox row (outcome ``parked``) and its full message in ``parked_event`` until the
dependency it waits for applies. ``progress`` reads both through the functions at the end of this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import errors as pgerrors
from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import AcceptedChange
from prw_platform.db.database import Connection
from prw_platform.product.consumer.outcomes import Outcome
from prw_platform.product.errors import PositionConflict
from prw_platform.product.events import AggregateKey, ProductEvent, Requirement
from prw_platform.product.scopes import ProjectedScope


def record_old_epoch(conn: Connection, change: AcceptedChange) -> None:
    """if_projection_bootstrap: "Audit and terminally ignore old-epoch deliveries." The row is keyed by the
    event's own epoch, so it never touches the current epoch's positions or progress."""
    conn.execute(
        """INSERT INTO product.inbox (tenant_id, catalog_id, history_epoch, event_id, position, aggregate_type,
               aggregate_id, aggregate_revision, outcome, settled_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 'ignored_old_epoch', now())
           ON CONFLICT DO NOTHING""",
        (
            change.tenant_id,
            change.catalog_id,
            change.history_epoch,
            change.event_id,
            change.sequence,
            change.aggregate.type,
            change.aggregate.id,
            change.aggregate.revision,
        ),
    )


def insert(conn: Connection, scope: ProjectedScope, event: ProductEvent, outcome: Outcome) -> bool:
    """AW-04: INSERT inbox ON CONFLICT DO NOTHING. False means the event was delivered before (a duplicate)."""
    try:
        row = conn.execute(
            """INSERT INTO product.inbox (tenant_id, catalog_id, history_epoch, event_id, position,
                   aggregate_type, aggregate_id, aggregate_revision, outcome, settled_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, CASE WHEN %s THEN NULL ELSE now() END)
               ON CONFLICT (tenant_id, catalog_id, history_epoch, event_id) DO NOTHING
               RETURNING 1 AS inserted""",
            (
                scope.tenant_id,
                scope.catalog_id,
                scope.history_epoch,
                event.event_id,
                event.position,
                event.aggregate.type,
                event.aggregate.id,
                event.revision,
                outcome.value,
                outcome is Outcome.PARKED,
            ),
        ).fetchone()
    except pgerrors.UniqueViolation as exc:
        raise PositionConflict(
            f"position {event.position} of {scope.catalog_id}/{scope.history_epoch} belongs to another event",
            event_id=event.event_id,
        ) from exc
    return row is not None


def settle(conn: Connection, scope: ProjectedScope, event_id: str, outcome: Outcome) -> None:
    """A released parked event is settled as applied or, if a later revision won meanwhile, as stale."""
    conn.execute(
        """UPDATE product.inbox SET outcome = %s, settled_at = now()
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND event_id = %s""",
        (outcome.value, scope.tenant_id, scope.catalog_id, scope.history_epoch, event_id),
    )


def recorded_outcome(conn: Connection, change: AcceptedChange) -> Outcome | None:
    outcome: str | None = (
        conn.cursor(row_factory=scalar_row)
        .execute(
            """SELECT outcome FROM product.inbox
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND event_id = %s""",
            (change.tenant_id, change.catalog_id, change.history_epoch, change.event_id),
        )
        .fetchone()
    )
    return Outcome(outcome) if outcome is not None else None


def park(conn: Connection, scope: ProjectedScope, event: ProductEvent, waiting_for: Requirement) -> None:
    conn.execute(
        """INSERT INTO product.parked_event (tenant_id, catalog_id, history_epoch, event_id, position,
               waiting_for_type, waiting_for_id, waiting_for_revision, event)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.history_epoch,
            event.event_id,
            event.position,
            waiting_for.aggregate.type,
            waiting_for.aggregate.id,
            waiting_for.revision,
            Jsonb(event.change.model_dump(mode="json")),
        ),
    )


@dataclass(frozen=True, slots=True)
class ParkedEvent:
    position: int
    message: dict[str, Any]


def unpark_ready(
    conn: Connection, scope: ProjectedScope, aggregate: AggregateKey, revision: int
) -> list[ParkedEvent]:
    """Remove and return, in position order, the events waiting for ``aggregate`` at ``revision`` or lower."""
    parked = (
        conn.cursor(row_factory=class_row(ParkedEvent))
        .execute(
            """DELETE FROM product.parked_event
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s
                 AND waiting_for_type = %s AND waiting_for_id = %s AND waiting_for_revision <= %s
               RETURNING position, event AS message""",
            (scope.tenant_id, scope.catalog_id, scope.history_epoch, aggregate.type, aggregate.id, revision),
        )
        .fetchall()
    )
    return sorted(parked, key=lambda p: p.position)


# --- what ``progress`` reads: the contiguous walk and the lag/parked report ----------------------------------


@dataclass(frozen=True, slots=True)
class SettledPosition:
    position: int
    #: An ``Outcome`` value, as stored.
    outcome: str


def positions_after(conn: Connection, scope: ProjectedScope, after: int, limit: int) -> list[SettledPosition]:
    """The stream's next ``limit`` inbox rows after position ``after``, in position order (``progress.advance``).

    ORDER BY position + LIMIT pins the (stream, position) unique index, so in-order delivery reads one row: an
    equality probe inside a recursive query was planned on ``inbox_by_outcome`` and read the whole stream's inbox
    per step (bench/README.md)."""
    return (
        conn.cursor(row_factory=class_row(SettledPosition))
        .execute(
            """SELECT position, outcome FROM product.inbox
                WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND position > %s
                ORDER BY position LIMIT %s""",
            (scope.tenant_id, scope.catalog_id, scope.history_epoch, after, limit),
        )
        .fetchall()
    )


@dataclass(frozen=True, slots=True)
class StreamBacklog:
    """What the inbox holds for one stream, for the progress report."""

    #: The highest position delivered so far in the scope's epoch (processed, parked or not).
    received_position: int
    parked_count: int
    oldest_parked_position: int | None
    oldest_parked_at: datetime | None
    #: Deliveries of the catalog stamped with another epoch, audited and terminally ignored.
    ignored_old_epoch: int


def stream_backlog(conn: Connection, scope: ProjectedScope) -> StreamBacklog:
    backlog = (
        conn.cursor(row_factory=class_row(StreamBacklog))
        .execute(
            """SELECT (SELECT coalesce(max(i.position), 0) FROM product.inbox i
                        WHERE i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s
                          AND i.history_epoch = %(epoch)s) AS received_position,
                      count(*) AS parked_count,
                      min(e.position) AS oldest_parked_position,
                      min(e.parked_at) AS oldest_parked_at,
                      (SELECT count(*) FROM product.inbox i
                        WHERE i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s
                          AND i.outcome = 'ignored_old_epoch') AS ignored_old_epoch
                 FROM product.parked_event e
                WHERE e.tenant_id = %(tenant)s AND e.catalog_id = %(catalog)s AND e.history_epoch = %(epoch)s""",
            {"tenant": scope.tenant_id, "catalog": scope.catalog_id, "epoch": scope.history_epoch},
        )
        .fetchone()
    )
    assert backlog is not None  # an aggregate without GROUP BY returns one row
    return backlog

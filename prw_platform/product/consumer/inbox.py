"""The product inbox and the parked events (AW-04). This module owns ``product.inbox`` and ``product.parked_event``.

if_accepted_change: "Dedupe on tenant/catalog/history_epoch/event_id." The inbox row records how a delivery was
settled; a parked event keeps its inbox row (outcome ``parked``) and its full message in ``parked_event`` until the
dependency it waits for applies. ``progress`` reads both through the functions at the end of this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from psycopg.rows import class_row, scalar_row

from prw_platform.contracts import AcceptedChange
from prw_platform.db.arrays import int_array, text_array
from prw_platform.db.database import Connection
from prw_platform.product.consumer.outcomes import Outcome
from prw_platform.product.events import AggregateKey, ProductEvent, Requirement
from prw_platform.product.scopes import ProjectedScope


def record_old_epoch(conn: Connection, change: AcceptedChange) -> None:
    """if_projection_bootstrap: "Audit and terminally ignore old-epoch deliveries." The row is keyed by the
    event's own epoch, so it never touches the current epoch's positions or progress; its generation is 0 (no
    projection generation), so it is recorded once whatever generation serves and no cleanup removes it."""
    conn.execute(
        """INSERT INTO product.inbox (tenant_id, catalog_id, history_epoch, generation, event_id, position,
               aggregate_type, aggregate_id, aggregate_revision, outcome, settled_at)
           VALUES (%s, %s, %s, 0, %s, %s, %s, %s, %s, 'ignored_old_epoch', now())
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


@dataclass(frozen=True, slots=True)
class KnownDeliveries:
    """What the inbox already holds of a batch: its event ids, and who holds its positions."""

    event_ids: frozenset[str]
    #: position -> the event id recorded there
    positions: dict[int, str]


@dataclass(frozen=True, slots=True)
class _InboxKey:
    event_id: str
    position: int


def known(
    conn: Connection, scope: ProjectedScope, event_ids: Sequence[str], positions: Sequence[int]
) -> KnownDeliveries:
    """AW-04 inbox check for a whole batch in one probe (the stream is locked by the caller, so nothing of it
    commits meanwhile): a known event id is a duplicate; a known position under another id is INV-03's
    POSITION_CONFLICT."""
    # One index lookup per probed key (a LATERAL join on unnest; its LIMIT keeps the planner from flattening it
    # into a plain join, which it plans as a hash join over the stream), so that the plan cannot depend on
    # statistics that lag a fast-growing inbox. ``= ANY(...)`` on the unique indexes' last column was planned as an
    # index scan on the stream's prefix with a filter (statistics said the stream had one row), reading the whole
    # stream's inbox for every batch (bench/README.md, "Apply under disorder"). For the same reason both
    # halves compare the inbox's ``event_key`` / ``position_key`` (migration 0025), not equalities on the stream and
    # the id or position: those made each unique index's exact match tie with a scan of the other unique index's
    # stream prefix on an inbox whose statistics were taken while it was empty, and a tie may go either way (the
    # whole stream fetched per probed key; tests/integration/product/test_inbox_probe_plan.py counts the rows).
    cursor = conn.cursor(row_factory=class_row(_InboxKey))
    rows = cursor.execute(
        """SELECT i.event_id, i.position FROM unnest(%(event_keys)s::text[]) AS probe(key)
           CROSS JOIN LATERAL (
               SELECT event_id, position FROM product.inbox WHERE event_key = probe.key LIMIT 1) AS i
           UNION
           SELECT i.event_id, i.position FROM unnest(%(position_keys)s::text[]) AS probe(key)
           CROSS JOIN LATERAL (
               SELECT event_id, position FROM product.inbox WHERE position_key = probe.key LIMIT 1) AS i""",
        {
            "event_keys": text_array(stream_key(scope, event_id) for event_id in event_ids),
            "position_keys": text_array(stream_key(scope, str(position)) for position in positions),
        },
    ).fetchall()
    return KnownDeliveries(frozenset(r.event_id for r in rows), {r.position: r.event_id for r in rows})


def stream_key(scope: ProjectedScope, part: str) -> str:
    """The inbox's ``event_key`` (``part``: an event id) or ``position_key`` (a position) of ``scope``'s stream, as
    migration 0025's ``product.inbox_stream_key`` spells it when the row is written (a test compares the two).
    Sent as a parameter: a condition calling that SQL function on the probed value is not used as an index
    condition under row-level security on PostgreSQL 15 (the function is not leakproof)."""
    parts = (scope.tenant_id, scope.catalog_id, scope.history_epoch)
    return "".join(f"{len(p)}:{p}" for p in parts) + f"{scope.serving_generation}:{part}"


def insert_settled(
    conn: Connection, scope: ProjectedScope, deliveries: Sequence[tuple[ProductEvent, Outcome]]
) -> None:
    """AW-04 "Inbox insert", set-based: one row per fresh event with its outcome (a parked one stays unsettled).
    The caller screened the batch with ``known`` under the stream lock, so a conflict here is a bug and fails
    the transaction."""
    if not deliveries:
        return
    conn.execute(
        """INSERT INTO product.inbox (tenant_id, catalog_id, history_epoch, generation, event_id, position,
               aggregate_type, aggregate_id, aggregate_revision, outcome, settled_at)
           SELECT %s, %s, %s, %s, e, p, t, i, r, o, CASE WHEN o = 'parked' THEN NULL ELSE now() END
             FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::bigint[], %s::text[])
                  AS u(e, p, t, i, r, o)""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.history_epoch,
            scope.serving_generation,
            text_array(event.event_id for event, _ in deliveries),
            int_array(event.position for event, _ in deliveries),
            text_array(event.aggregate.type for event, _ in deliveries),
            text_array(event.aggregate.id for event, _ in deliveries),
            int_array(event.revision for event, _ in deliveries),
            text_array(outcome.value for _, outcome in deliveries),
        ),
    )


def settle_many(conn: Connection, scope: ProjectedScope, outcomes: Mapping[str, Outcome]) -> None:
    """Released parked events of earlier transactions, settled as applied or, if a later revision won
    meanwhile, as stale."""
    if not outcomes:
        return
    # One UPDATE by event key per event (a few per batch), sent as one pipeline: an UPDATE joined with unnest()
    # is planned as a hash join over the stream's whole inbox while its statistics lag, and equalities on the stream
    # and the id may tie with a scan of the position key's stream prefix (``known``).
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE product.inbox SET outcome = %s, settled_at = now() WHERE event_key = %s",
            [(outcome.value, stream_key(scope, event_id)) for event_id, outcome in outcomes.items()],
        )


def recorded_outcome(conn: Connection, change: AcceptedChange) -> Outcome | None:
    outcome: str | None = (
        conn.cursor(row_factory=scalar_row)
        .execute(
            """SELECT outcome FROM product.inbox
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND event_id = %s
               ORDER BY generation DESC LIMIT 1""",
            (change.tenant_id, change.catalog_id, change.history_epoch, change.event_id),
        )
        .fetchone()
    )
    return Outcome(outcome) if outcome is not None else None


def park_many(
    conn: Connection, scope: ProjectedScope, parked: Sequence[tuple[ProductEvent, Requirement]]
) -> None:
    """AW-04 "park the event (parked row)": the full message, and the aggregate revision it waits for."""
    if not parked:
        return
    conn.execute(
        """INSERT INTO product.parked_event (tenant_id, catalog_id, history_epoch, generation, event_id, position,
               waiting_for_type, waiting_for_id, waiting_for_revision, event)
           SELECT %s, %s, %s, %s, e, p, t, i, r, m::jsonb
             FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::bigint[], %s::text[])
                  AS u(e, p, t, i, r, m)""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.history_epoch,
            scope.serving_generation,
            text_array(event.event_id for event, _ in parked),
            int_array(event.position for event, _ in parked),
            text_array(req.aggregate.type for _, req in parked),
            text_array(req.aggregate.id for _, req in parked),
            int_array(req.revision for _, req in parked),
            text_array(event.change.model_dump_json() for event, _ in parked),
        ),
    )


@dataclass(frozen=True, slots=True)
class ParkedEvent:
    position: int
    waiting_for_type: str
    waiting_for_id: str
    waiting_for_revision: int
    message: dict[str, Any]

    @property
    def waiting_for(self) -> Requirement:
        return Requirement(
            AggregateKey(self.waiting_for_type, self.waiting_for_id), self.waiting_for_revision
        )


def parked_waiting_for(
    conn: Connection, scope: ProjectedScope, ranges: Mapping[AggregateKey, tuple[int, int]]
) -> list[ParkedEvent]:
    """The stored parked events waiting for each aggregate at a revision in its range ``(after, through]``, in
    position order. A batch asks only for what it could release: the revisions its own events (and what they
    release) bring the aggregate to; a parked event waiting for a later revision stays where it is, unread. The
    caller deletes the ones it takes up (``delete_parked``) in the same transaction."""
    probes = sorted(
        (a.type, a.id, after, through) for a, (after, through) in ranges.items() if through > after
    )
    if not probes:
        return []
    # One range scan of parked_event_waiting per probed aggregate: a LATERAL join on unnest, fenced by OFFSET 0 so
    # the planner cannot flatten it into a hash join over the stream's parked rows.
    return (
        conn.cursor(row_factory=class_row(ParkedEvent))
        .execute(
            """SELECT p.position, p.waiting_for_type, p.waiting_for_id, p.waiting_for_revision, p.message
                 FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::bigint[]) AS probe(t, i, after, through)
                 CROSS JOIN LATERAL (
                     SELECT position, waiting_for_type, waiting_for_id, waiting_for_revision, event AS message
                       FROM product.parked_event
                      WHERE tenant_id = %s AND catalog_id = %s AND generation = %s AND history_epoch = %s
                        AND waiting_for_type = probe.t AND waiting_for_id = probe.i
                        AND waiting_for_revision > probe.after AND waiting_for_revision <= probe.through
                     OFFSET 0) AS p
                ORDER BY p.position""",
            (
                text_array(t for t, _, _, _ in probes),
                text_array(i for _, i, _, _ in probes),
                int_array(after for _, _, after, _ in probes),
                int_array(through for _, _, _, through in probes),
                scope.tenant_id,
                scope.catalog_id,
                scope.serving_generation,
                scope.history_epoch,
            ),
        )
        .fetchall()
    )


def delete_parked(conn: Connection, scope: ProjectedScope, event_ids: Sequence[str]) -> None:
    if not event_ids:
        return
    conn.execute(
        """DELETE FROM product.parked_event
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND generation = %s
             AND event_id = ANY(%s::text[])""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.history_epoch,
            scope.serving_generation,
            text_array(event_ids),
        ),
    )


# --- what ``progress`` reads: the contiguous walk and the lag/parked report ----------------------------------


@dataclass(frozen=True, slots=True)
class SettledPosition:
    position: int
    #: An ``Outcome`` value, as stored.
    outcome: str


def positions_after(conn: Connection, scope: ProjectedScope, after: int, limit: int) -> list[SettledPosition]:
    """Of the stream's next ``limit`` inbox rows after position ``after``, the run of consecutive positions
    ``after + 1, after + 2, ...``, in position order (``progress.advance``): fewer than ``limit`` rows means the
    run stopped at a gap within the page.

    ORDER BY position + LIMIT pins the (stream, position) unique index, so in-order delivery reads one row: an
    equality probe inside a recursive query was planned on ``inbox_by_outcome`` and read the whole stream's inbox
    per step (bench/README.md). The rows behind the first gap are left on the server: under disorder the gap is
    usually right after ``after`` and the page would otherwise carry ``limit`` rows nobody uses."""
    return (
        conn.cursor(row_factory=class_row(SettledPosition))
        .execute(
            """SELECT position, outcome FROM (
                   SELECT position, outcome, row_number() OVER (ORDER BY position) AS n FROM (
                       SELECT position, outcome FROM product.inbox
                        WHERE tenant_id = %(tenant)s AND catalog_id = %(catalog)s AND history_epoch = %(epoch)s
                          AND generation = %(generation)s AND position > %(after)s
                        ORDER BY position LIMIT %(limit)s) AS page
               ) AS numbered
               WHERE position = %(after)s + n
               ORDER BY position""",
            {
                "tenant": scope.tenant_id,
                "catalog": scope.catalog_id,
                "epoch": scope.history_epoch,
                "generation": scope.serving_generation,
                "after": after,
                "limit": limit,
            },
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
                          AND i.history_epoch = %(epoch)s AND i.generation = %(generation)s) AS received_position,
                      count(*) AS parked_count,
                      min(e.position) AS oldest_parked_position,
                      min(e.parked_at) AS oldest_parked_at,
                      (SELECT count(*) FROM product.inbox i
                        WHERE i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s
                          AND i.outcome = 'ignored_old_epoch') AS ignored_old_epoch
                 FROM product.parked_event e
                WHERE e.tenant_id = %(tenant)s AND e.catalog_id = %(catalog)s AND e.history_epoch = %(epoch)s
                  AND e.generation = %(generation)s""",
            {
                "tenant": scope.tenant_id,
                "catalog": scope.catalog_id,
                "epoch": scope.history_epoch,
                "generation": scope.serving_generation,
            },
        )
        .fetchone()
    )
    assert backlog is not None  # an aggregate without GROUP BY returns one row
    return backlog


def gap_opened_at(conn: Connection, scope: ProjectedScope, contiguous: int) -> datetime | None:
    """When the oldest delivery still waiting behind the stream's first gap arrived (None: no gap is open, or
    only the tail may be missing). A gap is open while positions after the contiguous one are in the inbox,
    parked or settled, and the next one is not."""
    opened: datetime | None = (
        conn.cursor(row_factory=scalar_row)
        .execute(
            """SELECT min(received_at) FROM product.inbox
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND generation = %s
                 AND position > %s""",
            (scope.tenant_id, scope.catalog_id, scope.history_epoch, scope.serving_generation, contiguous),
        )
        .fetchone()
    )
    return opened


#: The tables keyed by generation (``rebuild.cleanup.drop_generation`` deletes a dropped generation's rows; the
#: old-epoch audit rows of generation 0 never).
GENERATION_TABLES: Final = ("product.parked_event", "product.inbox")


@dataclass(frozen=True, slots=True)
class ParkedAtOrBelow:
    position: int
    event_id: str
    waiting_for_type: str
    waiting_for_id: str
    waiting_for_revision: int


def parked_at_or_below(
    conn: Connection, scope: ProjectedScope, position: int, limit: int = 5
) -> list[ParkedAtOrBelow]:
    """Parked events of the scope's generation at or below ``position`` (if_projection_bootstrap: "Require no
    unresolved dependencies at/below H")."""
    return (
        conn.cursor(row_factory=class_row(ParkedAtOrBelow))
        .execute(
            """SELECT position, event_id, waiting_for_type, waiting_for_id, waiting_for_revision
                 FROM product.parked_event
                WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND generation = %s
                  AND position <= %s
                ORDER BY position LIMIT %s""",
            (
                scope.tenant_id,
                scope.catalog_id,
                scope.history_epoch,
                scope.serving_generation,
                position,
                limit,
            ),
        )
        .fetchall()
    )

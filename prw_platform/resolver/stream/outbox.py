"""The outbox: the one module that reads and writes ``resolver.outbox`` (AW-01 appends, AW-03 relays).

Rows are appended by the decision transaction (``decisions.stream.append_events``, which numbers them under the
stream cursor lock, INV-03), and only ever changed once afterwards: the relay sets ``published_at`` (the
``resolver_relay`` role may update that column and nothing else, only from NULL).

It also owns ``resolver.outbox_relay_pause``: a catalog being fenced (``prw epoch fence``) is not relayed until
the fence completes (if_projection_bootstrap "Pause writers, relay, consumers and public serving"); its rows stay
unpublished and go out, in position order, once the pause is lifted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import AcceptedChange, StreamKey
from prw_platform.db.database import Connection


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """An unpublished row as the relay reads it: the stream columns, the position and the stored event body."""

    tenant_id: str
    catalog_id: str
    history_epoch: str
    position: int
    event_id: str
    body: dict[str, Any]


def insert_events(conn: Connection, events: Sequence[AcceptedChange]) -> None:
    """Store ``events`` in the caller's (decision) transaction. Each body is validated against
    product.accepted-change.v1 (``to_message``) before it is stored. One ``executemany``: the rows travel in one
    batch (psycopg's pipeline), riding the caller's pipeline when there is one."""
    with conn.cursor() as cur:
        cur.executemany(
            """INSERT INTO resolver.outbox (tenant_id, catalog_id, history_epoch, position, event_id, event_type,
                   aggregate_type, aggregate_id, aggregate_revision, decision_id, body, accepted_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
            [
                (
                    event.tenant_id,
                    event.catalog_id,
                    event.history_epoch,
                    event.sequence,
                    event.event_id,
                    event.type,
                    event.aggregate.type,
                    event.aggregate.id,
                    event.aggregate.revision,
                    event.decision_id,
                    Jsonb(event.to_message()),
                    event.accepted_at,
                )
                for event in events
            ],
        )


def lock_unpublished(conn: Connection, limit: int) -> list[OutboxRow]:
    """AW-03 step 1: the lowest unpublished positions across streams (index ``outbox_relay_order``), locked
    ``FOR UPDATE SKIP LOCKED`` so that several relays take disjoint rows."""
    with conn.cursor(row_factory=class_row(OutboxRow)) as cur:
        return cur.execute(
            """SELECT tenant_id, catalog_id, history_epoch, position, event_id, body
               FROM resolver.outbox o
               WHERE published_at IS NULL
                 AND NOT EXISTS (SELECT 1 FROM resolver.outbox_relay_pause p
                                 WHERE p.tenant_id = o.tenant_id AND p.catalog_id = o.catalog_id)
               ORDER BY position, tenant_id, catalog_id, history_epoch
               LIMIT %s
               FOR UPDATE SKIP LOCKED""",
            (limit,),
        ).fetchall()


def mark_published(conn: Connection, rows: Sequence[OutboxRow], published_at: datetime) -> int:
    """AW-03 step 3: mark exactly ``rows`` (locked by this transaction) published; the number marked."""
    return conn.execute(
        """UPDATE resolver.outbox o SET published_at = %s
           FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[]) AS m(tenant_id, catalog_id,
               history_epoch, position)
           WHERE o.tenant_id = m.tenant_id AND o.catalog_id = m.catalog_id
             AND o.history_epoch = m.history_epoch AND o.position = m.position
             AND o.published_at IS NULL""",
        (
            published_at,
            [r.tenant_id for r in rows],
            [r.catalog_id for r in rows],
            [r.history_epoch for r in rows],
            [r.position for r in rows],
        ),
    ).rowcount


def has_unpublished(conn: Connection) -> bool:
    """The relay's cheap work probe: one probe of the partial index on unpublished rows (``outbox_relay_order``,
    ``WHERE published_at IS NULL``), never a count over the streams. Rows of a paused catalog are no work (the
    pause table is tiny, and empty unless a fence is running)."""
    with conn.cursor(row_factory=scalar_row) as cur:
        pending = cur.execute(
            """SELECT EXISTS (SELECT 1 FROM resolver.outbox o WHERE published_at IS NULL
                   AND NOT EXISTS (SELECT 1 FROM resolver.outbox_relay_pause p
                                   WHERE p.tenant_id = o.tenant_id AND p.catalog_id = o.catalog_id))"""
        ).fetchone()
    return bool(pending)


def pause_relay(conn: Connection, tenant_id: str, catalog_id: str, reason: str) -> None:
    """Stop relaying the catalog's outbox (every epoch) until ``resume_relay``. A relay batch already holding the
    catalog's rows finishes; the next one skips them."""
    conn.execute(
        """INSERT INTO resolver.outbox_relay_pause (tenant_id, catalog_id, reason) VALUES (%s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id) DO UPDATE SET reason = excluded.reason""",
        (tenant_id, catalog_id, reason),
    )


def resume_relay(conn: Connection, tenant_id: str, catalog_id: str) -> None:
    conn.execute(
        "DELETE FROM resolver.outbox_relay_pause WHERE tenant_id = %s AND catalog_id = %s",
        (tenant_id, catalog_id),
    )


def relay_paused(conn: Connection, tenant_id: str, catalog_id: str) -> str | None:
    """Why the catalog's relay is paused, or None."""
    with conn.cursor(row_factory=scalar_row) as cur:
        reason: str | None = cur.execute(
            "SELECT reason FROM resolver.outbox_relay_pause WHERE tenant_id = %s AND catalog_id = %s",
            (tenant_id, catalog_id),
        ).fetchone()
    return reason


@dataclass(frozen=True, slots=True)
class StreamEvent:
    position: int
    body: dict[str, Any]


def read_stream(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    history_epoch: str,
    after: int,
    through: int,
    limit: int,
) -> list[StreamEvent]:
    """The stream's committed events after position ``after`` and at most ``through`` (the committed cursor the
    caller read in the same snapshot), in position order (the export stream, if_projection_bootstrap)."""
    with conn.cursor(row_factory=class_row(StreamEvent)) as cur:
        return cur.execute(
            """SELECT position, body FROM resolver.outbox
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND position > %s AND position <= %s
               ORDER BY position
               LIMIT %s""",
            (tenant_id, catalog_id, history_epoch, after, through, limit),
        ).fetchall()


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An outbox row as an operator reads it (``GET /v1/decisions/{id}``): where it is and whether the relay
    published it. Retention may have pruned it since (then it is absent)."""

    event_id: str
    position: int
    body: dict[str, Any]
    published_at: datetime | None


def events_of_decision(conn: Connection, tenant_id: str, decision_id: str) -> list[StoredEvent]:
    """The decision's events still in the outbox, in position order (INV-06: the caller's tenant only)."""
    with conn.cursor(row_factory=class_row(StoredEvent)) as cur:
        return cur.execute(
            """SELECT event_id, position, body, published_at FROM resolver.outbox
               WHERE tenant_id = %s AND decision_id = %s ORDER BY position""",
            (tenant_id, decision_id),
        ).fetchall()


# -- Retention (AW-03 "Prune"): the pruner decides how far, through ``resolver.retention``; these touch the rows. --


def prunable_prefix_end(conn: Connection, stream: StreamKey, after: int, upto: int, cutoff: datetime) -> int:
    """The greatest position t in (after, upto] such that every position after + 1 .. t is present, published
    and published at or before ``cutoff``; ``after`` when the first one is not. One ordered range scan of the
    primary key: the row number equals ``position - after`` exactly while the prefix has no hole, and the
    running ``bool_and`` stays true while every row so far is published and old enough."""
    if upto <= after:
        return after
    with conn.cursor(row_factory=scalar_row) as cur:
        end = cur.execute(
            """SELECT coalesce(max(position), %(after)s) FROM (
                   SELECT position,
                          row_number() OVER w AS rn,
                          bool_and(published_at IS NOT NULL AND published_at <= %(cutoff)s) OVER w AS ok
                   FROM resolver.outbox
                   WHERE tenant_id = %(tenant)s AND catalog_id = %(catalog)s AND history_epoch = %(epoch)s
                     AND position > %(after)s AND position <= %(upto)s
                   WINDOW w AS (ORDER BY position)
               ) prefix
               WHERE ok AND rn = position - %(after)s""",
            {
                "after": after,
                "upto": upto,
                "cutoff": cutoff,
                "tenant": stream.tenant_id,
                "catalog": stream.catalog_id,
                "epoch": stream.history_epoch,
            },
        ).fetchone()
    return int(end if end is not None else after)


def prune_prefix(conn: Connection, stream: StreamKey, after: int, through: int) -> int:
    """Delete positions after + 1 .. through of ``stream`` (published rows only: the pruner's role may not delete
    another), the number deleted. The caller holds the stream's retention lock and checked the prefix."""
    return conn.execute(
        """DELETE FROM resolver.outbox
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s
             AND position > %s AND position <= %s AND published_at IS NOT NULL""",
        (stream.tenant_id, stream.catalog_id, stream.history_epoch, after, through),
    ).rowcount


def eligible_at(conn: Connection, stream: StreamKey, position: int, cutoff: datetime) -> bool:
    """Is the event at ``position`` present, published and published at or before ``cutoff``?"""
    with conn.cursor(row_factory=scalar_row) as cur:
        found = cur.execute(
            """SELECT EXISTS (SELECT 1 FROM resolver.outbox
                   WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND position = %s
                     AND published_at IS NOT NULL AND published_at <= %s)""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch, position, cutoff),
        ).fetchone()
    return bool(found)

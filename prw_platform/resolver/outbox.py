"""The outbox: the one module that reads and writes ``resolver.outbox`` (AW-01 appends, AW-03 relays).

Rows are appended by the decision transaction (``decisions.stream.append_events``, which numbers them under the
stream cursor lock, INV-03), and only ever changed once afterwards: the relay sets ``published_at`` (the
``resolver_relay`` role may update that column and nothing else, only from NULL).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import AcceptedChange
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
    product.accepted-change.v1 (``to_message``) before it is stored."""
    for event in events:
        conn.execute(
            """INSERT INTO resolver.outbox (tenant_id, catalog_id, history_epoch, position, event_id, event_type,
                   aggregate_type, aggregate_id, aggregate_revision, decision_id, body, accepted_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
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
            ),
        )


def lock_unpublished(conn: Connection, limit: int) -> list[OutboxRow]:
    """AW-03 step 1: the lowest unpublished positions across streams (index ``outbox_relay_order``), locked
    ``FOR UPDATE SKIP LOCKED`` so that several relays take disjoint rows."""
    with conn.cursor(row_factory=class_row(OutboxRow)) as cur:
        return cur.execute(
            """SELECT tenant_id, catalog_id, history_epoch, position, event_id, body
               FROM resolver.outbox
               WHERE published_at IS NULL
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
    ``WHERE published_at IS NULL``), never a count over the streams."""
    with conn.cursor(row_factory=scalar_row) as cur:
        pending = cur.execute(
            "SELECT EXISTS (SELECT 1 FROM resolver.outbox WHERE published_at IS NULL)"
        ).fetchone()
    return bool(pending)


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

"""The stream cursor: the only code that writes it, and the only code that appends to the outbox (through
``prw_platform.resolver.stream.outbox``, the table's owner) (AW-01, INV-03).

Positions are allocated under the cursor row lock, ``committed_position + 1 …``: never from a sequence and
never from ``max(position)``, so a rolled-back decision consumes nothing and a reader that sees position n
committed knows every position below n is committed too (the lock orders the commits of one stream).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from prw_platform.contracts import AcceptedChange, StreamKey
from prw_platform.db.database import Connection, affected_rows, returned_rows
from prw_platform.resolver.stream import outbox
from prw_platform.resolver.stream.errors import HistoryEpochFenced, StreamNotOpen


@dataclass(frozen=True, slots=True)
class LockedCursor:
    stream: StreamKey
    committed_position: int


@dataclass(frozen=True, slots=True)
class _CursorRow:
    committed_position: int
    fenced_at: datetime | None


def open_cursor(conn: Connection, stream: StreamKey, now: datetime) -> bool:
    """Create the cursor of ``stream`` at position 0 if it does not exist, and fence the cursors of every other
    epoch of the catalog (a new epoch abandons old history; its writers must stop). True when created."""
    created = affected_rows(
        conn,
        """INSERT INTO resolver.stream_cursor (tenant_id, catalog_id, history_epoch, updated_at)
           VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING""",
        (stream.tenant_id, stream.catalog_id, stream.history_epoch, now),
    )
    conn.execute(
        """UPDATE resolver.stream_cursor SET fenced_at = %s
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch <> %s AND fenced_at IS NULL""",
        (now, stream.tenant_id, stream.catalog_id, stream.history_epoch),
    )
    return created == 1


def fence_catalog(conn: Connection, tenant_id: str, catalog_id: str, now: datetime) -> list[str]:
    """Fence every open cursor of the catalog (if_projection_bootstrap "Fence restored history": "Fence old
    workers"): a writer still holding one of these epochs fails with HISTORY_EPOCH_FENCED from now on, whatever
    the control plane says. The epochs fenced, in order. The new epoch's cursor opens with ``open_cursor``."""
    with conn.cursor(row_factory=class_row(_OpenCursorRow)) as cur:
        fenced = cur.execute(
            """UPDATE resolver.stream_cursor SET fenced_at = %s
               WHERE tenant_id = %s AND catalog_id = %s AND fenced_at IS NULL
               RETURNING history_epoch, committed_position""",
            (now, tenant_id, catalog_id),
        ).fetchall()
    return sorted(row.history_epoch for row in fenced)


def lock_cursor(conn: Connection, stream: StreamKey) -> LockedCursor:
    """AW-01: lock the cursor row BEFORE changing exported state. A second writer of the stream waits here until
    this transaction ends, so commits of one stream happen in position order."""
    return send_lock_cursor(conn, stream)()


def send_lock_cursor(conn: Connection, stream: StreamKey) -> Callable[[], LockedCursor]:
    """``lock_cursor`` in two steps: the lock is sent now and judged when the returned function is called. In
    pipeline mode the reads sent after it travel in the same round trip; the server runs them in order, so each
    starts once the lock is held and sees every commit of the writer it waited for (READ COMMITTED)."""
    cur = conn.cursor(row_factory=class_row(_CursorRow))
    cur.execute(
        """SELECT committed_position, fenced_at FROM resolver.stream_cursor
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s
           FOR UPDATE""",
        (stream.tenant_id, stream.catalog_id, stream.history_epoch),
    )

    def locked() -> LockedCursor:
        with cur:
            row = cur.fetchone()
        if row is None:
            raise StreamNotOpen(f"no stream cursor for {stream}")
        if row.fenced_at is not None:
            raise HistoryEpochFenced(
                f"history epoch {stream.history_epoch} of {stream.catalog_id} is superseded"
            )
        return LockedCursor(stream, row.committed_position)

    return locked


def append_events(conn: Connection, cursor: LockedCursor, events: Sequence[AcceptedChange]) -> LockedCursor:
    """Insert ``events`` (already numbered committed_position + 1 … in order) and advance the cursor, in the
    caller's transaction. Each body is validated against product.accepted-change.v1 before it is stored."""
    expected = range(cursor.committed_position + 1, cursor.committed_position + 1 + len(events))
    if [e.sequence for e in events] != list(expected):
        raise ValueError(f"positions {[e.sequence for e in events]} do not continue the cursor at {expected}")
    stream = cursor.stream
    for event in events:
        if (event.tenant_id, event.catalog_id, event.history_epoch) != (
            stream.tenant_id,
            stream.catalog_id,
            stream.history_epoch,
        ):
            raise ValueError(f"event {event.event_id} is stamped for another stream than {stream}")
    if not events:
        return cursor
    outbox.insert_events(conn, events)
    advanced = returned_rows(
        conn,
        """UPDATE resolver.stream_cursor SET committed_position = %s, updated_at = now()
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND committed_position = %s
           RETURNING committed_position""",
        (expected[-1], stream.tenant_id, stream.catalog_id, stream.history_epoch, cursor.committed_position),
    )
    if advanced != 1:
        # Only possible if a writer skipped lock_cursor: refuse rather than commit a gap or a duplicate.
        raise RuntimeError(f"stream cursor of {stream} moved while locked")
    return LockedCursor(stream, expected[-1])


def committed_position(conn: Connection, stream: StreamKey) -> int | None:
    """The stream's committed cursor W without locking it (a reader's view, e.g. the export stream); None for a
    stream that was never opened."""
    with conn.cursor(row_factory=class_row(_CursorRow)) as cur:
        row = cur.execute(
            """SELECT committed_position, fenced_at FROM resolver.stream_cursor
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch),
        ).fetchone()
    return None if row is None else row.committed_position


@dataclass(frozen=True, slots=True)
class _OpenCursorRow:
    history_epoch: str
    committed_position: int


def open_stream_position(conn: Connection, tenant_id: str, catalog_id: str) -> tuple[str, int] | None:
    """The catalog's unfenced stream (its current history epoch in this database) and its committed cursor W, in
    the caller's snapshot (the snapshot export, if_projection_bootstrap "Read one snapshot"); None when none."""
    with conn.cursor(row_factory=class_row(_OpenCursorRow)) as cur:
        row = cur.execute(
            """SELECT history_epoch, committed_position FROM resolver.stream_cursor
               WHERE tenant_id = %s AND catalog_id = %s AND fenced_at IS NULL""",
            (tenant_id, catalog_id),
        ).fetchone()
    return None if row is None else (row.history_epoch, row.committed_position)

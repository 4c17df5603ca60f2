"""The managed files' rows (``resolver.catalog_file`` and its history): the owner of the file state (seed 004).

Every state change goes through ``move``: it asks the lifecycle table first (``InvalidFileTransition``), then
updates only from the state it expects (a concurrent change makes it a no-op the caller sees), and stamps who and
when; the trigger of 0016_catalog_files refuses anything the table does not allow and writes the history row.

Objects are content-addressed (``catalog-files/<tenant>/<sha256>``), so two files can share one object. Whoever
deletes bytes holds the object's advisory lock and deletes only when no other live file names the object; a new
file's row is inserted under the same lock, before its bytes are put, so a delete never removes bytes that a
committed row names.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from psycopg.rows import class_row, dict_row, scalar_row

from prw_platform.db.database import Connection
from prw_platform.resolver.files.lifecycle import FileState, check_transition


@dataclass(frozen=True, slots=True)
class CatalogFile:
    tenant_id: str
    catalog_id: str
    file_id: str
    state: FileState
    save_id: str
    origin: str
    origin_detail: str | None
    object_ref: str
    sha256: str
    size_bytes: int
    media_type: str
    #: Pixels, when the picture's header says (dimensions.py; 0019_released_pictures).
    width: int | None
    height: int | None
    committed: bool
    cleanup_due_at: datetime | None
    retained_until: datetime | None
    bytes_deleted_at: datetime | None
    failed_receives: int
    failure_reason: str | None
    state_actor: str
    state_changed_at: datetime
    created_at: datetime


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    from_state: FileState | None
    to_state: FileState
    actor: str
    at: datetime


_COLUMNS = """tenant_id, catalog_id, file_id, state, save_id, origin, origin_detail, object_ref, sha256, size_bytes,
    media_type, width, height, committed, cleanup_due_at, retained_until, bytes_deleted_at, failed_receives, failure_reason,
    state_actor, state_changed_at, created_at"""


def new_file_id() -> str:
    return f"fil_{secrets.token_hex(12)}"


def new_save_id() -> str:
    return f"sav_{secrets.token_hex(12)}"


def lock_object(conn: Connection, tenant_id: str, object_ref: str) -> None:
    """The object's advisory lock, held to the end of the transaction (insert of a file row, delete of bytes)."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 4004))", (f"{tenant_id}|{object_ref}",))


def insert_preparing(
    conn: Connection,
    *,
    tenant_id: str,
    catalog_id: str,
    file_id: str,
    save_id: str,
    origin: str,
    origin_detail: str | None,
    object_ref: str,
    sha256: str,
    size: int,
    media_type: str,
    actor: str,
    now: datetime,
    dimensions: tuple[int, int] | None = None,
) -> None:
    """[*] -> preparing: "save submits a picture or file" (before its bytes are put, under the object's lock)."""
    lock_object(conn, tenant_id, object_ref)
    width, height = dimensions or (None, None)
    conn.execute(
        """INSERT INTO resolver.catalog_file (tenant_id, catalog_id, file_id, state, save_id, origin, origin_detail,
               object_ref, sha256, size_bytes, media_type, width, height, state_actor, state_changed_at, created_at)
           VALUES (%s, %s, %s, 'preparing', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            tenant_id,
            catalog_id,
            file_id,
            save_id,
            origin,
            origin_detail,
            object_ref,
            sha256,
            size,
            media_type,
            width,
            height,
            actor,
            now,
            now,
        ),
    )


def move(
    conn: Connection,
    tenant_id: str,
    file_ids: Sequence[str],
    from_state: FileState,
    to_state: FileState,
    *,
    actor: str,
    now: datetime,
    cleanup_due_at: datetime | None = None,
    retained_until: datetime | None = None,
    failure_reason: str | None = None,
    failed_receives: int | None = None,
    save_id: str | None = None,
) -> list[str]:
    """Move the files that are in ``from_state`` to ``to_state``; returns the ids that moved.

    ``save_id``: only files that save prepared (the ready -> attached guard). Entering ``attached`` marks the file
    committed; ``cleanup_due_at``, ``retained_until``, ``failure_reason`` and ``failed_receives`` are set when
    given (the due instant is cleared when a file leaves the states the sweep claims from)."""
    check_transition(from_state, to_state)
    if not file_ids:
        return []
    with conn.cursor(row_factory=scalar_row) as cur:
        moved: list[str] = cur.execute(
            """UPDATE resolver.catalog_file SET state = %(to)s::text, state_actor = %(actor)s, state_changed_at = %(now)s,
                   committed = committed OR %(to)s::text = 'attached',
                   cleanup_due_at = CASE WHEN %(to)s::text IN ('detached', 'abandoned') THEN %(due)s::timestamptz END,
                   retained_until = coalesce(%(retained)s::timestamptz, retained_until),
                   failure_reason = CASE WHEN %(to)s::text = 'failed' THEN %(reason)s::text ELSE failure_reason END,
                   failed_receives = coalesce(%(receives)s::integer, failed_receives)
               WHERE tenant_id = %(tenant)s AND file_id = ANY(%(ids)s) AND state = %(from)s
                 AND (%(save)s::text IS NULL OR save_id = %(save)s)
               RETURNING file_id""",
            {
                "to": to_state,
                "from": from_state,
                "actor": actor,
                "now": now,
                "due": cleanup_due_at,
                "retained": retained_until,
                "reason": failure_reason,
                "receives": failed_receives,
                "tenant": tenant_id,
                "ids": list(file_ids),
                "save": save_id,
            },
        ).fetchall()
    return moved


def set_state_unchecked(
    conn: Connection, tenant_id: str, file_id: str, to_state: str, actor: str, now: datetime
) -> None:
    """Write a state without asking the lifecycle first: only for tests that show the database refuses what the
    seed calls invalid (no service calls it)."""
    conn.execute(
        """UPDATE resolver.catalog_file SET state = %s, state_actor = %s, state_changed_at = %s
           WHERE tenant_id = %s AND file_id = %s""",
        (to_state, actor, now, tenant_id, file_id),
    )


def record_failed_receive(conn: Connection, tenant_id: str, file_id: str, reason: str) -> int:
    """A delivery of the file's cleanup failed (not the final one): count it, keep the reason; returns the count."""
    with conn.cursor(row_factory=scalar_row) as cur:
        count: int | None = cur.execute(
            """UPDATE resolver.catalog_file SET failed_receives = failed_receives + 1, failure_reason = %s
               WHERE tenant_id = %s AND file_id = %s AND state = 'discarding' RETURNING failed_receives""",
            (reason, tenant_id, file_id),
        ).fetchone()
    return count or 0


def mark_bytes_deleted(conn: Connection, tenant_id: str, file_id: str, now: datetime) -> None:
    conn.execute(
        """UPDATE resolver.catalog_file SET bytes_deleted_at = %s
           WHERE tenant_id = %s AND file_id = %s AND bytes_deleted_at IS NULL""",
        (now, tenant_id, file_id),
    )


def get_files(
    conn: Connection, tenant_id: str, file_ids: Sequence[str], *, lock: bool = False
) -> dict[str, CatalogFile]:
    """The tenant's files by id; ``lock``: FOR UPDATE, so a save and the consumer's settlement take turns."""
    query = (
        f"SELECT {_COLUMNS} FROM resolver.catalog_file WHERE tenant_id = %s AND file_id = ANY(%s) "  # noqa: S608
        "ORDER BY file_id FOR UPDATE"
        if lock
        else f"SELECT {_COLUMNS} FROM resolver.catalog_file WHERE tenant_id = %s AND file_id = ANY(%s)"  # noqa: S608
    )
    with conn.cursor(row_factory=class_row(CatalogFile)) as cur:
        rows = cur.execute(query, (tenant_id, list(file_ids))).fetchall()
    return {row.file_id: row for row in rows}


def files_in_state(conn: Connection, tenant_id: str, state: FileState, limit: int = 100) -> list[CatalogFile]:
    with conn.cursor(row_factory=class_row(CatalogFile)) as cur:
        return cur.execute(
            f"SELECT {_COLUMNS} FROM resolver.catalog_file WHERE tenant_id = %s AND state = %s "  # noqa: S608
            "ORDER BY state_changed_at, file_id LIMIT %s",
            (tenant_id, state, limit),
        ).fetchall()


def history(conn: Connection, tenant_id: str, file_id: str) -> list[HistoryEntry]:
    with conn.cursor(row_factory=class_row(HistoryEntry)) as cur:
        return cur.execute(
            """SELECT from_state, to_state, actor, at FROM resolver.catalog_file_history
               WHERE tenant_id = %s AND file_id = %s ORDER BY seq""",
            (tenant_id, file_id),
        ).fetchall()


def live_sharers(conn: Connection, tenant_id: str, object_ref: str, file_id: str, now: datetime) -> int:
    """How many other files still need the object's bytes: any not discarded, or retired and still retained."""
    with conn.cursor(row_factory=scalar_row) as cur:
        count: int | None = cur.execute(
            """SELECT count(*) FROM resolver.catalog_file
               WHERE tenant_id = %s AND object_ref = %s AND file_id <> %s
                 AND (state <> 'discarded' OR (bytes_deleted_at IS NULL AND retained_until > %s))""",
            (tenant_id, object_ref, file_id, now),
        ).fetchone()
    return count or 0


# -- The sweep (resolver_sweeper, every tenant). ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claimed:
    tenant_id: str
    catalog_id: str
    file_id: str
    from_state: FileState


#: A file still discarding this long after its message was sent never got settled: the message was lost (a send
#: after commit on SQS that a crash interrupted), and the sweep sends it again (``claim_stalled``). Far longer
#: than five deliveries with the platform's backoff take, so a file still being retried is not sent twice in
#: practice (and a duplicate would be harmless: the consumer settles a file once, under its row lock).
RESEND_AFTER: Final = timedelta(minutes=30)


def claim_due(
    conn: Connection, now: datetime, limit: int, actor: str, resend_after: timedelta = RESEND_AFTER
) -> list[Claimed]:
    """detached/abandoned -> discarding for due files, oldest due first. ``FOR UPDATE SKIP LOCKED``: two sweeps that
    overlap claim disjoint files, and a file a save is changing is left for the next sweep. A discarding file's
    cleanup is due again ``resend_after`` later: if it is still discarding then, its message was lost
    (``claim_stalled``)."""
    check_transition("detached", "discarding")
    check_transition("abandoned", "discarding")
    with conn.cursor(row_factory=class_row(Claimed)) as cur:
        return cur.execute(
            """WITH due AS (
                   SELECT tenant_id, file_id, state FROM resolver.catalog_file
                   WHERE state IN ('detached', 'abandoned') AND cleanup_due_at <= %(now)s
                   ORDER BY cleanup_due_at, file_id LIMIT %(limit)s FOR UPDATE SKIP LOCKED)
               UPDATE resolver.catalog_file f SET state = 'discarding', state_actor = %(actor)s,
                   state_changed_at = %(now)s, cleanup_due_at = %(again)s, failed_receives = 0
               FROM due WHERE f.tenant_id = due.tenant_id AND f.file_id = due.file_id
               RETURNING f.tenant_id, f.catalog_id, f.file_id, due.state AS from_state""",
            {"now": now, "limit": limit, "actor": actor, "again": now + resend_after},
        ).fetchall()


def claim_stalled(
    conn: Connection, now: datetime, limit: int, resend_after: timedelta = RESEND_AFTER
) -> list[Claimed]:
    """Discarding files whose cleanup is overdue: the claiming sweep committed but its message never reached the
    queue (a send after commit on SQS, then a crash), or the message was lost. Their cleanup is due again
    ``resend_after`` from now and the caller sends each a new message; the state stays discarding (no
    transition), and a duplicate message is harmless: the consumer settles a file once, under its row lock."""
    with conn.cursor(row_factory=class_row(Claimed)) as cur:
        return cur.execute(
            """WITH stalled AS (
                   SELECT tenant_id, file_id FROM resolver.catalog_file
                   WHERE state = 'discarding' AND cleanup_due_at <= %(now)s
                   ORDER BY cleanup_due_at, file_id LIMIT %(limit)s FOR UPDATE SKIP LOCKED)
               UPDATE resolver.catalog_file f SET cleanup_due_at = %(again)s
               FROM stalled WHERE f.tenant_id = stalled.tenant_id AND f.file_id = stalled.file_id
               RETURNING f.tenant_id, f.catalog_id, f.file_id, f.state AS from_state""",
            {"now": now, "limit": limit, "again": now + resend_after},
        ).fetchall()


def has_due(conn: Connection, now: datetime) -> bool:
    with conn.cursor(row_factory=scalar_row) as cur:
        found: bool | None = cur.execute(
            """SELECT EXISTS (SELECT 1 FROM resolver.catalog_file
                              WHERE state IN ('detached', 'abandoned', 'discarding') AND cleanup_due_at <= %s)
                   OR EXISTS (SELECT 1 FROM resolver.catalog_file
                              WHERE state = 'discarded' AND bytes_deleted_at IS NULL AND retained_until <= %s)""",
            (now, now),
        ).fetchone()
    return bool(found)


def claim_expired_retirements(conn: Connection, now: datetime, limit: int) -> list[CatalogFile]:
    """Discarded files whose thirty days are over and whose bytes are still stored (locked, skip locked)."""
    with conn.cursor(row_factory=class_row(CatalogFile)) as cur:
        return cur.execute(
            f"SELECT {_COLUMNS} FROM resolver.catalog_file "  # noqa: S608
            "WHERE state = 'discarded' AND bytes_deleted_at IS NULL AND retained_until <= %s "
            "ORDER BY retained_until, file_id LIMIT %s FOR UPDATE SKIP LOCKED",
            (now, limit),
        ).fetchall()


def transition_table(conn: Connection) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The lifecycle as the database enforces it: (transitions, invalid pairs with why), for checks against
    ``lifecycle.TRANSITIONS`` and ``lifecycle.INVALID``."""
    with conn.cursor(row_factory=dict_row) as cur:
        allowed = cur.execute(
            """SELECT from_state, to_state, trigger, guard, side_effects, actor
               FROM resolver.catalog_file_transition ORDER BY from_state, to_state"""
        ).fetchall()
        invalid = cur.execute(
            """SELECT from_state, to_state, why FROM resolver.catalog_file_invalid_transition
               ORDER BY from_state, to_state"""
        ).fetchall()
    return [tuple(str(v) for v in r.values()) for r in allowed], [
        tuple(str(v) for v in r.values()) for r in invalid
    ]

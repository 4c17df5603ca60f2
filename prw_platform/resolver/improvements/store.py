"""``resolver.improvement`` (migrations 0011, 0017) and ``resolver.improvement_transition``: the one module that
reads and writes them.

A list is paged newest first by ``(created_at, improvement_id)``; the page cursor is that pair of the last row,
opaque to the caller (canonical unpadded base64url of JSON: one spelling per cursor), so paging stays stable while
improvements are added.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.auth.signed import b64url_decode, b64url_encode
from prw_platform.db.database import Connection

ImprovementStatus = Literal["draft", "reviewer_approved", "applied", "abandoned"]
IMPROVEMENT_STATUSES: Final = ("draft", "reviewer_approved", "applied", "abandoned")


class InvalidPageCursor(ValueError):
    """A page cursor this module did not issue (422 VALIDATION_FAILED at the edge)."""


@dataclass(frozen=True, slots=True)
class Improvement:
    tenant_id: str
    catalog_id: str
    improvement_id: str
    adapter_version: str | None
    profile_version: str | None
    definition_version: str | None
    selection: dict[str, Any]
    status: ImprovementStatus
    created_by: str
    created_at: datetime
    rationale: str = ""
    #: Who moved it to its current status, and when (its author and creation time while it is a draft).
    status_by: str | None = None
    status_at: datetime | None = None
    idempotency_key: str | None = None
    #: The identity generation it proposes (``resolver.identity_generation``); None: the identity rules as they are.
    identity_generation: int | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    ordinal: int
    from_status: ImprovementStatus | None
    to_status: ImprovementStatus
    actor: str
    rationale: str
    at: datetime


_COLUMNS = """tenant_id, catalog_id, improvement_id, adapter_version, profile_version, definition_version,
              selection, status, created_by, created_at, rationale, status_by, status_at, idempotency_key,
              identity_generation"""


@dataclass(frozen=True, slots=True)
class ImprovementPage:
    improvements: list[Improvement] = field(default_factory=list)
    #: Pass as ``after`` for the next page; None on the last page.
    next_cursor: str | None = None


def insert_improvement(conn: Connection, improvement: Improvement) -> None:
    """A new improvement and its first transition (none → its status)."""
    conn.execute(
        """INSERT INTO resolver.improvement (tenant_id, catalog_id, improvement_id, adapter_version,
               profile_version, definition_version, selection, status, created_by, created_at, rationale,
               status_by, status_at, idempotency_key, identity_generation)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            improvement.tenant_id,
            improvement.catalog_id,
            improvement.improvement_id,
            improvement.adapter_version,
            improvement.profile_version,
            improvement.definition_version,
            Jsonb(improvement.selection),
            improvement.status,
            improvement.created_by,
            improvement.created_at,
            improvement.rationale,
            improvement.status_by or improvement.created_by,
            improvement.status_at or improvement.created_at,
            improvement.idempotency_key,
            improvement.identity_generation,
        ),
    )
    _record_transition(
        conn,
        improvement.tenant_id,
        improvement.improvement_id,
        None,
        improvement.status,
        improvement.created_by,
        improvement.rationale,
        improvement.created_at,
    )


def get_improvement(
    conn: Connection, tenant_id: str, improvement_id: str, *, lock: bool = False
) -> Improvement | None:
    query = f"SELECT {_COLUMNS} FROM resolver.improvement WHERE tenant_id = %s AND improvement_id = %s"  # noqa: S608
    with conn.cursor(row_factory=class_row(Improvement)) as cur:
        return cur.execute(query + (" FOR UPDATE" if lock else ""), (tenant_id, improvement_id)).fetchone()


def improvement_by_key(conn: Connection, tenant_id: str, idempotency_key: str) -> Improvement | None:
    with conn.cursor(row_factory=class_row(Improvement)) as cur:
        return cur.execute(
            f"SELECT {_COLUMNS} FROM resolver.improvement WHERE tenant_id = %s AND idempotency_key = %s",  # noqa: S608
            (tenant_id, idempotency_key),
        ).fetchone()


def set_status(
    conn: Connection,
    improvement: Improvement,
    to_status: ImprovementStatus,
    actor: str,
    rationale: str,
    at: datetime,
) -> Improvement:
    """Move a locked improvement to ``to_status`` and record the transition (the table's trigger refuses a move
    that is not a transition, whatever calls it)."""
    conn.execute(
        """UPDATE resolver.improvement SET status = %s, status_by = %s, status_at = %s
           WHERE tenant_id = %s AND improvement_id = %s""",
        (to_status, actor, at, improvement.tenant_id, improvement.improvement_id),
    )
    _record_transition(
        conn,
        improvement.tenant_id,
        improvement.improvement_id,
        improvement.status,
        to_status,
        actor,
        rationale,
        at,
    )
    moved = get_improvement(conn, improvement.tenant_id, improvement.improvement_id)
    assert moved is not None
    return moved


def transitions(conn: Connection, tenant_id: str, improvement_id: str) -> list[Transition]:
    with conn.cursor(row_factory=class_row(Transition)) as cur:
        return cur.execute(
            """SELECT ordinal, from_status, to_status, actor, rationale, at FROM resolver.improvement_transition
               WHERE tenant_id = %s AND improvement_id = %s ORDER BY ordinal""",
            (tenant_id, improvement_id),
        ).fetchall()


def _record_transition(
    conn: Connection,
    tenant_id: str,
    improvement_id: str,
    from_status: str | None,
    to_status: str,
    actor: str,
    rationale: str,
    at: datetime,
) -> None:
    conn.execute(
        """INSERT INTO resolver.improvement_transition
               (tenant_id, improvement_id, ordinal, from_status, to_status, actor, rationale, at)
           SELECT %s, %s, coalesce(max(ordinal), 0) + 1, %s, %s, %s, %s, %s
             FROM resolver.improvement_transition WHERE tenant_id = %s AND improvement_id = %s""",
        (tenant_id, improvement_id, from_status, to_status, actor, rationale, at, tenant_id, improvement_id),
    )


def list_improvements(
    conn: Connection,
    tenant_id: str,
    *,
    limit: int,
    after: str | None = None,
    status: ImprovementStatus | None = None,
) -> ImprovementPage:
    """One page of the tenant's improvements, newest first, optionally of one status."""
    position = _decode(after) if after else None
    with conn.cursor(row_factory=class_row(Improvement)) as cur:
        rows = cur.execute(
            f"""SELECT {_COLUMNS}
               FROM resolver.improvement
               WHERE tenant_id = %(tenant)s
                 AND (%(status)s::text IS NULL OR status = %(status)s)
                 AND (%(at)s::timestamptz IS NULL OR (created_at, improvement_id) < (%(at)s, %(id)s))
               ORDER BY created_at DESC, improvement_id DESC
               LIMIT %(limit)s""",  # noqa: S608 - a column list constant
            {
                "tenant": tenant_id,
                "status": status,
                "at": position[0] if position else None,
                "id": position[1] if position else None,
                "limit": limit + 1,
            },
        ).fetchall()
    page, more = rows[:limit], len(rows) > limit
    return ImprovementPage(page, _encode(page[-1]) if more else None)


def _encode(last: Improvement) -> str:
    document = json.dumps([last.created_at.isoformat(), last.improvement_id]).encode()
    return b64url_encode(document)


def _decode(cursor: str) -> tuple[datetime, str]:
    try:
        at, improvement_id = json.loads(b64url_decode(cursor))
        return datetime.fromisoformat(at), str(improvement_id)
    except (ValueError, TypeError) as error:
        raise InvalidPageCursor(f"not a page cursor of GET /v1/improvements: {cursor!r}") from error

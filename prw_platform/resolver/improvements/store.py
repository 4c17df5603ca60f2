"""``resolver.improvement`` (migration 0011): the one module that reads and writes it.

A list is paged newest first by ``(created_at, improvement_id)``; the page cursor is that pair of the last row,
opaque to the caller (url-safe base64 of JSON), so paging stays stable while improvements are added.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

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


@dataclass(frozen=True, slots=True)
class ImprovementPage:
    improvements: list[Improvement] = field(default_factory=list)
    #: Pass as ``after`` for the next page; None on the last page.
    next_cursor: str | None = None


def insert_improvement(conn: Connection, improvement: Improvement) -> None:
    conn.execute(
        """INSERT INTO resolver.improvement (tenant_id, catalog_id, improvement_id, adapter_version,
               profile_version, definition_version, selection, status, created_by, created_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
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
        ),
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
            """SELECT tenant_id, catalog_id, improvement_id, adapter_version, profile_version, definition_version,
                      selection, status, created_by, created_at
               FROM resolver.improvement
               WHERE tenant_id = %(tenant)s
                 AND (%(status)s::text IS NULL OR status = %(status)s)
                 AND (%(at)s::timestamptz IS NULL OR (created_at, improvement_id) < (%(at)s, %(id)s))
               ORDER BY created_at DESC, improvement_id DESC
               LIMIT %(limit)s""",
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
    return base64.urlsafe_b64encode(document).decode().rstrip("=")


def _decode(cursor: str) -> tuple[datetime, str]:
    try:
        at, improvement_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return datetime.fromisoformat(at), str(improvement_id)
    except (binascii.Error, ValueError, TypeError) as error:
        raise InvalidPageCursor(f"not a page cursor of GET /v1/improvements: {cursor!r}") from error

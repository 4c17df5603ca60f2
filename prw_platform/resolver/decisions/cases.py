"""Review cases (if_review_decision): opened by an automatic rule, decided by a reviewer at a known revision."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import class_row, dict_row
from psycopg.types.json import Jsonb

from prw_platform.db.database import Connection
from prw_platform.resolver.decisions.commands import Candidate
from prw_platform.resolver.decisions.errors import CaseNotFound, StaleCaseRevision

AWAITING_HUMAN = "awaiting_human"
DECIDED = "decided"
DISMISSED = "dismissed"


@dataclass(frozen=True, slots=True)
class ReviewCase:
    case_id: str
    catalog_id: str
    kind: str
    status: str
    revision: int
    capture_id: str
    listing_id: str
    opened_by: str


def case_id_for(decision_id: str) -> str:
    return f"rc_{hashlib.sha256(decision_id.encode()).hexdigest()[:20]}"


def open_case(
    conn: Connection,
    tenant_id: str,
    case: ReviewCase,
    candidates: tuple[Candidate, ...],
    evidence: Mapping[str, Any],
    now: datetime,
) -> None:
    conn.execute(
        """INSERT INTO resolver.review_case (tenant_id, catalog_id, case_id, kind, status, revision, capture_id,
               listing_id, candidates, evidence, opened_by, created_at, updated_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            tenant_id,
            case.catalog_id,
            case.case_id,
            case.kind,
            case.status,
            case.revision,
            case.capture_id,
            case.listing_id,
            Jsonb([{"item_id": c.item_id, "score": c.score, "reason": c.reason} for c in candidates]),
            Jsonb(dict(evidence)),
            case.opened_by,
            now,
            now,
        ),
    )


def case_content(conn: Connection, tenant_id: str, case_id: str) -> dict[str, Any] | None:
    """What a rule wrote when it opened the case (candidates and evidence never change), with its current state."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(
            """SELECT case_id, catalog_id, kind, status, revision, capture_id, listing_id, candidates, evidence
               FROM resolver.review_case WHERE tenant_id = %s AND case_id = %s""",
            (tenant_id, case_id),
        ).fetchone()


def take_case_revision(conn: Connection, tenant_id: str, case_id: str, expected_revision: int) -> ReviewCase:
    """INV-04 (AW-01 "Check case revision"): ``UPDATE review_case SET revision = revision + 1 WHERE id AND
    revision = expected``. No row updated means another decision got there first: STALE_CASE_REVISION."""
    with conn.cursor(row_factory=class_row(ReviewCase)) as cur:
        case = cur.execute(
            """UPDATE resolver.review_case SET revision = revision + 1
               WHERE tenant_id = %s AND case_id = %s AND revision = %s
               RETURNING case_id, catalog_id, kind, status, revision, capture_id, listing_id, opened_by""",
            (tenant_id, case_id, expected_revision),
        ).fetchone()
    if case is not None:
        return case
    current = conn.execute(
        "SELECT revision FROM resolver.review_case WHERE tenant_id = %s AND case_id = %s",
        (tenant_id, case_id),
    ).fetchone()
    if current is None:
        raise CaseNotFound(f"no review case {case_id}")
    revision = current["revision"]
    assert isinstance(revision, int)
    raise StaleCaseRevision(case_id, expected_revision, revision)


def set_case_status(conn: Connection, tenant_id: str, case_id: str, status: str, now: datetime) -> None:
    conn.execute(
        "UPDATE resolver.review_case SET status = %s, updated_at = %s WHERE tenant_id = %s AND case_id = %s",
        (status, now, tenant_id, case_id),
    )

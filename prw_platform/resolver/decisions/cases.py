"""Review cases (if_review_decision): opened by an automatic rule, decided by a reviewer at a known revision."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import sql
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
    source_id: str
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
               listing_id, source_id, candidates, evidence, opened_by, created_at, updated_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            tenant_id,
            case.catalog_id,
            case.case_id,
            case.kind,
            case.status,
            case.revision,
            case.capture_id,
            case.listing_id,
            case.source_id,
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
               RETURNING case_id, catalog_id, kind, status, revision, capture_id, listing_id, source_id,
                         opened_by""",
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


# -- The review queue's reads (if_review_read). --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaseFilters:
    """Exact matches; None matches every value."""

    status: str | None = None
    kind: str | None = None
    source_id: str | None = None

    def where(self, tenant_id: str) -> tuple[sql.Composable, list[object]]:
        conditions: list[sql.Composable] = [sql.SQL("tenant_id = %s")]
        params: list[object] = [tenant_id]
        for column, value in (("status", self.status), ("kind", self.kind), ("source_id", self.source_id)):
            if value is not None:
                conditions.append(sql.SQL("{} = %s").format(sql.Identifier(column)))
                params.append(value)
        return sql.SQL(" AND ").join(conditions), params


@dataclass(frozen=True, slots=True)
class QueueKey:
    """The queue's order, oldest case first: a stable key, so paging never skips or repeats a case."""

    created_at: datetime
    case_id: str


@dataclass(frozen=True, slots=True)
class CaseSummary:
    case_id: str
    catalog_id: str
    kind: str
    status: str
    revision: int
    source_id: str
    capture_id: str
    listing_id: str
    title: str | None
    candidates: int
    top_score: float | None
    created_at: datetime
    updated_at: datetime

    @property
    def key(self) -> QueueKey:
        return QueueKey(self.created_at, self.case_id)


@dataclass(frozen=True, slots=True)
class CaseRow:
    """A case as a reviewer reads it: what the rule wrote when it opened it, and its current state."""

    case_id: str
    catalog_id: str
    kind: str
    status: str
    revision: int
    source_id: str
    capture_id: str
    listing_id: str
    candidates: list[dict[str, Any]]
    evidence: dict[str, Any]
    opened_by: str
    created_at: datetime
    updated_at: datetime


_QUEUE_PAGE = sql.SQL(
    """SELECT case_id, catalog_id, kind, status, revision, source_id, capture_id, listing_id,
              (SELECT a ->> 'value' FROM jsonb_array_elements(evidence -> 'attributes') a
               WHERE a ->> 'key' = 'core:title' LIMIT 1) AS title,
              jsonb_array_length(candidates) AS candidates,
              (SELECT max((c ->> 'score')::float8) FROM jsonb_array_elements(candidates) c) AS top_score,
              created_at, updated_at
       FROM resolver.review_case WHERE {} ORDER BY created_at, case_id LIMIT %s"""
)


def queue_page(
    conn: Connection, tenant_id: str, filters: CaseFilters, after: QueueKey | None, limit: int
) -> list[CaseSummary]:
    where, params = filters.where(tenant_id)
    if after is not None:
        where = sql.SQL("{} AND (created_at, case_id) > (%s, %s)").format(where)
        params += [after.created_at, after.case_id]
    with conn.cursor(row_factory=class_row(CaseSummary)) as cur:
        return cur.execute(_QUEUE_PAGE.format(where), [*params, limit]).fetchall()


def queue_counts(conn: Connection, tenant_id: str, filters: CaseFilters) -> list[tuple[str, str, int]]:
    """(status, kind, cases) over the filtered set."""
    where, params = filters.where(tenant_id)
    query = sql.SQL(
        "SELECT status, kind, count(*) AS n FROM resolver.review_case WHERE {} GROUP BY status, kind"
    ).format(where)
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(query, params).fetchall()
    return [(str(row["status"]), str(row["kind"]), int(row["n"])) for row in rows]


def case_row(conn: Connection, tenant_id: str, case_id: str) -> CaseRow | None:
    with conn.cursor(row_factory=class_row(CaseRow)) as cur:
        return cur.execute(
            """SELECT case_id, catalog_id, kind, status, revision, source_id, capture_id, listing_id, candidates,
                      evidence, opened_by, created_at, updated_at
               FROM resolver.review_case WHERE tenant_id = %s AND case_id = %s""",
            (tenant_id, case_id),
        ).fetchone()


def captures_with_case_kind(
    conn: Connection, tenant_id: str, kind: str, capture_ids: Sequence[str]
) -> set[str]:
    """Which of ``capture_ids`` opened a review case of ``kind`` (an improvement's selection)."""
    rows = conn.execute(
        """SELECT DISTINCT capture_id FROM resolver.review_case
           WHERE tenant_id = %s AND kind = %s AND capture_id = ANY(%s)""",
        (tenant_id, kind, list(capture_ids)),
    ).fetchall()
    return {str(row["capture_id"]) for row in rows}


@dataclass(frozen=True, slots=True)
class ShownCandidates:
    """A decided review case: its listing and the candidates the reviewer was shown, best first."""

    case_id: str
    listing_id: str
    candidates: tuple[str, ...]


def decided_cases_with_candidates(conn: Connection, tenant_id: str, catalog_id: str) -> list[ShownCandidates]:
    """Every decided case of the catalog that showed the reviewer at least one candidate, oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            """SELECT case_id, listing_id, candidates FROM resolver.review_case
               WHERE tenant_id = %s AND catalog_id = %s AND status = 'decided'
                 AND jsonb_array_length(candidates) > 0
               ORDER BY created_at, case_id""",
            (tenant_id, catalog_id),
        ).fetchall()
    return [
        ShownCandidates(
            str(row["case_id"]), str(row["listing_id"]), tuple(str(c["item_id"]) for c in row["candidates"])
        )
        for row in rows
    ]


def case_ids_of_listing(conn: Connection, tenant_id: str, listing_id: str) -> list[str]:
    """Every review case of the listing, any status."""
    rows = conn.execute(
        "SELECT case_id FROM resolver.review_case WHERE tenant_id = %s AND listing_id = %s",
        (tenant_id, listing_id),
    ).fetchall()
    return [str(row["case_id"]) for row in rows]

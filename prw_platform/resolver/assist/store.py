"""The LLM tables (migration 0016): proposals, advice and the per-tenant daily budget. Owner of
``resolver.llm_extraction``, ``resolver.llm_advice`` and ``resolver.llm_usage``.

Every function takes a connection whose ``app.tenant_id`` is the tenant (row-level security, INV-06).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from prw_platform.db.database import Connection

PROPOSED = "proposed"
ADVISED = "advised"
SCHEMA_INVALID = "output_schema_invalid"


@dataclass(frozen=True, slots=True)
class ExtractionKey:
    """if_llm_extract Idempotency: (capture_id, artifact sha256, prompt version, model id)."""

    tenant_id: str
    capture_id: str
    artifact_sha256: str
    prompt_version: str
    model_id: str


@dataclass(frozen=True, slots=True)
class AdviceKey:
    """if_llm_review Idempotency: (case_id, case revision, prompt version), and the model asked."""

    tenant_id: str
    case_id: str
    case_revision: int
    prompt_version: str
    model_id: str


@dataclass(frozen=True, slots=True)
class Proposal:
    capture_id: str
    artifact_sha256: str
    prompt_version: str
    model_id: str
    status: str
    claims: list[dict[str, Any]]
    diagnostics: list[str]
    answered_by: str | None
    repaired: bool
    error: str | None
    case_id: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Advice:
    case_id: str
    case_revision: int
    prompt_version: str
    model_id: str
    status: str
    recommendation: dict[str, Any] | None
    advisory: bool
    answered_by: str | None
    repaired: bool
    error: str | None
    created_at: datetime


_PROPOSAL_COLUMNS = """capture_id, artifact_sha256, prompt_version, model_id, status, claims, diagnostics,
       answered_by, repaired, error, case_id, created_at"""
_ADVICE_COLUMNS = """case_id, case_revision, prompt_version, model_id, status, recommendation, advisory,
       answered_by, repaired, error, created_at"""


def cached_proposal(conn: Connection, key: ExtractionKey) -> Proposal | None:
    with conn.cursor(row_factory=class_row(Proposal)) as cur:
        return cur.execute(
            f"""SELECT {_PROPOSAL_COLUMNS} FROM resolver.llm_extraction
                WHERE tenant_id = %s AND capture_id = %s AND artifact_sha256 = %s AND prompt_version = %s
                  AND model_id = %s""",  # noqa: S608 - a column list constant
            (key.tenant_id, key.capture_id, key.artifact_sha256, key.prompt_version, key.model_id),
        ).fetchone()


def record_proposal(
    conn: Connection,
    key: ExtractionKey,
    catalog_id: str,
    case_id: str | None,
    *,
    status: str,
    claims: list[dict[str, Any]],
    diagnostics: list[str],
    answered_by: str | None,
    repaired: bool,
    error: str | None,
    now: datetime,
) -> Proposal:
    """Store an answer; a concurrent redelivery that stored one first wins (the first answer is the cached one)."""
    conn.execute(
        """INSERT INTO resolver.llm_extraction (tenant_id, catalog_id, capture_id, artifact_sha256, prompt_version,
               model_id, status, claims, diagnostics, answered_by, repaired, error, case_id, created_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, capture_id, artifact_sha256, prompt_version, model_id) DO NOTHING""",
        (
            key.tenant_id,
            catalog_id,
            key.capture_id,
            key.artifact_sha256,
            key.prompt_version,
            key.model_id,
            status,
            Jsonb(claims),
            Jsonb(diagnostics),
            answered_by,
            repaired,
            error,
            case_id,
            now,
        ),
    )
    stored = cached_proposal(conn, key)
    assert stored is not None
    return stored


def proposals_for_capture(conn: Connection, tenant_id: str, capture_id: str) -> list[Proposal]:
    with conn.cursor(row_factory=class_row(Proposal)) as cur:
        return cur.execute(
            f"""SELECT {_PROPOSAL_COLUMNS} FROM resolver.llm_extraction
                WHERE tenant_id = %s AND capture_id = %s ORDER BY created_at""",  # noqa: S608 - a column list constant
            (tenant_id, capture_id),
        ).fetchall()


def cached_advice(conn: Connection, key: AdviceKey) -> Advice | None:
    with conn.cursor(row_factory=class_row(Advice)) as cur:
        return cur.execute(
            f"""SELECT {_ADVICE_COLUMNS} FROM resolver.llm_advice
                WHERE tenant_id = %s AND case_id = %s AND case_revision = %s AND prompt_version = %s
                  AND model_id = %s""",  # noqa: S608 - a column list constant
            (key.tenant_id, key.case_id, key.case_revision, key.prompt_version, key.model_id),
        ).fetchone()


def record_advice(
    conn: Connection,
    key: AdviceKey,
    catalog_id: str,
    *,
    status: str,
    recommendation: dict[str, Any] | None,
    answered_by: str | None,
    repaired: bool,
    error: str | None,
    now: datetime,
) -> Advice:
    conn.execute(
        """INSERT INTO resolver.llm_advice (tenant_id, catalog_id, case_id, case_revision, prompt_version, model_id,
               status, recommendation, advisory, answered_by, repaired, error, created_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, true, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, case_id, case_revision, prompt_version, model_id) DO NOTHING""",
        (
            key.tenant_id,
            catalog_id,
            key.case_id,
            key.case_revision,
            key.prompt_version,
            key.model_id,
            status,
            None if recommendation is None else Jsonb(recommendation),
            answered_by,
            repaired,
            error,
            now,
        ),
    )
    stored = cached_advice(conn, key)
    assert stored is not None
    return stored


def advice_for_case(conn: Connection, tenant_id: str, case_id: str) -> list[Advice]:
    with conn.cursor(row_factory=class_row(Advice)) as cur:
        return cur.execute(
            f"""SELECT {_ADVICE_COLUMNS} FROM resolver.llm_advice
                WHERE tenant_id = %s AND case_id = %s ORDER BY case_revision, created_at""",  # noqa: S608
            (tenant_id, case_id),
        ).fetchall()


def spend_call(conn: Connection, tenant_id: str, day: date, budget: int) -> bool:
    """Take one call of the tenant's budget for ``day``; False (nothing taken) when it is spent. Atomic: two
    consumers racing for the last call cannot both get it (the row lock of the upsert)."""
    if budget <= 0:
        return False
    row = conn.execute(
        """INSERT INTO resolver.llm_usage AS u (tenant_id, day, calls) VALUES (%s, %s, 1)
           ON CONFLICT (tenant_id, day) DO UPDATE SET calls = u.calls + 1 WHERE u.calls < %s
           RETURNING calls""",
        (tenant_id, day, budget),
    ).fetchone()
    return row is not None


def calls_on(conn: Connection, tenant_id: str, day: date) -> int:
    with conn.cursor(row_factory=scalar_row) as cur:
        calls = cur.execute(
            "SELECT calls FROM resolver.llm_usage WHERE tenant_id = %s AND day = %s", (tenant_id, day)
        ).fetchone()
    return int(calls) if calls is not None else 0

"""The consumer's own rows: its inbox entries and the results of migration 0006 (the job's status belongs to
intake's ``jobs`` module, the owner of ``resolver.resolution_job``).

Everything here runs inside the consumer's one write transaction (if_resolution_job: "The consumer writes job_id
to its inbox table in the same transaction as its results").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import ResolutionJob
from prw_platform.db.database import Connection
from prw_platform.plugins import ListingFields
from prw_platform.resolver.decisions import DecisionResult, get_decision
from prw_platform.resolver.resolution.documents import json_value, problem_documents
from prw_platform.resolver.resolution.extraction import ExtractionRun, StageError
from prw_platform.resolver.resolution.outcomes import DEAD_LETTERED, Outcome
from prw_platform.resolver.resolution.profiles import NormalizationRun, stage_outcome

#: The inbox outcome while the transaction that claimed the job is still open (never visible to others).
_CLAIMED = "claimed"


@dataclass(frozen=True, slots=True)
class JobResults:
    job: ResolutionJob
    catalog_id: str
    extraction: ExtractionRun
    normalization: NormalizationRun | None
    identity: dict[str, Any]

    @property
    def stage_outcome(self) -> str:
        return stage_outcome(self.extraction, self.normalization)


def claim_inbox(conn: Connection, tenant_id: str, consumer: str, job_id: str, now: datetime) -> bool:
    """Insert the inbox row first: a concurrent delivery of the same job blocks on it until this transaction
    ends, then finds it and is a duplicate (STYLE.md: a unique violation means "already done"). A job this
    consumer dead-lettered is not done: a redrive (or the sweeper's re-send) claims its row again."""
    row = conn.execute(
        """INSERT INTO resolver.consumer_inbox (tenant_id, consumer, message_id, outcome, processed_at)
           VALUES (%s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, consumer, message_id) DO UPDATE
               SET outcome = excluded.outcome, processed_at = excluded.processed_at
               WHERE resolver.consumer_inbox.outcome = %s
           RETURNING message_id""",
        (tenant_id, consumer, job_id, _CLAIMED, now, DEAD_LETTERED),
    ).fetchone()
    return row is not None


def record_dead_letter(conn: Connection, tenant_id: str, consumer: str, job_id: str, now: datetime) -> bool:
    """The inbox row of a job this consumer dead-letters (in the transaction that fails its receipt); False
    when a delivery of the job already committed an outcome (then nothing is failed)."""
    row = conn.execute(
        """INSERT INTO resolver.consumer_inbox (tenant_id, consumer, message_id, outcome, processed_at)
           VALUES (%s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, consumer, message_id) DO UPDATE SET processed_at = excluded.processed_at
               WHERE resolver.consumer_inbox.outcome = %s
           RETURNING message_id""",
        (tenant_id, consumer, job_id, DEAD_LETTERED, now, DEAD_LETTERED),
    ).fetchone()
    return row is not None


def settle_inbox(conn: Connection, tenant_id: str, consumer: str, job_id: str, outcome: str) -> None:
    conn.execute(
        """UPDATE resolver.consumer_inbox SET outcome = %s
           WHERE tenant_id = %s AND consumer = %s AND message_id = %s""",
        (outcome, tenant_id, consumer, job_id),
    )


def insert_results(conn: Connection, results: JobResults, decision: DecisionResult, now: datetime) -> None:
    job, extraction, normalization = results.job, results.extraction, results.normalization
    result = normalization.normalization if normalization else None
    listing = extraction.extraction.listing if extraction.extraction else None
    error = extraction.error or (normalization.error if normalization else None)
    conn.execute(
        """INSERT INTO resolver.resolution_result (tenant_id, job_id, capture_id, catalog_id, stage_outcome,
               adapter, adapter_rule, profile, profile_rule, listing, problems, diagnostics, error, identity,
               decision_id, created_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            job.tenant_id,
            job.job_id,
            job.capture_id,
            results.catalog_id,
            results.stage_outcome,
            extraction.adapter,
            extraction.adapter_rule,
            normalization.pin if normalization else None,
            normalization.rule if normalization else None,
            Jsonb(json_value(_listing_document(listing))),
            Jsonb(problem_documents(result.problems) if result else []),
            Jsonb(json_value(list(extraction.diagnostics))),
            Jsonb(_error(error)) if error else None,
            Jsonb(json_value(results.identity)),
            decision.decision_id,
            now,
        ),
    )
    with conn.cursor() as cursor:
        cursor.executemany(
            """INSERT INTO resolver.extracted_claim (tenant_id, job_id, ordinal, attribute, value, evidence_locator)
               VALUES (%s, %s, %s, %s, %s, %s)""",
            [
                (
                    job.tenant_id,
                    job.job_id,
                    ordinal,
                    c.attribute,
                    Jsonb(json_value(c.value)),
                    c.evidence_locator,
                )
                for ordinal, c in enumerate(extraction.claims)
            ],
        )
        cursor.executemany(
            """INSERT INTO resolver.normalized_attribute
                   (tenant_id, job_id, key, value, unit, definition_version, evidence_locators)
               VALUES (%s, %s, %s, %s, %s, %s, %s)""",
            [
                (
                    job.tenant_id,
                    job.job_id,
                    a.key,
                    Jsonb(json_value(a.value)),
                    a.unit,
                    a.definition_version,
                    Jsonb(list(a.evidence_locators)),
                )
                for a in (result.attributes if result else ())
            ],
        )


@dataclass(frozen=True, slots=True)
class _Committed:
    outcome: str
    stage_outcome: str | None
    decision_id: str | None


def committed_outcome(conn: Connection, tenant_id: str, consumer: str, job_id: str) -> Outcome | None:
    """What an earlier, committed handling of this job came to; None when the job was never completed.
    Used for a duplicate delivery and, after an ambiguous COMMIT, to learn whether it committed (if_db)."""
    with conn.cursor(row_factory=class_row(_Committed)) as cur:
        row = cur.execute(
            """SELECT i.outcome, r.stage_outcome, r.decision_id
               FROM resolver.consumer_inbox i
               LEFT JOIN resolver.resolution_result r
                      ON r.tenant_id = i.tenant_id AND r.job_id = i.message_id
               WHERE i.tenant_id = %s AND i.consumer = %s AND i.message_id = %s""",
            (tenant_id, consumer, job_id),
        ).fetchone()
    if row is None:
        return None
    decision = get_decision(conn, tenant_id, row.decision_id) if row.decision_id else None
    return Outcome(
        status=row.outcome,
        job_id=job_id,
        stage_outcome=row.stage_outcome,
        decision=decision.action if decision else None,
        decision_id=decision.decision_id if decision else None,
        item_id=decision.item_id if decision else None,
        listing_id=decision.listing_id if decision else None,
        case_id=decision.case_id if decision else None,
    )


def _listing_document(listing: ListingFields | None) -> dict[str, Any]:
    if listing is None:
        return {}
    return {
        "title": listing.title,
        "url": listing.url,
        "price": listing.price,
        "currency": listing.currency,
        "availability": listing.availability,
    }


def _error(error: StageError) -> dict[str, str]:
    return {"code": error.code, "message": error.message}


def captures_extracted_by(
    conn: Connection, tenant_id: str, adapter: str, capture_ids: Sequence[str]
) -> set[str]:
    """Which of ``capture_ids`` have a result extracted by the adapter pin ``adapter`` (an improvement's selection)."""
    rows = conn.execute(
        """SELECT DISTINCT capture_id FROM resolver.resolution_result
           WHERE tenant_id = %s AND adapter = %s AND capture_id = ANY(%s)""",
        (tenant_id, adapter, list(capture_ids)),
    ).fetchall()
    return {str(row["capture_id"]) for row in rows}


@dataclass(frozen=True, slots=True)
class CaptureResults:
    """What the consumer last recorded for a capture: the "before" of an improvement replay's diff."""

    job_id: str
    stage_outcome: str
    adapter: str | None
    profile: str | None
    claims: list[dict[str, Any]]
    attributes: list[dict[str, Any]]
    identity: dict[str, Any]


def latest_results(conn: Connection, tenant_id: str, capture_id: str) -> CaptureResults | None:
    """The newest result of the capture (its claims in order, its normalized attributes by key), or None."""
    head = conn.execute(
        """SELECT job_id, stage_outcome, adapter, profile, identity FROM resolver.resolution_result
           WHERE tenant_id = %s AND capture_id = %s ORDER BY created_at DESC, job_id DESC LIMIT 1""",
        (tenant_id, capture_id),
    ).fetchone()
    if head is None:
        return None
    job_id = str(head["job_id"])
    claims = conn.execute(
        """SELECT attribute, value, evidence_locator FROM resolver.extracted_claim
           WHERE tenant_id = %s AND job_id = %s ORDER BY ordinal""",
        (tenant_id, job_id),
    ).fetchall()
    attributes = conn.execute(
        """SELECT key, value, unit FROM resolver.normalized_attribute
           WHERE tenant_id = %s AND job_id = %s ORDER BY key""",
        (tenant_id, job_id),
    ).fetchall()
    identity = head["identity"]
    return CaptureResults(
        job_id=job_id,
        stage_outcome=str(head["stage_outcome"]),
        adapter=None if head["adapter"] is None else str(head["adapter"]),
        profile=None if head["profile"] is None else str(head["profile"]),
        claims=[dict(row) for row in claims],
        attributes=[dict(row) for row in attributes],
        identity=dict(identity) if isinstance(identity, dict) else {},
    )

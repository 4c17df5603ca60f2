"""The consumer's own rows: its inbox entries and the results of migrations 0006 and 0016 (the job's status
belongs to intake's ``jobs`` module, the owner of ``resolver.resolution_job``).

Every write here runs inside one stage's one write transaction (if_resolution_job: the job id goes into the
inbox in the same transaction as the results). Each stage job writes one ``resolution_result`` row of its own
(0016's ``stage``) and, for extract and normalize, its claims or normalized attributes under its own job id;
the next stage reads them back (``load_extraction``, ``load_normalization``) instead of receiving a copy, so
the stored rows are the one source of truth for the later stages and for replays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, cast

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import ResolutionJob
from prw_platform.db.database import Connection
from prw_platform.plugins import (
    CaptureView,
    Claim,
    Extraction,
    ListingFields,
    Normalization,
    NormalizationProblem,
    NormalizationProfile,
    NormalizedAttribute,
    PluginRegistry,
)
from prw_platform.resolver.decisions import DecisionResult, get_decision
from prw_platform.resolver.resolution.documents import json_value, problem_documents
from prw_platform.resolver.resolution.extraction import AdapterRule, ExtractionRun, StageError, StageOutcome
from prw_platform.resolver.resolution.outcomes import DEAD_LETTERED, Outcome
from prw_platform.resolver.resolution.profiles import NormalizationRun, ProfileRule, stage_outcome

#: The inbox outcome while the transaction that claimed the job is still open (never visible to others).
_CLAIMED = "claimed"


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


def insert_extraction(
    conn: Connection, job: ResolutionJob, catalog_id: str, extraction: ExtractionRun, now: datetime
) -> None:
    """The extract stage's results: its row (adapter, listing, diagnostics, error) and the adapter's claims."""
    listing = extraction.extraction.listing if extraction.extraction else None
    conn.execute(
        """INSERT INTO resolver.resolution_result (tenant_id, job_id, stage, capture_id, catalog_id, stage_outcome,
               adapter, adapter_rule, listing, diagnostics, error, created_at)
           VALUES (%s, %s, 'extract', %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            job.tenant_id,
            job.job_id,
            job.capture_id,
            catalog_id,
            extraction.stage_outcome,
            extraction.adapter,
            extraction.adapter_rule,
            Jsonb(json_value(_listing_document(listing))),
            Jsonb(json_value(list(extraction.diagnostics))),
            Jsonb(_error(extraction.error)) if extraction.error else None,
            now,
        ),
    )
    with conn.cursor() as cursor:
        cursor.executemany(
            """INSERT INTO resolver.extracted_claim
                   (tenant_id, job_id, ordinal, attribute, value, evidence_locator, source, confidence)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
            [
                (
                    job.tenant_id,
                    job.job_id,
                    ordinal,
                    c.attribute,
                    Jsonb(json_value(c.value)),
                    c.evidence_locator,
                    c.source,
                    c.confidence,
                )
                for ordinal, c in enumerate(extraction.claims)
            ],
        )


def insert_normalization(
    conn: Connection,
    job: ResolutionJob,
    catalog_id: str,
    extraction: ExtractionRun,
    normalization: NormalizationRun | None,
    now: datetime,
) -> None:
    """The normalize stage's results: its row (profile, problems, error) and the profile's values. Without a
    normalization (extraction did not extract) the row carries the extraction's outcome and no profile."""
    result = normalization.normalization if normalization else None
    error = normalization.error if normalization else None
    conn.execute(
        """INSERT INTO resolver.resolution_result (tenant_id, job_id, stage, capture_id, catalog_id, stage_outcome,
               profile, profile_rule, problems, error, created_at)
           VALUES (%s, %s, 'normalize', %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            job.tenant_id,
            job.job_id,
            job.capture_id,
            catalog_id,
            stage_outcome(extraction, normalization),
            normalization.pin if normalization else None,
            normalization.rule if normalization else None,
            Jsonb(problem_documents(result.problems) if result else []),
            Jsonb(_error(error)) if error else None,
            now,
        ),
    )
    with conn.cursor() as cursor:
        cursor.executemany(
            """INSERT INTO resolver.normalized_attribute
                   (tenant_id, job_id, key, value, unit, definition_version, evidence_locators, confidence, withheld)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)""",
            [
                (
                    job.tenant_id,
                    job.job_id,
                    a.key,
                    Jsonb(json_value(a.value)),
                    a.unit,
                    a.definition_version,
                    Jsonb(list(a.evidence_locators)),
                    a.confidence,
                    withheld,
                )
                for withheld, attributes in (
                    (False, result.attributes if result else ()),
                    (True, result.withheld if result else ()),
                )
                for a in attributes
            ],
        )


def insert_identity(
    conn: Connection,
    job: ResolutionJob,
    catalog_id: str,
    outcome: str,
    identity: dict[str, Any],
    decision: DecisionResult,
    now: datetime,
) -> None:
    """The identity stage's results: how identity was resolved and the decision it led to."""
    conn.execute(
        """INSERT INTO resolver.resolution_result (tenant_id, job_id, stage, capture_id, catalog_id, stage_outcome,
               identity, decision_id, created_at)
           VALUES (%s, %s, 'identity', %s, %s, %s, %s, %s, %s)""",
        (
            job.tenant_id,
            job.job_id,
            job.capture_id,
            catalog_id,
            outcome,
            Jsonb(json_value(identity)),
            decision.decision_id,
            now,
        ),
    )


def has_results(conn: Connection, tenant_id: str, job_id: str) -> bool:
    """Job ``job_id`` wrote its results already (a delivery after its inbox row was pruned)."""
    with conn.cursor(row_factory=scalar_row) as cur:
        found = cur.execute(
            "SELECT EXISTS (SELECT 1 FROM resolver.resolution_result WHERE tenant_id = %s AND job_id = %s)",
            (tenant_id, job_id),
        ).fetchone()
    return bool(found)


@dataclass(frozen=True, slots=True)
class _StageRow:
    stage_outcome: str
    adapter: str | None
    adapter_rule: str | None
    profile: str | None
    profile_rule: str | None
    listing: dict[str, Any]
    problems: list[dict[str, Any]]
    diagnostics: list[str]
    error: dict[str, str] | None


def _stage_row(conn: Connection, tenant_id: str, job_id: str, stage: str) -> _StageRow | None:
    with conn.cursor(row_factory=class_row(_StageRow)) as cur:
        return cur.execute(
            """SELECT stage_outcome, adapter, adapter_rule, profile, profile_rule, listing, problems, diagnostics,
                      error
               FROM resolver.resolution_result WHERE tenant_id = %s AND job_id = %s AND stage = %s""",
            (tenant_id, job_id, stage),
        ).fetchone()


def load_extraction(conn: Connection, tenant_id: str, job_id: str, view: CaptureView) -> ExtractionRun | None:
    """The committed results of extract job ``job_id`` as the run that wrote them; None when there are none."""
    row = _stage_row(conn, tenant_id, job_id, "extract")
    if row is None:
        return None
    with conn.cursor(row_factory=class_row(Claim)) as cur:
        claims = tuple(
            cur.execute(
                """SELECT attribute, value, evidence_locator, source, confidence FROM resolver.extracted_claim
                   WHERE tenant_id = %s AND job_id = %s ORDER BY ordinal""",
                (tenant_id, job_id),
            ).fetchall()
        )
    outcome = cast(StageOutcome, row.stage_outcome)
    extraction = (
        Extraction(row.adapter or "", claims, _listing(row.listing), tuple(row.diagnostics))
        if outcome == "extracted"
        else None
    )
    return ExtractionRun(
        outcome,
        view,
        row.adapter,
        cast(AdapterRule | None, row.adapter_rule),
        extraction,
        () if extraction else tuple(row.diagnostics),
        StageError(row.error["code"], row.error["message"]) if row.error else None,
    )


def load_normalization(
    conn: Connection, registry: PluginRegistry, tenant_id: str, job_id: str
) -> tuple[bool, NormalizationRun | None]:
    """The committed results of normalize job ``job_id``: (found, the run that wrote them, None when the
    extraction gave nothing to normalize). The profile must still be installed (UNKNOWN_PROFILE_VERSION)."""
    row = _stage_row(conn, tenant_id, job_id, "normalize")
    if row is None:
        return False, None
    if row.profile is None:
        return True, None
    profile = registry.profile(row.profile)
    error = StageError(row.error["code"], row.error["message"]) if row.error else None
    if error is not None:
        return True, NormalizationRun(profile, row.profile, cast(ProfileRule, row.profile_rule), None, error)
    with conn.cursor(row_factory=class_row(_AttributeRow)) as cur:
        rows = cur.execute(
            """SELECT key, value, unit, definition_version, evidence_locators, confidence, withheld
               FROM resolver.normalized_attribute WHERE tenant_id = %s AND job_id = %s ORDER BY key""",
            (tenant_id, job_id),
        ).fetchall()
    values = {
        r.key: NormalizedAttribute(
            r.key,
            _typed(profile, r.key, r.value),
            r.definition_version,
            r.unit,
            tuple(r.evidence_locators),
            r.confidence,
        )
        for r in rows
    }
    attributes = tuple(values[r.key] for r in rows if not r.withheld)
    withheld = tuple(values[r.key] for r in rows if r.withheld)
    problems = tuple(
        NormalizationProblem(p["attribute"], p["code"], p["message"], p.get("raw_value"))
        for p in row.problems
    )
    return True, NormalizationRun(
        profile,
        row.profile,
        cast(ProfileRule, row.profile_rule),
        Normalization(row.profile, attributes, problems, withheld),
    )


@dataclass(frozen=True, slots=True)
class _AttributeRow:
    key: str
    value: Any
    unit: str | None
    definition_version: int
    evidence_locators: list[str]
    confidence: float | None
    withheld: bool


def _typed(profile: NormalizationProfile, key: str, value: Any) -> Any:
    """A stored value back in its canonical type: decimals and quantities are stored as their exact text."""
    definition = profile.definitions.get(key)
    if definition is not None and definition.value_type in ("decimal", "quantity") and isinstance(value, str):
        return Decimal(value)
    return value


def _listing(document: dict[str, Any]) -> ListingFields:
    price = document.get("price")
    return ListingFields(
        title=document.get("title"),
        url=document.get("url"),
        price=Decimal(price) if isinstance(price, str) else None,
        currency=document.get("currency"),
        availability=document.get("availability"),
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
    """What the stages last recorded for the capture: the extract row's adapter and claims (in order), the
    normalize row's profile and attributes (by key), the identity row's outcome; a row written before the stages
    were split (``stage = 'all'``) stands for all three. None when the capture was never extracted."""
    rows = conn.execute(
        """SELECT job_id, stage, stage_outcome, adapter, profile, identity, created_at
           FROM resolver.resolution_result WHERE tenant_id = %s AND capture_id = %s
           ORDER BY created_at DESC, job_id DESC""",
        (tenant_id, capture_id),
    ).fetchall()

    def newest(stage: str) -> dict[str, Any] | None:
        return next((dict(r) for r in rows if r["stage"] in (stage, "all")), None)

    extract, normalize, identity = newest("extract"), newest("normalize"), newest("identity")
    if extract is None:
        return None
    claims = conn.execute(
        """SELECT attribute, value, evidence_locator FROM resolver.extracted_claim
           WHERE tenant_id = %s AND job_id = %s ORDER BY ordinal""",
        (tenant_id, extract["job_id"]),
    ).fetchall()
    attributes = (
        conn.execute(
            """SELECT key, value, unit FROM resolver.normalized_attribute
               WHERE tenant_id = %s AND job_id = %s AND NOT withheld ORDER BY key""",
            (tenant_id, normalize["job_id"]),
        ).fetchall()
        if normalize is not None
        else []
    )
    last = identity or normalize or extract
    document = identity["identity"] if identity is not None else None
    return CaptureResults(
        job_id=str(last["job_id"]),
        stage_outcome=str(last["stage_outcome"]),
        adapter=None if extract["adapter"] is None else str(extract["adapter"]),
        profile=None if normalize is None or normalize["profile"] is None else str(normalize["profile"]),
        claims=[dict(row) for row in claims],
        attributes=[dict(row) for row in attributes],
        identity=dict(document) if isinstance(document, dict) else {},
    )

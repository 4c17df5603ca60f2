"""Handle one ``resolution.job.v1`` message (if_resolution_job) of one of the three stages the seed chains:
extract -> normalize -> identity. A stored capture becomes claims, normalized attributes and one decision (a
mapping, a new item or a review case); docs/operators/resolution.md says what each stage does and means.

Every stage validates the message, re-reads the capture in the message's tenant (the row, not the message, is
the truth) and dedupes on the inbox; it writes its results, its inbox row and the next stage's job in one
transaction (on the PostgreSQL queue the next message too, so a crash loses nothing; on SQS the pending-job
sweeper sends what a crash left), and is acked only after that commit. A terminal failure, or a retryable one on
the final delivery, dead-letters the job and fails its receipt in one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime

from pydantic import ValidationError

from prw_platform.contracts import ResolutionJob, SchemaViolation
from prw_platform.db.database import Connection
from prw_platform.plugins import CaptureView
from prw_platform.queues import MAX_RECEIVES_EXCEEDED
from prw_platform.resolver.decisions import DecisionResult, apply_decision, find_decision_by_key
from prw_platform.resolver.intake import jobs, receipts
from prw_platform.resolver.intake.captures import CaptureRecord, load_capture
from prw_platform.resolver.resolution.evidence import read_evidence
from prw_platform.resolver.resolution.extraction import extract
from prw_platform.resolver.resolution.identity import idempotency_key, resolve_identity
from prw_platform.resolver.resolution.outcomes import (
    DEAD_LETTERED,
    IGNORED_DUPLICATE,
    INTERNAL_ERROR,
    PREVIOUS_STAGE_MISSING,
    REVIEW_CASE_OPENED,
    SCHEMA_INVALID,
    STAGE_COMPLETED,
    TENANT_MISMATCH,
    JobRejected,
    Outcome,
    outcome_for_error,
)
from prw_platform.resolver.resolution.profiles import normalize, stage_outcome
from prw_platform.resolver.resolution.results import (
    claim_inbox,
    committed_outcome,
    has_results,
    insert_extraction,
    insert_identity,
    insert_normalization,
    load_extraction,
    load_normalization,
    record_dead_letter,
    settle_inbox,
)
from prw_platform.resolver.resolution.services import ResolutionServices
from prw_platform.resolver.stream.cursor import lock_cursor

log = logging.getLogger(__name__)

#: if_resolution_job's stages, in order (``resolution.job.v1``'s ``stage`` enum).
EXTRACT, NORMALIZE, IDENTITY = "extract", "normalize", "identity"
#: Security alerts (if_resolution_job: "A mismatch goes to the DLQ and raises a security alert").
security_log = logging.getLogger("prw.security")


def handle_resolution_job(
    services: ResolutionServices, message: Mapping[str, object], *, final_attempt: bool = False
) -> Outcome:
    """Handle one message body; never raises for a failure of the job (the Outcome says retry or DLQ).
    ``final_attempt``: no delivery follows this one, so a retryable failure is dead-lettered here."""
    claimed_id = message.get("job_id")
    job_id = claimed_id if isinstance(claimed_id, str) else None
    try:
        job = ResolutionJob.from_message(dict(message))
    except (SchemaViolation, ValidationError) as error:
        log.warning("resolution job %s is schema-invalid: %s", job_id, error)
        return Outcome.dead_letter(SCHEMA_INVALID, str(error), job_id)
    expected_id = ResolutionJob.make_job_id(job.capture_id, job.stage, job.attempt_group)
    if job.job_id != expected_id:
        # if_resolution_job: job_id = capture_id:stage:attempt_group; the inbox and the job row are keyed by it.
        detail = f"job_id {job.job_id} is not capture_id:stage:attempt_group ({expected_id})"
        log.warning("resolution job %s is schema-invalid: %s", job_id, detail)
        return Outcome.dead_letter(SCHEMA_INVALID, detail, job_id)
    try:
        found = services.resolver_db.run(
            lambda conn: _committed_capture(conn, services, job), tenant_id=job.tenant_id, read_only=True
        )
    except Exception as error:
        failed = _failed(services, job, error, capture_in_tenant=False, final_attempt=final_attempt)
        return replace(failed, stage=job.stage)
    if isinstance(found, Outcome):
        return replace(found, stage=job.stage)
    try:
        outcome = _STAGES[job.stage](services, job, found)
    except Exception as error:
        outcome = _failed(services, job, error, capture_in_tenant=True, final_attempt=final_attempt)
    return replace(outcome, stage=job.stage)


def _committed_capture(
    conn: Connection, services: ResolutionServices, job: ResolutionJob
) -> CaptureRecord | Outcome:
    """Steps 2 and 3: the capture as committed in the message's tenant, or the outcome that ends the job."""
    capture = load_capture(conn, job.tenant_id, job.capture_id)
    if capture is None or capture.catalog_id != job.catalog_id:
        found = "absent" if capture is None else f"in catalog {capture.catalog_id}"
        detail = (
            f"job {job.job_id} names tenant {job.tenant_id} catalog {job.catalog_id}; "
            f"capture {job.capture_id} is {found} there"
        )
        _alert(job, detail)
        return Outcome.dead_letter(TENANT_MISMATCH, detail, job.job_id)
    prior = committed_outcome(conn, job.tenant_id, services.consumer, job.job_id)
    if prior is not None and prior.status != DEAD_LETTERED:
        return replace(prior, status=IGNORED_DUPLICATE)
    if capture.source_id != job.source_id:
        log.warning(
            "job %s names source %s; the capture's is %s", job.job_id, job.source_id, capture.source_id
        )
    if {a.sha256 for a in job.artifacts} != {a.sha256 for a in capture.artifacts}:
        log.warning(
            "job %s lists other artifacts than capture %s; the capture's are read", job.job_id, job.capture_id
        )
    return capture


def _extract(services: ResolutionServices, job: ResolutionJob, capture: CaptureRecord) -> Outcome:
    pins = job.pins
    if pins is not None and pins.profile is not None:
        # The pins hold for every stage: a pinned profile that is not installed stops the job here, before any
        # result is written (UNKNOWN_PROFILE_VERSION), rather than at normalize with the claims already stored.
        services.registry.profile(pins.profile)
    artifacts = read_evidence(services.store, capture)
    extraction = extract(services.registry, capture, artifacts, pins.adapter if pins else None)

    def write(conn: Connection, now: datetime) -> None:
        insert_extraction(conn, job, capture.catalog_id, extraction, now)

    return _complete_stage(services, job, NORMALIZE, write, extraction.stage_outcome)


def _normalize(services: ResolutionServices, job: ResolutionJob, capture: CaptureRecord) -> Outcome:
    pins = job.pins
    extract_id = ResolutionJob.make_job_id(job.capture_id, EXTRACT, job.attempt_group)
    extraction = services.resolver_db.run(
        lambda conn: load_extraction(conn, job.tenant_id, extract_id, _view(capture)),
        tenant_id=job.tenant_id,
        read_only=True,
    )
    if extraction is None:
        raise JobRejected(
            PREVIOUS_STAGE_MISSING, f"job {job.job_id}: extract job {extract_id} has no results"
        )
    normalization = (
        normalize(services.registry, services.profiles, extraction.claims, pins.profile if pins else None)
        if extraction.stage_outcome == "extracted"
        else None
    )

    def write(conn: Connection, now: datetime) -> None:
        insert_normalization(conn, job, capture.catalog_id, extraction, normalization, now)

    return _complete_stage(services, job, IDENTITY, write, stage_outcome(extraction, normalization))


def _complete_stage(
    services: ResolutionServices,
    job: ResolutionJob,
    next_stage: str,
    write: Callable[[Connection, datetime], None],
    outcome_of_stage: str,
) -> Outcome:
    """One transaction: the inbox row, the job row, the stage's results (``write``) and the next stage's job (sent
    in it when the queue joins it); after the commit, the send of a job that could not be (module docstring)."""
    next_job = job.model_copy(
        update={
            "stage": next_stage,
            "job_id": ResolutionJob.make_job_id(job.capture_id, next_stage, job.attempt_group),
            "enqueued_at": services.clock(),
        }
    )
    unsent: list[datetime] = []

    def work(conn: Connection) -> Outcome:
        now = services.clock()
        if not claim_inbox(conn, job.tenant_id, services.consumer, job.job_id, now):
            prior = committed_outcome(conn, job.tenant_id, services.consumer, job.job_id)
            return replace(prior or Outcome(IGNORED_DUPLICATE, job_id=job.job_id), status=IGNORED_DUPLICATE)
        jobs.record_completed(conn, job, now)
        if has_results(conn, job.tenant_id, job.job_id):
            # Written by an earlier handling whose inbox row retention has since pruned: results are insert-only
            # (INV-05), so this delivery is a duplicate; the next job was written with them.
            settle_inbox(conn, job.tenant_id, services.consumer, job.job_id, STAGE_COMPLETED)
            return Outcome(IGNORED_DUPLICATE, job_id=job.job_id)
        write(conn, now)
        if not jobs.hand_on(conn, services.enqueuer, next_job, now):
            unsent.append(now)
        settle_inbox(conn, job.tenant_id, services.consumer, job.job_id, STAGE_COMPLETED)
        return Outcome(STAGE_COMPLETED, job_id=job.job_id, stage_outcome=outcome_of_stage)

    outcome = services.resolver_db.run(
        work,
        tenant_id=job.tenant_id,
        verify_commit=lambda conn: committed_outcome(conn, job.tenant_id, services.consumer, job.job_id),
    )
    if unsent and services.enqueuer is not None and outcome.status == STAGE_COMPLETED:
        # Committed pending: send it now; if this fails (or the process dies first) the sweeper sends it.
        jobs.enqueue_after_commit(services.resolver_db, services.enqueuer, next_job, unsent[-1])
    log.info(
        "resolution job %s: %s (%s), next %s",
        job.job_id,
        outcome.status,
        outcome.stage_outcome,
        next_job.job_id,
    )
    return replace(outcome, next_job_id=next_job.job_id)


def _identity(services: ResolutionServices, job: ResolutionJob, capture: CaptureRecord) -> Outcome:
    stream = services.streams(capture.tenant_id, capture.catalog_id)
    extract_id = ResolutionJob.make_job_id(job.capture_id, EXTRACT, job.attempt_group)
    normalize_id = ResolutionJob.make_job_id(job.capture_id, NORMALIZE, job.attempt_group)

    def work(conn: Connection) -> Outcome:
        now = services.clock()
        if not claim_inbox(conn, job.tenant_id, services.consumer, job.job_id, now):
            # A concurrent delivery of the same job committed first (this insert waited for it).
            prior = committed_outcome(conn, job.tenant_id, services.consumer, job.job_id)
            return replace(prior or Outcome(IGNORED_DUPLICATE, job_id=job.job_id), status=IGNORED_DUPLICATE)
        lock_cursor(conn, stream)  # AW-01: identities are read and changed under the stream's cursor lock
        decided = find_decision_by_key(conn, job.tenant_id, idempotency_key(job.job_id))
        if decided is not None:
            # Decided by an earlier handling whose inbox row retention has since pruned: its results are stored
            # too. Re-deciding now could build another command for the same key (the catalog has changed).
            jobs.record_completed(conn, job, now)
            settle_inbox(conn, job.tenant_id, services.consumer, job.job_id, _status(decided.action))
            return _outcome(IGNORED_DUPLICATE, job.job_id, decided.result(replayed=True), None)
        extraction = load_extraction(conn, job.tenant_id, extract_id, _view(capture))
        found, normalization = load_normalization(conn, services.registry, job.tenant_id, normalize_id)
        if extraction is None or not found:
            missing = normalize_id if extraction is not None else extract_id
            raise JobRejected(PREVIOUS_STAGE_MISSING, f"job {job.job_id}: job {missing} has no results")
        identity = resolve_identity(
            conn,
            stream,
            job.job_id,
            capture,
            extraction,
            normalization,
            services.registry.identity_rules,
            replay_provenance(job.trace_id),
        )
        decision = apply_decision(
            conn,
            identity.command,
            stream,
            clock=services.clock,
            definitions=normalization.profile.definitions if normalization else None,
        )
        status = _status(decision.action)
        outcome_of_stage = stage_outcome(extraction, normalization)
        jobs.record_completed(conn, job, now)
        insert_identity(conn, job, capture.catalog_id, outcome_of_stage, identity.summary, decision, now)
        # if_receipt_get: the receipt follows its capture; "accepted" is a committed decision, never "applied".
        receipts.record_decision(
            conn, job.tenant_id, job.capture_id, review=status == REVIEW_CASE_OPENED, now=now
        )
        settle_inbox(conn, job.tenant_id, services.consumer, job.job_id, status)
        return _outcome(status, job.job_id, decision, outcome_of_stage)

    outcome = services.resolver_db.run(
        work,
        tenant_id=job.tenant_id,
        # if_db: after an ambiguous COMMIT the inbox row tells whether it committed.
        verify_commit=lambda conn: committed_outcome(conn, job.tenant_id, services.consumer, job.job_id),
    )
    log.info(
        "resolution job %s: %s (%s, %s %s)",
        job.job_id,
        outcome.status,
        outcome.stage_outcome,
        outcome.decision,
        outcome.decision_id,
    )
    return outcome


_STAGES: dict[str, Callable[[ResolutionServices, ResolutionJob, CaptureRecord], Outcome]] = {
    EXTRACT: _extract,
    NORMALIZE: _normalize,
    IDENTITY: _identity,
}


def _view(capture: CaptureRecord) -> CaptureView:
    """The capture as adapters see it (for a stored extraction: only its media type is read again)."""
    return CaptureView(
        capture_id=capture.capture_id,
        source_id=capture.source_id,
        media_type=capture.media_type,
        url=capture.url,
        observed_at=capture.observed_at,
        adapter_hint=capture.adapter_hint,
    )


def _outcome(status: str, job_id: str, decision: DecisionResult, stage_outcome: str | None) -> Outcome:
    return Outcome(
        status,
        job_id=job_id,
        stage_outcome=stage_outcome,
        decision=decision.action,
        decision_id=decision.decision_id,
        item_id=decision.item_id,
        listing_id=decision.listing_id,
        case_id=decision.case_id,
    )


def _status(action: str) -> str:
    return REVIEW_CASE_OPENED if action == "open_review_case" else STAGE_COMPLETED


def _failed(
    services: ResolutionServices,
    job: ResolutionJob,
    error: Exception,
    *,
    capture_in_tenant: bool,
    final_attempt: bool = False,
) -> Outcome:
    outcome = outcome_for_error(error, job.job_id)
    if outcome.reason == INTERNAL_ERROR:
        log.exception("resolution job %s failed unexpectedly; retried later", job.job_id)
    else:
        log.warning("resolution job %s: %s %s", job.job_id, outcome.status, outcome.detail)
    if outcome.disposition == "retry" and final_attempt:
        # if_resolution_job: "After 5 failed deliveries (PROP) the message moves to the dead-letter queue";
        # this was the last one, so the consumer moves it now, with the queue's code, and fails the receipt.
        outcome = Outcome.dead_letter(
            MAX_RECEIVES_EXCEEDED, f"last delivery failed with {outcome.reason}: {outcome.detail}", job.job_id
        )
    if outcome.reason == TENANT_MISMATCH:
        _alert(job, outcome.detail or "")
    elif outcome.disposition == "dead_letter" and (capture_in_tenant or final_attempt):
        reason = outcome.reason or INTERNAL_ERROR

        def mark(conn: Connection) -> bool:
            now = services.clock()
            if not record_dead_letter(conn, job.tenant_id, services.consumer, job.job_id, now):
                return False  # a delivery of this job committed its outcome meanwhile
            jobs.mark_dead_lettered(conn, job.tenant_id, job.job_id)
            receipts.record_failure(conn, job.tenant_id, job.capture_id, reason, now)
            return True

        try:
            if not services.resolver_db.run(mark, tenant_id=job.tenant_id):
                return Outcome(IGNORED_DUPLICATE, job_id=job.job_id)
        except Exception as marking:
            if final_attempt:
                # Nothing follows this delivery: dead-letter it anyway (the receipt stays ``stored``; the
                # operator sees the DLQ entry and the job row still pending or enqueued).
                log.error("job %s dead-lettered; its receipt could not be failed", job.job_id, exc_info=True)
                return outcome
            # The job row keeps its status; the message is retried and dead-lettered again next time.
            return outcome_for_error(marking, job.job_id)
    return outcome


def _alert(job: ResolutionJob, detail: str) -> None:
    security_log.error(
        "SECURITY ALERT TENANT_MISMATCH job_id=%s tenant_id=%s catalog_id=%s capture_id=%s trace_id=%s: %s",
        job.job_id,
        job.tenant_id,
        job.catalog_id,
        job.capture_id,
        job.trace_id,
        detail,
    )


#: An apply replay's job carries ``trace_id = replay:<replay_id>:<improvement_id>``.
REPLAY_TRACE_PREFIX = "replay:"


def replay_provenance(trace_id: str | None) -> tuple[str, ...]:
    """The replay and improvement an apply replay's job came from, as evidence refs of its decision."""
    if not trace_id or not trace_id.startswith(REPLAY_TRACE_PREFIX):
        return ()
    parts = trace_id.removeprefix(REPLAY_TRACE_PREFIX).split(":")
    return tuple(p for p in parts if p.startswith(("rpl_", "imp_")))

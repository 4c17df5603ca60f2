"""Capture submission (if_capture_submit, AW-02): one resolver transaction checks the credential and the stored
artifacts and stores capture + artifacts + receipt + resolution job, with the job's message on the PostgreSQL
queue (``prw_platform.resolver.intake.jobs``); on another queue the job is enqueued after the commit.

Round trips of one capture on the PostgreSQL queue, history epoch cached (pinned by
tests/integration/intake/test_capture_round_trips.py): BEGIN, the tenant, the credential, the stored artifacts,
the key's advisory lock, the key's receipt, the writes as one pipeline, COMMIT.

Idempotency (if_capture_submit): an Idempotency-Key is unique per tenant within the dedupe window ("Dedupe
window PROP 7 days", ``IntakeLimits.idempotency_window``). Within it, the same key with the same body (the
canonical sha256 of the attributed request) returns the existing receipt (200); the same key with another body
is 409 IDEMPOTENCY_CONFLICT and the transaction rolls back, so nothing is persisted. A key whose latest receipt
is older than the window starts a new capture with a new receipt (202), stored as the key's next
``key_generation`` (migration 0009): the unique constraint holds per generation, and the old receipt stays.
Two identical submits racing each other serialize on a transaction-scoped advisory lock of (tenant, key): the
second one waits, then sees the first one's receipt, so one capture is stored.

``execution_region`` and ``egress`` are stored on the capture (columns and body) and never treated as a market
(if_source_fetch): they say where the collector ran and how it reached the site.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import CAPTURES_WRITE
from prw_platform.contracts import ArtifactRef, ResolutionJob
from prw_platform.db.database import Connection
from prw_platform.resolver.intake import artifacts, receipts
from prw_platform.resolver.intake.artifacts import StoredArtifact
from prw_platform.resolver.intake.context import IntakeContext
from prw_platform.resolver.intake.errors import (
    ArtifactNotStored,
    IdempotencyConflict,
    TenantScopeDenied,
    ValidationFailed,
)
from prw_platform.resolver.intake.grants import check_attribution, check_capture_source
from prw_platform.resolver.intake.jobs import TransactionalJobEnqueuer, enqueue_after_commit, insert_job
from prw_platform.resolver.intake.receipts import Receipt
from prw_platform.resolver.intake.requests import (
    ArtifactSelector,
    CaptureSubmission,
    attributed_capture,
    canonical_sha256,
    check_idempotency_key,
    check_observed_at,
)
from prw_platform.resolver.intake.uploads import adopt_pending_uploads
from prw_platform.storage.errors import InvalidObjectKey
from prw_platform.storage.errors import TenantScopeDenied as StorageTenantScopeDenied
from prw_platform.storage.keys import parse_tenant_ref

#: if_resolution_job: the first stage; job_id = capture_id:stage:attempt_group.
FIRST_STAGE = "extract"


@dataclass(frozen=True, slots=True)
class SubmittedCapture:
    receipt: Receipt
    #: True for an idempotent replay (200): nothing new was stored.
    replayed: bool
    #: Whether this call sent the job; None on a replay. False leaves it to the sweeper.
    enqueued: bool | None = None
    #: The job still to send after the commit (internal to ``submit_capture``; None in what it returns).
    job: ResolutionJob | None = None


@dataclass(frozen=True, slots=True)
class CaptureRecord:
    """A committed capture as the resolution consumer re-reads it (if_resolution_job: "The consumer re-reads the
    capture row"; "tenant_id and catalog_id are copied from the committed capture row, never from collector
    input"). Immutable once stored (INV-05)."""

    tenant_id: str
    capture_id: str
    catalog_id: str
    source_id: str
    native_record_id: str | None
    url: str | None
    observed_at: datetime
    #: The collector's non-binding adapter preference (a name or a pin), from the stored capture body.
    adapter_hint: str | None
    #: In the collector's order (``capture_artifact.ordinal``): the sha256, size and media type its stored
    #: bytes are checked against (if_object_storage).
    artifacts: tuple[StoredArtifact, ...] = ()
    #: Where the collector ran and the country its traffic left from, as it declared them (``ExecutionRegion``,
    #: ``Egress``). Provenance only: never treated as a market (if_source_fetch), so resolution reads no price
    #: region, availability or shipping destination from them.
    execution_region: dict[str, Any] | None = None
    egress: dict[str, Any] | None = None

    @property
    def media_type(self) -> str:
        """What an adapter's ``supports`` sees: the media type of the capture's first artifact."""
        return self.artifacts[0].media_type if self.artifacts else "application/octet-stream"


def load_capture(conn: Connection, tenant_id: str, capture_id: str) -> CaptureRecord | None:
    """The capture in the transaction's tenant, or None (absent, or another tenant's: row-level security hides
    it, which is exactly a tenant mismatch, INV-06)."""
    with conn.cursor(row_factory=class_row(CaptureRecord)) as cur:
        row = cur.execute(
            """SELECT tenant_id, capture_id, catalog_id, source_id, native_record_id, url, observed_at,
                      nullif(CASE WHEN jsonb_typeof(body -> 'adapter_hint') = 'string'
                                  THEN body ->> 'adapter_hint' END, '') AS adapter_hint,
                      execution_region, egress
               FROM resolver.capture WHERE tenant_id = %s AND capture_id = %s""",
            (tenant_id, capture_id),
        ).fetchone()
    if row is None:
        return None
    with conn.cursor(row_factory=scalar_row) as cur:
        ordered: list[str] = cur.execute(
            """SELECT artifact_id FROM resolver.capture_artifact WHERE tenant_id = %s AND capture_id = %s
               ORDER BY ordinal""",
            (tenant_id, capture_id),
        ).fetchall()
    stored = artifacts.artifacts_by_id(conn, tenant_id, ordered)
    return replace(row, artifacts=tuple(stored[a] for a in ordered))


#: ``send_check(conn, principal)``: sends the query of auth's per-request revocation check (the token's client is
#: still valid) inside the capture's transaction and returns the function that judges its row, raising
#: INVALID_TOKEN or CREDENTIAL_REVOKED (``CollectorAuthService.send_credential_check``).
SendCredentialCheck = Callable[[Connection, CollectorPrincipal], Callable[[], None]]


def submit_capture(
    ctx: IntakeContext,
    principal: CollectorPrincipal,
    idempotency_key: str | None,
    submission: CaptureSubmission,
    send_check: SendCredentialCheck | None = None,
) -> SubmittedCapture:
    """One capture (if_capture_submit, AW-02) in one resolver transaction: the credential check (when
    ``send_check`` is given: the principal's token was verified but its client not yet checked), the stored
    artifacts, the Idempotency-Key, then capture + artifacts + receipt + job row and, on the PostgreSQL queue,
    the job's message. The transaction runs in pipeline mode: BEGIN, the tenant and every read travel in one
    round trip, every write with the COMMIT in another. A queue outside the database gets the job after the
    commit (``enqueue_after_commit``; the sweeper re-sends a job left pending)."""
    try:
        principal.require_scope(CAPTURES_WRITE)
        key = check_idempotency_key(idempotency_key)
        check_observed_at(submission, ctx.clock(), ctx.limits.clock_skew_tolerance)
        check_attribution(principal, submission)
        check_capture_source(principal, submission.source_id)
        digests = _digests(ctx, principal.tenant_id, submission.artifacts)
    except Exception:
        # A revoked credential answers CREDENTIAL_REVOKED before anything about the request, as when the edge
        # checked it first; this costs a transaction only on a refused request.
        if send_check is not None:
            ctx.db.run(lambda conn: send_check(conn, principal)(), tenant_id=principal.tenant_id)
        raise
    body = attributed_capture(
        submission, digests, worker_id=principal.worker_id, instance_id=principal.instance_id
    )
    request_sha256 = canonical_sha256(body)
    history_epoch = ctx.epochs(principal.tenant_id, principal.catalog_id)

    now = ctx.clock()
    capture_id = f"cap_{secrets.token_hex(12)}"
    receipt = Receipt(receipts.new_receipt_id(), capture_id, "stored", now, principal.instance_id)
    window = ctx.limits.idempotency_window
    in_transaction = ctx.enqueuer if isinstance(ctx.enqueuer, TransactionalJobEnqueuer) else None

    def work(conn: Connection) -> SubmittedCapture | _Unstored:
        # The reads go to the server together with BEGIN and the tenant setting (one round trip: the
        # transaction runs in pipeline mode), then are judged in order: the credential first.
        credential_checked = send_check(conn, principal) if send_check is not None else None
        found = artifacts.send_find_artifacts(conn, principal.tenant_id, digests)
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"intake:idempotency:{principal.tenant_id}:{key}",),
        )
        latest = receipts.send_receipt_by_key(conn, principal.tenant_id, key)
        if credential_checked is not None:
            credential_checked()
        stored = found()
        missing = tuple(d for d in digests if d not in stored)
        if missing:
            return _Unstored(missing)
        existing = _replay_or_generation(latest(), request_sha256, now, window)
        if isinstance(existing, SubmittedCapture):
            return existing
        job = _job(principal, submission, capture_id, receipt, stored, digests, now, history_epoch)
        # The writes travel with the COMMIT (the transaction is in pipeline mode): their errors surface there.
        _insert_capture(conn, principal, submission, capture_id, body, now)
        with conn.cursor() as cur:
            cur.executemany(
                """INSERT INTO resolver.capture_artifact (tenant_id, capture_id, artifact_id, ordinal)
                   VALUES (%s, %s, %s, %s)""",
                [
                    (principal.tenant_id, capture_id, stored[digest].artifact_id, ordinal)
                    for ordinal, digest in enumerate(digests)
                ],
            )
        receipts.insert_receipt(conn, principal.tenant_id, receipt, key, request_sha256, existing)
        message = job.to_message()
        sent = in_transaction is not None and in_transaction.enqueue_in(conn, job, message)
        insert_job(conn, job, sent_at=now if sent else None, message=message)
        return SubmittedCapture(receipt, replayed=False, enqueued=True if sent else None, job=job)

    def committed(conn: Connection) -> SubmittedCapture | _Unstored | None:
        # if_db: after an ambiguous COMMIT, the Idempotency-Key tells whether it committed (a committed receipt
        # was received at ``now``, inside the window).
        latest = receipts.receipt_by_key(conn, principal.tenant_id, key)
        found = _replay_or_generation(latest, request_sha256, now, window)
        return found if isinstance(found, SubmittedCapture) else None

    def run() -> SubmittedCapture | _Unstored:
        return ctx.db.run(work, tenant_id=principal.tenant_id, verify_commit=committed, pipeline=True)

    outcome = run()
    if isinstance(outcome, _Unstored):
        # if_artifact_upload: "An artifact can be referenced by a capture only after it reaches status stored";
        # a presigned upload whose bytes are in the store is adopted here, then the capture is tried again.
        adopted = adopt_pending_uploads(ctx, principal.tenant_id, list(outcome.missing))
        still_missing = [d for d in outcome.missing if d not in adopted]
        if still_missing:
            raise ArtifactNotStored(f"not uploaded and verified: {', '.join(still_missing)}")
        outcome = run()
        if isinstance(outcome, _Unstored):
            raise ArtifactNotStored(f"not uploaded and verified: {', '.join(outcome.missing)}")
    if outcome.replayed or outcome.enqueued or outcome.job is None:
        return replace(outcome, job=None)
    # AW-02: "Enqueue job (ref): after commit"; the receipt is durable whether or not this succeeds.
    enqueued = enqueue_after_commit(ctx.db, ctx.enqueuer, outcome.job, ctx.clock())
    return SubmittedCapture(outcome.receipt, replayed=False, enqueued=enqueued)


@dataclass(frozen=True, slots=True)
class _Unstored:
    """Digests of the capture with no stored artifact yet (the transaction then writes nothing)."""

    missing: tuple[str, ...]


def _job(
    principal: CollectorPrincipal,
    submission: CaptureSubmission,
    capture_id: str,
    receipt: Receipt,
    stored: dict[str, StoredArtifact],
    digests: tuple[str, ...],
    now: datetime,
    history_epoch: str,
) -> ResolutionJob:
    return ResolutionJob(
        job_id=ResolutionJob.make_job_id(capture_id, FIRST_STAGE, 1),
        stage=FIRST_STAGE,
        # if_resolution_job: "tenant_id and catalog_id are copied from the committed capture row".
        tenant_id=principal.tenant_id,
        catalog_id=principal.catalog_id,
        capture_id=capture_id,
        receipt_id=receipt.receipt_id,
        source_id=submission.source_id,
        artifacts=tuple(
            ArtifactRef(
                artifact_id=stored[d].artifact_id,
                ref=stored[d].ref,
                sha256=d,
                media_type=stored[d].media_type,
                bytes=stored[d].size,
            )
            for d in digests
        ),
        enqueued_at=now,
        attempt_group=1,
        history_epoch=history_epoch,
    )


def _replay_or_generation(
    existing: receipts.KeyedReceipt | None, request_sha256: str, now: datetime, window: timedelta
) -> SubmittedCapture | int:
    """The replay of the key's latest receipt (``existing``) within the window (or 409), else the key generation
    a new receipt takes: 1 for a key never used, the latest + 1 for a key whose window expired."""
    if existing is None:
        return 1
    if existing.receipt.received_at <= now - window:
        # if_capture_submit: "Dedupe window PROP 7 days": after it the key is free again.
        return existing.key_generation + 1
    if existing.request_sha256 != request_sha256:
        raise IdempotencyConflict("this Idempotency-Key was used with another request body")
    return SubmittedCapture(existing.receipt, replayed=True)


def _insert_capture(
    conn: Connection,
    principal: CollectorPrincipal,
    submission: CaptureSubmission,
    capture_id: str,
    body: dict[str, object],
    now: datetime,
) -> None:
    conn.execute(
        """INSERT INTO resolver.capture (tenant_id, capture_id, catalog_id, source_id, worker_id, instance_id,
               native_record_id, url, schema_version, observed_at, received_at, body, execution_region, egress)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            principal.tenant_id,
            capture_id,
            principal.catalog_id,
            submission.source_id,
            principal.worker_id,
            principal.instance_id,
            submission.native_record_id,
            submission.url,
            submission.schema_version,
            submission.observed_at,
            now,
            Jsonb(body),
            # Where the collector ran and how it reached the site: never a market (if_source_fetch).
            Jsonb(body["execution_region"]) if "execution_region" in body else None,
            Jsonb(body["egress"]) if "egress" in body else None,
        ),
    )


def _digests(ctx: IntakeContext, tenant_id: str, selectors: tuple[ArtifactSelector, ...]) -> tuple[str, ...]:
    if len(selectors) > ctx.limits.max_artifacts_per_capture:
        raise ValidationFailed(f"at most {ctx.limits.max_artifacts_per_capture} artifacts per capture")
    digests: list[str] = []
    for selector in selectors:
        if selector.sha256 is not None:
            digests.append(selector.sha256)
            continue
        assert selector.ref is not None
        try:
            key = parse_tenant_ref(selector.ref, tenant_id)
        except StorageTenantScopeDenied as error:
            raise TenantScopeDenied(str(error)) from error
        except InvalidObjectKey as error:
            raise ValidationFailed(f"artifact ref {selector.ref!r} is not valid: {error}") from error
        if key.bucket != ctx.evidence_bucket:
            raise ValidationFailed(f"artifact ref {selector.ref!r} is not in the evidence bucket")
        digests.append(key.sha256)
    if len(set(digests)) != len(digests):
        raise ValidationFailed("an artifact is listed twice")
    return tuple(digests)


def select_capture_ids(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    *,
    source_id: str | None = None,
    observed_from: datetime | None = None,
    observed_to: datetime | None = None,
    capture_ids: Sequence[str] | None = None,
    limit: int,
) -> list[str]:
    """The catalog's captures that match every given criterion (an improvement's selection), oldest
    observation first, at most ``limit``. ``observed_to`` is exclusive."""
    rows = conn.execute(
        """SELECT capture_id FROM resolver.capture
           WHERE tenant_id = %(tenant)s AND catalog_id = %(catalog)s
             AND (%(source)s::text IS NULL OR source_id = %(source)s)
             AND (%(from)s::timestamptz IS NULL OR observed_at >= %(from)s)
             AND (%(to)s::timestamptz IS NULL OR observed_at < %(to)s)
             AND (%(ids)s::text[] IS NULL OR capture_id = ANY(%(ids)s))
           ORDER BY observed_at, capture_id
           LIMIT %(limit)s""",
        {
            "tenant": tenant_id,
            "catalog": catalog_id,
            "source": source_id,
            "from": observed_from,
            "to": observed_to,
            "ids": None if capture_ids is None else list(capture_ids),
            "limit": limit,
        },
    ).fetchall()
    return [str(row["capture_id"]) for row in rows]

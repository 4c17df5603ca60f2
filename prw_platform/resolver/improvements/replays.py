"""Improvement replays (seed 003 if_replay_job): request one, consume its messages, record their diffs.

A request (``POST /v1/improvements/{id}/replays``) checks the pins and records the replay in one transaction, then
sends one ``resolution.replay.v1`` message per selected capture; asking again resumes a send that failed part way.
The ``replay`` stage re-runs each capture's stored bytes (never re-fetched) through extraction, normalization and
identity with the pins, read-only, and writes the diff in one transaction that is also its inbox. Apply mode, for a
reviewer-approved improvement only, starts the capture's next pinned resolution attempt in that transaction, so
new claims reach the catalog only through the accept path (AW-01) and a release. docs/operators/improvements.md
has the errors, dead letters and diff fields.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from pydantic import ValidationError

from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import (
    ArtifactRef,
    JobPins,
    ReplayPins,
    ResolutionJob,
    ResolutionReplay,
    SchemaViolation,
    StreamKey,
)
from prw_platform.db.database import Connection, Database
from prw_platform.db.errors import DatabaseUnavailable
from prw_platform.plugins import PluginRegistry, UnknownAdapterVersion, UnknownProfileVersion
from prw_platform.queues import OutgoingMessage, Queue, Received
from prw_platform.resolver.improvements import replay_store, store
from prw_platform.resolver.improvements.errors import (
    EmptySelection,
    ImprovementNotFound,
    InvalidImprovementTransition,
    ReplayForbidden,
    ReplayInProgress,
    UnknownDefinitionVersion,
)
from prw_platform.resolver.improvements.pins import IDENTITY_GENERATION, check_pins, definition_versions
from prw_platform.resolver.improvements.service import Selection, selected_captures
from prw_platform.resolver.intake import jobs
from prw_platform.resolver.intake.captures import CaptureRecord, load_capture
from prw_platform.resolver.intake.jobs import JobEnqueuer
from prw_platform.resolver.resolution.consumer import REPLAY_TRACE_PREFIX
from prw_platform.resolver.resolution.dry_run import AUTO, DryRun, DryRunRequest, DryRunService
from prw_platform.resolver.resolution.generations import make_live
from prw_platform.resolver.resolution.identity import RULE_REVIEW
from prw_platform.resolver.resolution.outcomes import JobRejected
from prw_platform.resolver.resolution.results import CaptureResults, latest_results
from prw_platform.retry import RetryPolicy
from prw_platform.storage import StorageError, StorageUnavailable

log = logging.getLogger(__name__)

Mode = Literal["dry_run", "apply"]
#: Messages per send.
SEND_BATCH: Final = 10
CAPTURE_NOT_IN_TENANT: Final = "CAPTURE_NOT_IN_TENANT"
#: The actor of a review case in the identity summary: a listing that goes to review rather than to an item.
REVIEW_RULE: Final = RULE_REVIEW
EXTRACT_STAGE: Final = "extract"


@dataclass(frozen=True, slots=True)
class ReplayRequested:
    replay: replay_store.Replay
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class ReplayView:
    replay: replay_store.Replay
    summary: dict[str, int]
    changed: tuple[replay_store.ReplayCapture, ...]


@dataclass(frozen=True, slots=True)
class ReplayBatch:
    received: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)


def replay_pins(improvement: store.Improvement) -> ReplayPins:
    return ReplayPins(
        adapter=improvement.adapter_version,
        profile=improvement.profile_version,
        identity_generation=improvement.identity_generation or IDENTITY_GENERATION,
        definition_versions=definition_versions(improvement.definition_version),
    )


class ReplayService:
    def __init__(
        self,
        db: Database,
        queue: Queue,
        registry: PluginRegistry,
        streams: Any,
        dry_runs: DryRunService,
        retry: RetryPolicy,
        clock: Clock = utc_now,
        enqueuer: JobEnqueuer | None = None,
    ) -> None:
        self._db = db
        self._enqueuer = enqueuer
        self._queue = queue
        self._registry = registry
        self._streams = streams
        self._dry_runs = dry_runs
        self._retry = retry
        self._clock = clock

    # -- the request --------------------------------------------------------------------------------------
    def request(self, tenant_id: str, improvement_id: str, mode: Mode, actor: str) -> ReplayRequested:
        now = self._clock()

        def work(conn: Connection) -> tuple[ReplayRequested, list[CaptureRecord]]:
            improvement = store.get_improvement(conn, tenant_id, improvement_id, lock=True)
            if improvement is None:
                raise ImprovementNotFound(f"no improvement {improvement_id}")
            if improvement.status in ("abandoned", "applied"):
                raise InvalidImprovementTransition(f"improvement {improvement_id} is {improvement.status}")
            if mode == "apply" and improvement.status != "reviewer_approved":
                raise ReplayForbidden(
                    f"mode=apply needs a reviewer-approved improvement; {improvement_id} is {improvement.status}"
                )
            pins = replay_pins(improvement)
            self._check_pins(pins)
            pins_key = json.dumps(pins.model_dump(mode="json"), sort_keys=True)
            running = replay_store.queued_with_pins(conn, tenant_id, improvement_id, pins_key)
            ids = selected_captures(
                conn, tenant_id, improvement.catalog_id, Selection.of(improvement.selection)
            )
            captures = [c for c in (load_capture(conn, tenant_id, i) for i in ids) if c is not None]
            if running is not None:
                if running.enqueued >= running.captures:
                    raise ReplayInProgress(
                        f"replay {running.replay_id} of {improvement_id} with these pins is still running"
                    )
                # Its fan-out stopped part way: resume it (the consumer dedupes by job id).
                return ReplayRequested(running, resumed=True), captures
            if not captures:
                raise EmptySelection(f"the selection of {improvement_id} matches no stored capture now")
            stream: StreamKey = self._streams(tenant_id, improvement.catalog_id)
            replay = replay_store.Replay(
                tenant_id=tenant_id,
                catalog_id=improvement.catalog_id,
                replay_id=f"rpl_{improvement_id.removeprefix('imp_')}_{len(replay_store.replays_of(conn, tenant_id, improvement_id)) + 1}",
                improvement_id=improvement_id,
                mode=mode,
                pins=pins.model_dump(mode="json"),
                pins_key=pins_key,
                status="queued",
                captures=len(captures),
                enqueued=0,
                settled=0,
                changed=0,
                failed=0,
                requested_by=actor,
                history_epoch=stream.history_epoch,
                created_at=now,
                completed_at=None,
            )
            replay_store.insert_replay(conn, replay)
            if mode == "apply" and improvement.identity_generation is not None:
                # The apply replay's identity jobs resolve with the catalog's live generations: the proposed one
                # goes live as the replay starts, in the transaction that records it.
                make_live(
                    conn,
                    tenant_id,
                    improvement.catalog_id,
                    improvement.identity_generation,
                    improvement_id,
                    now,
                )
            return ReplayRequested(replay), captures

        requested, captures = self._db.run(work, tenant_id=tenant_id)
        replay = requested.replay
        pins = ReplayPins.model_validate(replay.pins)
        sent = 0
        for start in range(0, len(captures), SEND_BATCH):
            batch = captures[start : start + SEND_BATCH]
            self._queue.send_batch([self._message(replay, pins, c, now) for c in batch])
            sent += len(batch)
        self._db.run(
            lambda conn: replay_store.mark_enqueued(conn, tenant_id, replay.replay_id, sent),
            tenant_id=tenant_id,
        )
        stored = self._db.run(
            lambda conn: replay_store.get_replay(conn, tenant_id, replay.replay_id), tenant_id=tenant_id
        )
        assert stored is not None
        return ReplayRequested(stored, requested.resumed)

    def _message(
        self, replay: replay_store.Replay, pins: ReplayPins, capture: CaptureRecord, now: datetime
    ) -> OutgoingMessage:
        job_id = ResolutionReplay.make_job_id(replay.replay_id, capture.capture_id)
        message = ResolutionReplay(
            job_id=job_id,
            replay_id=replay.replay_id,
            improvement_id=replay.improvement_id,
            tenant_id=replay.tenant_id,
            catalog_id=replay.catalog_id,
            capture_id=capture.capture_id,
            artifacts=tuple(
                ArtifactRef(
                    artifact_id=a.artifact_id,
                    ref=a.ref,
                    sha256=a.sha256,
                    media_type=a.media_type,
                    bytes=a.size,
                )
                for a in capture.artifacts
            ),
            pins=pins,
            mode=replay.mode,
            requested_by=replay.requested_by,
            enqueued_at=now,
            history_epoch=replay.history_epoch,
        )
        return OutgoingMessage(message.to_message(), message_id=job_id)

    def _check_pins(self, pins: ReplayPins) -> None:
        check_pins(self._registry, pins.adapter, pins.profile, pins.definition_versions)

    # -- reads --------------------------------------------------------------------------------------------
    def replays(self, tenant_id: str, improvement_id: str) -> list[replay_store.Replay]:
        return self._db.run(
            lambda conn: replay_store.replays_of(conn, tenant_id, improvement_id),
            tenant_id=tenant_id,
            read_only=True,
        )

    def view(self, tenant_id: str, replay_id: str, sample: int = 20) -> ReplayView:
        def work(conn: Connection) -> ReplayView:
            replay = replay_store.get_replay(conn, tenant_id, replay_id)
            if replay is None:
                raise ImprovementNotFound(f"no replay {replay_id}")
            return ReplayView(
                replay,
                replay_store.summary_counts(conn, tenant_id, replay_id),
                tuple(
                    replay_store.capture_results(conn, tenant_id, replay_id, changed_only=True, limit=sample)
                ),
            )

        return self._db.run(work, tenant_id=tenant_id, read_only=True)

    # -- the consumer -------------------------------------------------------------------------------------
    def has_work(self) -> bool:
        return self._queue.depth().visible > 0

    def run_batch(self, max_messages: int) -> ReplayBatch:
        received = self._queue.receive(max_messages)
        outcomes: Counter[str] = Counter()
        for message in received:
            outcomes[self._consume(message)] += 1
        return ReplayBatch(len(received), dict(outcomes))

    def _consume(self, message: Received) -> str:
        try:
            replay = ResolutionReplay.from_message(message.json())
        except (SchemaViolation, ValidationError, ValueError) as error:
            self._queue.dead_letter(message, "SCHEMA_INVALID", detail=str(error)[:1000])
            return "dead_lettered"
        tenant_id = replay.tenant_id

        def check(conn: Connection) -> str | None:
            if replay_store.get_replay(conn, tenant_id, replay.replay_id) is None:
                return CAPTURE_NOT_IN_TENANT
            capture = load_capture(conn, tenant_id, replay.capture_id)
            if capture is None or capture.catalog_id != replay.catalog_id:
                return CAPTURE_NOT_IN_TENANT
            return None

        try:
            refused = self._db.run(check, tenant_id=tenant_id, read_only=True)
            if refused is not None:
                log.warning(
                    "SECURITY replay %s names capture %s outside tenant %s",
                    replay.job_id,
                    replay.capture_id,
                    tenant_id,
                )
                self._queue.dead_letter(
                    message, refused, detail=f"capture {replay.capture_id} is not in {tenant_id}"
                )
                return "dead_lettered"
            try:
                self._check_pins(replay.pins)
            except (UnknownAdapterVersion, UnknownProfileVersion, UnknownDefinitionVersion) as error:
                self._settle(replay, None, {"code": error.code, "message": str(error)})
                self._queue.dead_letter(message, error.code, detail=str(error)[:1000])
                return "dead_lettered"
            after = self._dry_runs.run(
                tenant_id,
                DryRunRequest(
                    capture_id=replay.capture_id,
                    adapter=replay.pins.adapter or AUTO,
                    profile=replay.pins.profile,
                    identity_generation=replay.pins.identity_generation,
                ),
            )
            before = self._db.run(
                lambda conn: latest_results(conn, tenant_id, replay.capture_id),
                tenant_id=tenant_id,
                read_only=True,
            )
        except JobRejected as error:  # DIGEST_MISMATCH and the like: the stored evidence cannot be replayed
            self._settle(replay, None, {"code": error.code, "message": str(error)})
            self._queue.dead_letter(message, error.code, detail=str(error)[:1000])
            return "dead_lettered"
        except (StorageUnavailable, DatabaseUnavailable, StorageError) as error:
            retryable = isinstance(error, StorageUnavailable | DatabaseUnavailable)
            if retryable and not message.is_final_delivery:
                self._queue.retry_later(message.handle, self._retry.delay(message.receive_count))
                return "retried"
            code = "MAX_RECEIVES_EXCEEDED" if retryable else getattr(error, "code", "STORAGE_ERROR")
            self._settle(replay, None, {"code": code, "message": str(error)})
            self._queue.dead_letter(message, code, detail=str(error)[:1000])
            return "dead_lettered"
        diff = capture_diff(before, after)
        written = self._settle(replay, diff, None)
        self._queue.ack(message.handle)
        return "diffed" if written else "duplicate"

    def _settle(
        self, replay: ResolutionReplay, diff: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> bool:
        """The capture's result, the replay's counters and, in apply mode, the capture's next attempt group, in
        one transaction; a redelivery writes nothing."""
        changed = bool(diff and diff["outcome_changed"])
        unsent: list[ResolutionJob] = []
        now = self._clock()

        def work(conn: Connection) -> bool:
            job: ResolutionJob | None = None
            if diff is not None and replay.mode == "apply":
                job = self._apply_job(conn, replay, now)
                diff["applied"] = job is not None
                diff["job_id"] = job.job_id if job is not None else None
            written = replay_store.record_capture(
                conn,
                replay.tenant_id,
                replay.replay_id,
                replay.capture_id,
                diff=diff,
                outcome_changed=changed,
                error=error,
                now=now,
            )
            if not written:
                return False  # a redelivery: nothing above was written
            if job is not None and not jobs.hand_on(conn, self._enqueuer, job, now):
                unsent.append(job)
            if replay.mode == "apply":
                self._finish_apply(conn, replay, now)
            return True

        written = self._db.run(work, tenant_id=replay.tenant_id)
        if written and unsent and self._enqueuer is not None:
            # Committed pending (a queue that cannot join the transaction): the sweeper is the net.
            jobs.enqueue_after_commit(self._db, self._enqueuer, unsent[-1], now)
        return written

    def _apply_job(self, conn: Connection, replay: ResolutionReplay, now: datetime) -> ResolutionJob | None:
        """The capture's next attempt group, pinned and tagged with the replay (None: the capture has no job to
        start from; intake always writes one)."""
        last = jobs.latest_job(conn, replay.tenant_id, replay.capture_id, EXTRACT_STAGE)
        if last is None:
            return None
        group = last.attempt_group + 1
        stream: StreamKey = self._streams(replay.tenant_id, replay.catalog_id)
        return last.model_copy(
            update={
                "job_id": ResolutionJob.make_job_id(replay.capture_id, EXTRACT_STAGE, group),
                "attempt_group": group,
                "pins": JobPins(adapter=replay.pins.adapter, profile=replay.pins.profile),
                "trace_id": f"{REPLAY_TRACE_PREFIX}{replay.replay_id}:{replay.improvement_id}",
                "enqueued_at": now,
                "history_epoch": stream.history_epoch,
            }
        )

    def _finish_apply(self, conn: Connection, replay: ResolutionReplay, now: datetime) -> None:
        """The last capture of an apply replay is settled: the improvement is applied."""
        current = replay_store.get_replay(conn, replay.tenant_id, replay.replay_id)
        if current is None or current.status != "completed":
            return
        improvement = store.get_improvement(conn, replay.tenant_id, replay.improvement_id, lock=True)
        if improvement is not None and improvement.status == "reviewer_approved":
            store.set_status(
                conn,
                improvement,
                "applied",
                replay.requested_by,
                f"apply replay {replay.replay_id} completed",
                now,
            )


# -- the diff -------------------------------------------------------------------------------------------------
def capture_diff(before: CaptureResults | None, after: DryRun) -> dict[str, Any]:
    """Claims, normalized attributes, stage outcome and identity outcome, before (the consumer's last result for
    the capture) and after (the pinned re-run). ``outcome_changed``: any of them changed."""
    before_claims = [_claim(c) for c in before.claims] if before else []
    after_claims = [_claim(c) for c in after.claims]
    before_attrs = {str(a["key"]): _attr(a) for a in before.attributes} if before else {}
    after_attrs = {str(a["key"]): _attr(a) for a in after.attributes}
    changed_attrs = [
        {"key": k, "before": before_attrs.get(k), "after": after_attrs.get(k)}
        for k in sorted(before_attrs.keys() | after_attrs.keys())
        if before_attrs.get(k) != after_attrs.get(k)
    ]
    identity_before = _identity(before.identity) if before else None
    identity_after = _identity(after.identity)
    identity_changed = identity_before is None or _decides(identity_before) != _decides(identity_after)
    claims = {
        "changed": before_claims != after_claims,
        "added": [c for c in after_claims if c not in before_claims],
        "removed": [c for c in before_claims if c not in after_claims],
    }
    stage = {
        "changed": (before.stage_outcome if before else None) != after.stage_outcome,
        "before": before.stage_outcome if before else None,
        "after": after.stage_outcome,
    }
    diff: dict[str, Any] = {
        "adapter": {"before": before.adapter if before else None, "after": after.adapter},
        "profile": {"before": before.profile if before else None, "after": after.profile},
        "stage_outcome": stage,
        "claims": claims,
        "attributes": {"changed": bool(changed_attrs), "changes": changed_attrs},
        "identity": {
            "changed": identity_changed,
            "before": identity_before,
            "after": identity_after,
            "new_review_case": identity_after["rule"] == REVIEW_RULE
            and (identity_before is None or identity_before["rule"] != REVIEW_RULE),
        },
    }
    diff["outcome_changed"] = bool(claims["changed"] or changed_attrs or stage["changed"] or identity_changed)
    return diff


def _claim(claim: dict[str, Any]) -> dict[str, Any]:
    return {"attribute": claim.get("attribute"), "value": claim.get("value")}


def _attr(attribute: dict[str, Any]) -> dict[str, Any]:
    return {"value": attribute.get("value"), "unit": attribute.get("unit")}


def _identity(summary: dict[str, Any]) -> dict[str, Any]:
    return {"rule": summary.get("rule"), "kind": summary.get("kind"), "item_id": summary.get("item_id")}


def _decides(identity: dict[str, Any]) -> tuple[bool, Any]:
    """An automatic rule or a review case (and which kind): the catalog's items move on between the original run
    and the replay (an item a capture created is there now), so *which* automatic rule maps it is not a change
    the new versions made."""
    automatic = identity["rule"] != REVIEW_RULE
    return automatic, None if automatic else identity["kind"]

"""Staged resolution (if_resolution_job): extract -> normalize -> identity, each stage one
``resolution.job.v1`` message on its own queue, each writing its results, its inbox row and the next stage's job in
one transaction.

Faults are injected around the real components (a PostgreSQL whose write transaction is unavailable, an object
store whose reads fail, a queue outside the database whose send dies): at every stage a retryable failure is
retried and then completes once, a terminal one is dead-lettered on that stage's DLQ at once, a failure that lasts
goes to that DLQ on the fifth delivery and can be re-driven from it, and a crash between a stage's commit and the
next stage's send loses nothing. In every case: one result row per stage, one decision at most, nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import pytest

from prw_platform.contracts import ResolutionJob
from prw_platform.db.database import Database
from prw_platform.db.errors import DatabaseUnavailable
from prw_platform.plugins import PluginRegistry
from prw_platform.queues import PostgresQueue
from prw_platform.resolver import reports
from prw_platform.resolver.intake import SWEEPER_ROLE, QueueJobEnqueuer
from prw_platform.resolver.intake.jobs import sweep_pending_jobs
from prw_platform.resolver.resolution import (
    DEAD_LETTERED,
    RETRY_LATER,
    STAGE_COMPLETED,
    ResolutionServices,
)
from prw_platform.storage import FilesystemObjectStore, ObjectKey, StorageUnavailable, StoredObject
from tests.integration.resolution.pipeline import (
    ANVIL_MICRODATA,
    CATALOG,
    OTHER_TENANT,
    STAGES,
    TENANT,
    Collector,
    Resolution,
    page,
)

#: The stages that hand on to a next one.
HANDING_ON = STAGES[:2]


@dataclass
class UnavailableStore:
    """The real store, whose reads fail ``failures`` times as an unreachable backend does (STORAGE_UNAVAILABLE)."""

    inner: FilesystemObjectStore
    failures: int

    def get(self, key: ObjectKey, *, verify: bool = False) -> StoredObject:
        if self.failures > 0:
            self.failures -= 1
            raise StorageUnavailable(f"{key}: connection refused")
        return self.inner.get(key, verify=verify)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


@dataclass
class UnavailableDatabase:
    """The real database, whose write transactions (the ones that commit a stage) fail ``failures`` times with
    DB_UNAVAILABLE, as ``Database.run`` reports a server it could not reach within its retries."""

    inner: Database
    failures: int

    def run(self, work: Any, **kwargs: Any) -> Any:
        if kwargs.get("verify_commit") is not None and self.failures > 0:
            self.failures -= 1
            raise DatabaseUnavailable("connection refused (injected)")
        return self.inner.run(work, **kwargs)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


class SimulatedCrash(BaseException):
    """The process dies (not an error a handler would catch)."""


class OutsideTheDatabase(PostgresQueue):
    """A stage queue that cannot join the stage's transaction, as SQS cannot; its next send after the commit
    dies with the process when ``crash`` is set."""

    transactional_send = False  # type: ignore[assignment]
    crash = True

    def send(self, body: Any, *, message_id: str | None = None, conn: Any = None, **kwargs: Any) -> str:
        if self.crash:
            raise SimulatedCrash("killed after the stage committed, before the next stage's send")
        return super().send(body, message_id=message_id, conn=conn, **kwargs)


@pytest.fixture
def sweeper_db(db_url: str) -> Iterator[Database]:
    db = Database(db_url, role=SWEEPER_ROLE, max_size=2, application_name="prw-test-sweeper").open()
    yield db
    db.close()


def _receipt_status(resolution: Resolution, capture_id: str) -> tuple[str, str | None]:
    row = resolution.one("SELECT status, reason FROM resolver.receipt WHERE capture_id = %s", capture_id)
    return row["status"], row["reason"]


def _results(resolution: Resolution) -> list[str]:
    return [
        r["stage"]
        for r in resolution.rows("SELECT stage FROM resolver.resolution_result ORDER BY created_at")
    ]


def _assert_resolved_once(resolution: Resolution, capture_id: str) -> None:
    """Nothing lost, nothing twice: each stage's job completed with one result row, one decision, the receipt
    accepted, every stage queue and DLQ empty."""
    assert sorted(_results(resolution)) == sorted(STAGES)
    for stage in STAGES:
        assert resolution.job_status(f"{capture_id}:{stage}:1") == "completed"
        depth = resolution.stage_queues[stage].depth()
        assert (depth.visible, depth.not_visible, depth.dead) == (0, 0, 0), stage
    assert len(resolution.decisions()) == 1
    assert _receipt_status(resolution, capture_id) == ("accepted", None)
    resolution.assert_contracts_hold()


def _run_until(resolution: Resolution, stage: str) -> None:
    """Run the stages before ``stage``: its job is then on its queue."""
    for earlier in STAGES[: STAGES.index(stage)]:
        (outcome,) = resolution.run_stage(earlier).outcomes
        assert outcome.status == STAGE_COMPLETED


def _replace_on_queue(resolution: Resolution, stage: str, message: dict[str, Any]) -> None:
    stage_queue = resolution.stage_queues[stage]
    while received := stage_queue.receive(10):
        for delivery in received:
            assert stage_queue.ack(delivery.handle)
    stage_queue.send(message, message_id=str(message.get("job_id", "job_without_id")))


def test_a_capture_goes_through_three_stages_each_a_message_on_its_own_queue(
    collector: Collector, resolution: Resolution
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")

    extract = resolution.run_stage("extract")
    (extracted,) = extract.outcomes
    assert (extracted.stage, extracted.status, extracted.stage_outcome, extracted.next_job_id) == (
        "extract",
        STAGE_COMPLETED,
        "extracted",
        f"{capture_id}:normalize:1",
    )
    assert extract.acked == 1
    assert resolution.stage_queues["normalize"].depth().visible == 1
    # The next job is written and sent in the stage's transaction (PostgreSQL queue): enqueued, never pending.
    assert resolution.job_status(f"{capture_id}:normalize:1") == "enqueued"
    assert resolution.count("resolver.extracted_claim") > 0
    assert resolution.count("resolver.normalized_attribute") == 0
    assert _receipt_status(resolution, capture_id) == ("stored", None)

    (normalized,) = resolution.run_stage("normalize").outcomes
    assert (normalized.stage, normalized.status, normalized.next_job_id) == (
        "normalize",
        STAGE_COMPLETED,
        f"{capture_id}:identity:1",
    )
    assert resolution.count("resolver.normalized_attribute") > 0
    assert resolution.count("resolver.decision") == 0

    (identified,) = resolution.run_stage("identity").outcomes
    assert (identified.stage, identified.status, identified.decision, identified.next_job_id) == (
        "identity",
        STAGE_COMPLETED,
        "create_item_and_map",
        None,
    )
    # Each message is the stage's own job: capture_id:stage:attempt_group (if_resolution_job).
    for stage in STAGES:
        message = resolution.job_message(capture_id, stage)
        assert (message["stage"], message["job_id"], message["attempt_group"]) == (
            stage,
            f"{capture_id}:{stage}:1",
            1,
        )
        ResolutionJob.from_message(message)
    result = resolution.result(capture_id)
    assert (result["adapter"], result["profile"], result["decision_id"]) == (
        "pa_schemaorg@3.0.0",
        "np_core@2",
        identified.decision_id,
    )
    _assert_resolved_once(resolution, capture_id)


@pytest.mark.parametrize("stage", STAGES)
def test_database_unavailable_at_a_stage_is_retried_and_the_capture_resolves_once(
    stage: str, collector: Collector, resolution: Resolution, services: ResolutionServices
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    _run_until(resolution, stage)
    unavailable = replace(services, resolver_db=UnavailableDatabase(services.resolver_db, failures=2))  # type: ignore[arg-type]

    for _ in range(2):
        report = resolution.run_stage(stage, unavailable)
        (outcome,) = report.outcomes
        assert (outcome.stage, outcome.status, outcome.reason) == (stage, RETRY_LATER, "DB_UNAVAILABLE")
        assert (report.acked, report.retried, report.dead_lettered) == (0, 1, 0)
        # Retried with its delay, neither acked nor dead-lettered; the failed transaction wrote nothing.
        assert resolution.stage_queues[stage].depth().dead == 0
        assert len(_results(resolution)) == STAGES.index(stage)
        assert resolution.job_status(f"{capture_id}:{stage}:1") == "enqueued"

    resolution.run(unavailable)  # the fault is gone: this stage and the ones after it complete

    _assert_resolved_once(resolution, capture_id)


def test_storage_unavailable_at_extract_is_retried_and_the_capture_resolves_once(
    collector: Collector, resolution: Resolution, services: ResolutionServices, store: FilesystemObjectStore
) -> None:
    """Only extract reads objects (normalize and identity read the stored results)."""
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    unavailable = replace(services, store=UnavailableStore(store, failures=1))  # type: ignore[arg-type]

    (outcome,) = resolution.run(unavailable).outcomes
    assert (outcome.stage, outcome.status, outcome.reason) == ("extract", RETRY_LATER, "STORAGE_UNAVAILABLE")
    assert _results(resolution) == []

    (outcome,) = resolution.run(unavailable).outcomes
    assert (outcome.stage, outcome.status) == ("identity", STAGE_COMPLETED)
    _assert_resolved_once(resolution, capture_id)


@pytest.mark.parametrize("stage", STAGES)
def test_a_failure_that_lasts_is_dead_lettered_on_the_fifth_delivery_and_redriven_from_that_stages_dlq(
    stage: str, collector: Collector, resolution: Resolution, services: ResolutionServices
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    job_id = f"{capture_id}:{stage}:1"
    _run_until(resolution, stage)
    stage_queue = resolution.stage_queues[stage]
    down = replace(services, resolver_db=UnavailableDatabase(services.resolver_db, failures=1_000))  # type: ignore[arg-type]

    for _ in range(stage_queue.max_receives - 1):
        (outcome,) = resolution.run_stage(stage, down).outcomes
        assert outcome.status == RETRY_LATER
    (outcome,) = resolution.run_stage(stage, down).outcomes

    assert (outcome.status, outcome.reason) == (DEAD_LETTERED, "MAX_RECEIVES_EXCEEDED")
    (entry,) = stage_queue.dead_letters()
    assert (entry.message_id, entry.reason) == (job_id, "MAX_RECEIVES_EXCEEDED")
    for other in STAGES:
        if other != stage:
            assert resolution.stage_queues[other].dead_letters() == []
    assert resolution.job_status(job_id) == "dead_lettered"
    assert _receipt_status(resolution, capture_id) == ("failed", "MAX_RECEIVES_EXCEEDED")
    assert len(_results(resolution)) == STAGES.index(stage)

    # The database is back: the operator re-drives this stage's DLQ; the earlier stages are not redone.
    assert stage_queue.redrive([entry.dead_letter_id]) == 1
    resolution.run()

    _assert_resolved_once(resolution, capture_id)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize(
    ("forge", "reason"),
    [
        (lambda m: {k: v for k, v in m.items() if k != "capture_id"}, "SCHEMA_INVALID"),
        (lambda m: m | {"job_id": m["job_id"].replace(":1", ":7")}, "SCHEMA_INVALID"),
        (lambda m: m | {"tenant_id": OTHER_TENANT}, "TENANT_MISMATCH"),
    ],
    ids=["missing_field", "job_id_not_its_own", "other_tenant"],
)
def test_an_untrusted_message_at_any_stage_is_dead_lettered_at_once_and_changes_nothing(
    stage: str,
    forge: Any,
    reason: str,
    collector: Collector,
    resolution: Resolution,
    caplog: pytest.LogCaptureFixture,
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    _run_until(resolution, stage)
    message = resolution.job_message(capture_id, stage)
    _replace_on_queue(resolution, stage, forge(message))

    with caplog.at_level(logging.ERROR, logger="prw.security"):
        report = resolution.run()

    (outcome,) = report.outcomes
    assert (outcome.stage if reason != "SCHEMA_INVALID" else stage, outcome.status, outcome.reason) == (
        stage,
        DEAD_LETTERED,
        reason,
    )
    assert report.dead_lettered == 1
    (entry,) = resolution.stage_queues[stage].dead_letters()
    assert entry.reason == reason
    alerts = [r.getMessage() for r in caplog.records if r.name == "prw.security"]
    if reason == "TENANT_MISMATCH":
        (alert,) = alerts
        assert alert.startswith(f"SECURITY ALERT TENANT_MISMATCH job_id={message['job_id']}")
    else:
        assert alerts == []
    # An untrusted message changes nothing: no result of this stage, the receipt and the job row as they were.
    assert len(_results(resolution)) == STAGES.index(stage)
    assert _receipt_status(resolution, capture_id) == ("stored", None)
    assert resolution.job_status(message["job_id"]) == "enqueued"
    assert resolution.count("resolver.decision") == 0


def test_digest_mismatch_at_extract_is_dead_lettered_at_once_and_fails_the_receipt(
    collector: Collector, resolution: Resolution, store: FilesystemObjectStore
) -> None:
    import os

    from prw_platform.storage import parse_ref

    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    message = resolution.job_message(capture_id)
    path = store.path_of(parse_ref(message["artifacts"][0]["ref"]))
    os.chmod(path, 0o644)  # objects are read-only (INV-05); this test plays the corruption
    corrupted = bytearray(path.read_bytes())
    corrupted[-2] ^= 0x20
    path.write_bytes(bytes(corrupted))

    (outcome,) = resolution.run().outcomes

    assert (outcome.stage, outcome.status, outcome.reason) == ("extract", DEAD_LETTERED, "DIGEST_MISMATCH")
    assert resolution.stage_queues["extract"].depth().dead == 1
    assert _results(resolution) == []
    assert resolution.job_status(message["job_id"]) == "dead_lettered"
    assert _receipt_status(resolution, capture_id) == ("failed", "DIGEST_MISMATCH")


@pytest.mark.parametrize(
    ("stage", "pins", "reason"),
    [
        ("extract", {"adapter": "pa_schemaorg@9.9.9"}, "UNKNOWN_ADAPTER_VERSION"),
        ("extract", {"adapter": "pa_schemaorg@1.0.0", "profile": "np_storage@99"}, "UNKNOWN_PROFILE_VERSION"),
        ("normalize", {"profile": "np_core@99"}, "UNKNOWN_PROFILE_VERSION"),
    ],
)
def test_a_pinned_version_that_is_not_installed_is_dead_lettered_at_once_on_its_stage(
    stage: str, pins: dict[str, str], reason: str, collector: Collector, resolution: Resolution
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    _run_until(resolution, stage)
    message = resolution.job_message(capture_id, stage) | {"pins": pins}
    _replace_on_queue(resolution, stage, message)

    (outcome,) = resolution.run().outcomes

    assert (outcome.stage, outcome.status, outcome.reason) == (stage, DEAD_LETTERED, reason)
    (entry,) = resolution.stage_queues[stage].dead_letters()
    assert "is not installed" in (entry.detail or "")
    assert len(_results(resolution)) == STAGES.index(stage)  # nothing of this stage was written
    assert resolution.job_status(message["job_id"]) == "dead_lettered"
    assert _receipt_status(resolution, capture_id) == ("failed", reason)


@pytest.mark.parametrize("stage", ["normalize", "identity"])
def test_a_later_stage_job_without_its_earlier_stages_results_is_dead_lettered(
    stage: str, collector: Collector, resolution: Resolution
) -> None:
    """The next job is only ever written with the earlier stage's results: a message without them is forged or
    misrouted (PREVIOUS_STAGE_MISSING), and it does not resolve the capture."""
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    extract = resolution.job_message(capture_id)
    _replace_on_queue(resolution, "extract", {"not": "a job"})  # the real job is lost to this test
    forged = extract | {"stage": stage, "job_id": f"{capture_id}:{stage}:1"}
    resolution.stage_queues[stage].send(forged, message_id=forged["job_id"])

    outcomes = {o.stage: o for o in resolution.run().outcomes if o.stage}

    assert (outcomes[stage].status, outcomes[stage].reason) == (DEAD_LETTERED, "PREVIOUS_STAGE_MISSING")
    assert _results(resolution) == []
    assert resolution.count("resolver.decision") == 0


@pytest.mark.parametrize("stage", HANDING_ON)
def test_a_crash_between_a_stages_commit_and_the_next_send_loses_nothing(
    stage: str,
    collector: Collector,
    resolution: Resolution,
    services: ResolutionServices,
    stage_queues: dict[str, PostgresQueue],
    sweeper_db: Database,
) -> None:
    """On a queue outside the database (SQS) the next job commits ``pending`` with the stage's results and is
    sent after the commit. The process dies in between: the stage's own message comes back and is a duplicate
    (it does not send again), and the pending-job sweeper (AW-02) sends the next job to its stage's queue."""
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    next_stage = STAGES[STAGES.index(stage) + 1]
    next_job = f"{capture_id}:{next_stage}:1"
    _run_until(resolution, stage)
    outside = OutsideTheDatabase(services.resolver_db, stage_queues[next_stage].name, max_receives=5)
    crashing = replace(
        services, enqueuer=QueueJobEnqueuer(stage_queues["extract"], stage_queues | {next_stage: outside})
    )

    with pytest.raises(SimulatedCrash):
        resolution.run_stage(stage, crashing, visibility_timeout=0)

    assert resolution.job_status(f"{capture_id}:{stage}:1") == "completed"
    assert resolution.job_status(next_job) == "pending"
    assert stage_queues[next_stage].depth().visible == 0
    (again,) = resolution.run_stage(stage).outcomes  # the redelivery: a duplicate that sends nothing
    assert (again.status, again.stage) == ("ignored_duplicate", stage)
    assert stage_queues[next_stage].depth().visible == 0

    swept = sweep_pending_jobs(sweeper_db, services.enqueuer, older_than=timedelta(0))  # type: ignore[arg-type]

    assert swept.enqueued == (next_job,)
    assert resolution.job_status(next_job) == "enqueued"
    assert stage_queues[next_stage].depth().visible == 1
    resolution.run()
    _assert_resolved_once(resolution, capture_id)


@pytest.mark.parametrize("stage", HANDING_ON)
def test_a_queue_outside_the_database_gets_the_next_job_right_after_the_commit(
    stage: str,
    collector: Collector,
    resolution: Resolution,
    services: ResolutionServices,
    stage_queues: dict[str, PostgresQueue],
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    next_stage = STAGES[STAGES.index(stage) + 1]
    _run_until(resolution, stage)
    outside = OutsideTheDatabase(services.resolver_db, stage_queues[next_stage].name, max_receives=5)
    outside.crash = False
    sqs_like = replace(
        services, enqueuer=QueueJobEnqueuer(stage_queues["extract"], stage_queues | {next_stage: outside})
    )

    (outcome,) = resolution.run_stage(stage, sqs_like).outcomes

    assert outcome.status == STAGE_COMPLETED
    assert resolution.job_status(f"{capture_id}:{next_stage}:1") == "enqueued"
    resolution.run()
    _assert_resolved_once(resolution, capture_id)


def test_the_operator_report_joins_each_captures_three_stage_rows(
    collector: Collector, resolution: Resolution
) -> None:
    """``prw demo``'s and the reports' per-capture view reads the extract, normalize and identity rows of the same
    capture and attempt group (one source of truth, nothing copied between them)."""
    anvil = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    note = collector.submit(
        b"Executive Anvil, ACME, part 925872\n", record="anvil-note", media_type="text/plain"
    )
    resolution.run()

    rows = {r.capture_id: r for r in reports.resolution_results(resolution.owner_db, TENANT, CATALOG)}

    assert set(rows) == {anvil, note}
    assert (rows[anvil].adapter, rows[anvil].profile, rows[anvil].outcome) == (
        "pa_schemaorg@3.0.0",
        "np_core@2",
        "extracted",
    )
    assert rows[anvil].claims == resolution.count("resolver.extracted_claim") > 0
    assert rows[anvil].attributes == resolution.count("resolver.normalized_attribute") > 0
    assert (rows[note].adapter, rows[note].profile, rows[note].outcome, rows[note].claims) == (
        None,
        None,
        "no_adapter",
        0,
    )
    assert {r.decision_id for r in rows.values()} == {d["decision_id"] for d in resolution.decisions()}


def test_a_profile_removed_between_normalize_and_identity_dead_letters_identity_and_redrives_once_back(
    collector: Collector, resolution: Resolution, services: ResolutionServices
) -> None:
    """Identity reads the stored normalization with the profile that made it (its definitions and identity keys):
    that profile no longer installed is UNKNOWN_PROFILE_VERSION on the identity DLQ; reinstalled, a redrive of
    that entry resolves the capture without redoing extract or normalize."""
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    _run_until(resolution, "identity")
    installed = services.registry
    without_core = PluginRegistry(
        installed._adapters,
        {pin: p for pin, p in installed._profiles.items() if pin != "np_core@2"},
        installed._providers,
        installed._rules,
    )

    (outcome,) = resolution.run_stage("identity", replace(services, registry=without_core)).outcomes

    assert (outcome.stage, outcome.status, outcome.reason) == (
        "identity",
        DEAD_LETTERED,
        "UNKNOWN_PROFILE_VERSION",
    )
    assert _receipt_status(resolution, capture_id) == ("failed", "UNKNOWN_PROFILE_VERSION")
    assert sorted(_results(resolution)) == ["extract", "normalize"]
    identity_queue = resolution.stage_queues["identity"]
    (entry,) = identity_queue.dead_letters()

    assert identity_queue.redrive([entry.dead_letter_id]) == 1
    resolution.run()

    _assert_resolved_once(resolution, capture_id)

"""Delivery (if_resolution_job, ADR-009): retryable failures go back with a delay and are neither acked nor
dead-lettered; the ack comes only after the commit, so a crash between the two makes the redelivery an ignored
duplicate; two deliveries of one job at once decide once."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

import pytest

from prw_platform.queues import PostgresQueue, ReceiptHandle
from prw_platform.resolver.resolution import (
    IGNORED_DUPLICATE,
    RETRY_LATER,
    STAGE_COMPLETED,
    Outcome,
    ResolutionServices,
    RetryPolicy,
    handle_resolution_job,
    process_resolution_jobs,
)
from prw_platform.storage import FilesystemObjectStore, ObjectKey, StorageUnavailable, StoredObject
from tests.integration.resolution.pipeline import ANVIL_MICRODATA, STAGES, Collector, Resolution, page


@dataclass
class UnavailableStore:
    """An object store whose reads fail as an unreachable backend does (if_object_storage: 503, retry)."""

    inner: FilesystemObjectStore

    def get(self, key: ObjectKey, *, verify: bool = False) -> StoredObject:
        raise StorageUnavailable(f"{key}: connection refused")

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


class SimulatedCrash(BaseException):
    """The process dies (not an error a handler would catch)."""


class CrashBeforeAck(PostgresQueue):
    def ack(self, handle: ReceiptHandle) -> bool:
        raise SimulatedCrash("killed after the commit, before the ack")


def _unavailable(
    services: ResolutionServices, store: FilesystemObjectStore, retry: RetryPolicy
) -> ResolutionServices:
    return replace(services, store=UnavailableStore(store), retry=retry)  # type: ignore[arg-type]


def _assert_nothing_written(resolution: Resolution) -> None:
    for table in ("decision", "consumer_inbox", "resolution_result", "catalog_item", "outbox"):
        assert resolution.count(f"resolver.{table}") == 0, table


def test_storage_unavailable_is_retried_later_neither_acked_nor_dead_lettered(
    collector: Collector,
    resolution: Resolution,
    queue: PostgresQueue,
    services: ResolutionServices,
    store: FilesystemObjectStore,
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    job_id = f"{capture_id}:extract:1"

    report = resolution.run(_unavailable(services, store, RetryPolicy(base_seconds=5)))

    (outcome,) = report.outcomes
    assert (outcome.status, outcome.reason) == (RETRY_LATER, "STORAGE_UNAVAILABLE")
    assert (report.acked, report.retried, report.dead_lettered) == (0, 1, 0)
    depth = queue.depth()
    # PostgreSQL counts a message put back with a delay as "delayed" (queues.md): waiting, not in the DLQ.
    assert (depth.visible, depth.delayed, depth.in_flight, depth.dead) == (0, 1, 0, 0)
    assert resolution.job_status(job_id) == "enqueued"
    _assert_nothing_written(resolution)


def test_retried_job_completes_once_storage_is_back(
    collector: Collector,
    resolution: Resolution,
    queue: PostgresQueue,
    services: ResolutionServices,
    store: FilesystemObjectStore,
) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    unavailable = _unavailable(services, store, RetryPolicy(base_seconds=0))
    assert [o.status for o in resolution.run(unavailable).outcomes] == [RETRY_LATER]
    assert [o.status for o in resolution.run(unavailable).outcomes] == [RETRY_LATER]

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision) == (STAGE_COMPLETED, "create_item_and_map")
    assert len(resolution.decisions()) == 1
    assert queue.depth().visible + queue.depth().not_visible + queue.depth().dead == 0
    resolution.assert_contracts_hold()


@pytest.mark.parametrize("stage", STAGES)
def test_crash_after_commit_before_ack_makes_the_redelivery_a_duplicate_without_a_new_decision(
    stage: str, collector: Collector, resolution: Resolution, services: ResolutionServices
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    job_id = f"{capture_id}:{stage}:1"
    done = STAGES.index(stage) + 1
    for earlier in STAGES[: done - 1]:
        resolution.run_stage(earlier)
    crashing = CrashBeforeAck(services.resolver_db, resolution.stage_queues[stage].name, max_receives=5)

    with pytest.raises(SimulatedCrash):
        # Visibility 0: the unacked message is due again at once, as it is after its visibility timeout.
        process_resolution_jobs(crashing, services, visibility_timeout=0)

    # The stage's transaction committed before the crash: its results, inbox row and job status are durable,
    # and so is the next stage's job (sent in the same transaction on the PostgreSQL queue).
    assert resolution.job_status(job_id) == "completed"
    assert resolution.count("resolver.resolution_result") == done
    assert len(resolution.decisions()) == (1 if stage == "identity" else 0)
    report = resolution.run()

    again = report.outcomes[0]
    assert (again.status, again.stage, again.job_id) == (IGNORED_DUPLICATE, stage, job_id)
    assert len(resolution.decisions()) == 1
    assert resolution.count("resolver.resolution_result") == 3
    for stage_queue in resolution.stage_queues.values():
        assert stage_queue.depth().visible + stage_queue.depth().not_visible + stage_queue.depth().dead == 0
    resolution.assert_contracts_hold()


@pytest.mark.parametrize("stage", STAGES)
def test_two_deliveries_of_one_job_at_once_handle_it_once(
    stage: str, collector: Collector, resolution: Resolution, services: ResolutionServices
) -> None:
    """SQS may hand out one message twice (queues.md); the inbox row, inserted first in the write transaction,
    makes the later transaction wait and then see the job as done: one result row, one next job, one decision."""
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    for earlier in STAGES[: STAGES.index(stage)]:
        resolution.run_stage(earlier)
    message = resolution.job_message(capture_id, stage)
    start = threading.Barrier(2)
    outcomes: list[Outcome] = []
    lock = threading.Lock()

    def deliver() -> None:
        start.wait(timeout=30)
        outcome = handle_resolution_job(services, message)
        with lock:
            outcomes.append(outcome)

    workers = [threading.Thread(target=deliver) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)

    assert sorted(o.status for o in outcomes) == [IGNORED_DUPLICATE, STAGE_COMPLETED]
    assert len({o.decision_id for o in outcomes}) == 1
    assert resolution.count("resolver.resolution_result") == STAGES.index(stage) + 1
    resolution.run()  # the rest of the stages (the stage's own queued copy is a duplicate)
    assert len(resolution.decisions()) == 1
    assert resolution.count("resolver.resolution_result") == 3
    assert resolution.count("resolver.resolution_job") == 3
    resolution.assert_contracts_hold()

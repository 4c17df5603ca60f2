"""AW-02 "Enqueue job (ref): after commit; on failure the pending-job sweeper re-enqueues"."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from prw_platform.contracts import ResolutionJob
from prw_platform.db.database import Database
from prw_platform.db.errors import InsufficientPrivilege
from prw_platform.queues.postgres import PostgresQueue
from prw_platform.resolver.intake import (
    IntakeContext,
    IntakeService,
    QueueJobEnqueuer,
    SubmittedCapture,
    sweep_pending_jobs,
)
from tests.integration.intake.helpers import RecordingEnqueuer, World, job_rows
from tests.integration.intake.test_captures import stored_page, submission

_keys = itertools.count()


def pending_capture(intake: IntakeService, world: World, enqueuer: RecordingEnqueuer) -> SubmittedCapture:
    """A committed capture whose post-commit enqueue failed (the queue was down)."""
    enqueuer.failing = True
    try:
        return intake.submit_capture(world.principal(), f"key-{next(_keys)}", submission())
    finally:
        enqueuer.failing = False


def test_the_sweeper_re_enqueues_a_job_left_pending_and_marks_it_enqueued(
    world: World, intake: IntakeService, enqueuer: RecordingEnqueuer, sweeper_db: Database, owner_db: Database
) -> None:
    stored_page(intake, world)
    submitted = pending_capture(intake, world, enqueuer)

    report = sweep_pending_jobs(sweeper_db, enqueuer, older_than=timedelta(0))

    job_id = f"{submitted.receipt.capture_id}:extract:1"
    assert job_id in report.enqueued
    assert job_id in enqueuer.job_ids
    [row] = job_rows(owner_db, world.tenant)
    assert row["status"] == "enqueued"
    assert row["enqueued_at"] is not None


def test_the_sweeper_leaves_jobs_younger_than_older_than_to_intake(
    world: World, intake: IntakeService, enqueuer: RecordingEnqueuer, sweeper_db: Database, owner_db: Database
) -> None:
    stored_page(intake, world)
    pending_capture(intake, world, enqueuer)

    sweep_pending_jobs(sweeper_db, enqueuer, older_than=timedelta(hours=1))

    assert [row["status"] for row in job_rows(owner_db, world.tenant)] == ["pending"]


def test_a_failed_re_enqueue_is_reported_and_the_job_stays_pending(
    world: World, intake: IntakeService, enqueuer: RecordingEnqueuer, sweeper_db: Database, owner_db: Database
) -> None:
    stored_page(intake, world)
    submitted = pending_capture(intake, world, enqueuer)
    enqueuer.failing = True

    report = sweep_pending_jobs(sweeper_db, enqueuer, older_than=timedelta(0))

    assert f"{submitted.receipt.capture_id}:extract:1" in report.failed
    assert [row["status"] for row in job_rows(owner_db, world.tenant)] == ["pending"]


def test_the_sweeper_never_sends_an_enqueued_job_again(
    world: World, intake: IntakeService, enqueuer: RecordingEnqueuer, sweeper_db: Database
) -> None:
    stored_page(intake, world)
    submitted = intake.submit_capture(world.principal(), "key-enqueued", submission())
    assert submitted.enqueued is True

    report = sweep_pending_jobs(sweeper_db, enqueuer, older_than=timedelta(0))

    assert f"{submitted.receipt.capture_id}:extract:1" not in report.enqueued
    # Tests of this module share a database: the sweeper may also send other tests' pending jobs.
    assert [job.job_id for job in enqueuer.sent if job.tenant_id == world.tenant] == [
        f"{submitted.receipt.capture_id}:extract:1"
    ]


def test_the_sweeper_role_cannot_read_captures_or_receipts(sweeper_db: Database) -> None:
    for table in ("capture", "receipt", "artifact"):
        with pytest.raises(InsufficientPrivilege):
            sweeper_db.run(lambda conn, t=table: conn.execute(f"SELECT 1 FROM resolver.{t}").fetchall())  # noqa: S608


def test_jobs_travel_through_the_postgres_resolution_queue_with_the_job_id_as_message_id(
    world: World, context: IntakeContext, resolver_db: Database
) -> None:
    queue = PostgresQueue(resolver_db, f"resolution-jobs-{world.tenant.replace('_', '-')}")
    intake = IntakeService(
        IntakeContext(
            db=context.db, store=context.store, epochs=context.epochs, enqueuer=QueueJobEnqueuer(queue)
        )
    )
    stored_page(intake, world)

    submitted = intake.submit_capture(world.principal(), "key-queue", submission())

    [received] = queue.receive(1)
    assert received.message_id == f"{submitted.receipt.capture_id}:extract:1"
    assert received.json()["receipt_id"] == submitted.receipt.receipt_id


def test_a_job_sent_but_not_marked_is_sent_again_by_the_sweeper(
    world: World, intake: IntakeService, enqueuer: RecordingEnqueuer, sweeper_db: Database, owner_db: Database
) -> None:
    # The consumer's inbox drops the duplicate (if_resolution_job); the sweeper must not lose the job.
    stored_page(intake, world)
    submitted = pending_capture(intake, world, enqueuer)
    [row] = job_rows(owner_db, world.tenant)
    enqueuer.enqueue(ResolutionJob.from_message(row["message"]))

    sweep_pending_jobs(sweeper_db, enqueuer, older_than=timedelta(0))

    job_id = f"{submitted.receipt.capture_id}:extract:1"
    assert enqueuer.job_ids.count(job_id) == 2

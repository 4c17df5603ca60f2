"""Resolution jobs after commit (AW-02 "Enqueue job (ref): after commit; on failure the pending-job sweeper
re-enqueues"), for the first stage's job (intake, with the capture) and for each later stage's (``hand_on``, in
the finishing stage's transaction; if_resolution_job: "Each stage enqueues the next stage message"). A job is
sent to the queue of its ``stage`` (``QueueJobEnqueuer``), by whoever sends it, the sweeper included.

On the PostgreSQL queue (``Queue.transactional_send``) the message is inserted in the capture's own transaction
and the job row is written ``enqueued`` there: capture, receipt, job row and message commit together or not at
all, so no crash can leave a committed job unsent (the outbox's guarantee, without a second transaction).

On a queue outside the database (SQS) the job row is committed with the capture and receipt, status
``pending``. After the commit, intake sends its message and marks it ``enqueued``. If the send fails, or the process dies first, the row stays pending and the
receipt is still durable; ``sweep_pending_jobs`` later sends every job left pending longer than ``older_than``.
A job may therefore be sent twice (the sweeper after a send whose mark was lost): the resolution consumer dedupes
by ``job_id`` in its inbox (if_resolution_job).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import ResolutionJob, SchemaViolation
from prw_platform.db.database import Connection, Database
from prw_platform.queues.port import Queue

log = logging.getLogger(__name__)

#: Migration 0005: the role that may read pending jobs of every tenant and mark them enqueued, nothing else.
SWEEPER_ROLE = "resolver_sweeper"


class JobEnqueuer(Protocol):
    def enqueue(self, job: ResolutionJob) -> None:
        """Send the job to the resolution queue; raise on failure (the row then stays pending)."""
        ...


@runtime_checkable
class TransactionalJobEnqueuer(JobEnqueuer, Protocol):
    def enqueue_in(self, conn: Connection, job: ResolutionJob, message: dict[str, Any]) -> bool:
        """Send the job (``message``: its checked ``to_message()``) inside ``conn``'s transaction (it exists only
        if that commits) and return True, or return False without sending when this queue cannot join a
        database transaction."""
        ...


class QueueJobEnqueuer:
    """The resolution-jobs queues (``prw_platform.queues``) as a JobEnqueuer. The message id is the job id, the
    key the consumer records in its inbox. ``stages`` routes a job by its ``stage`` to that stage's queue
    (if_resolution_job: extract -> normalize -> identity, ``RESOLUTION_STAGE_QUEUES``); a stage without a queue
    of its own goes to ``queue``, the extract stage's."""

    def __init__(self, queue: Queue, stages: Mapping[str, Queue] | None = None) -> None:
        self._queue = queue
        self._stages = dict(stages or {})

    def queue_for(self, job: ResolutionJob) -> Queue:
        return self._stages.get(job.stage, self._queue)

    def enqueue(self, job: ResolutionJob) -> None:
        self.queue_for(job).send(job.to_message(), message_id=job.job_id)

    def enqueue_in(self, conn: Connection, job: ResolutionJob, message: dict[str, Any]) -> bool:
        """The PostgreSQL queue lives in the resolver's database (migration 0002), so its send joins the
        capture's transaction; any other queue is sent after the commit (``enqueue_after_commit``)."""
        queue = self.queue_for(job)
        if not queue.transactional_send:
            return False
        queue.send(message, message_id=job.job_id, conn=conn)
        return True


@dataclass(frozen=True, slots=True)
class SweepReport:
    enqueued: tuple[str, ...]
    failed: tuple[str, ...]


def insert_job(
    conn: Connection,
    job: ResolutionJob,
    *,
    sent_at: datetime | None = None,
    message: dict[str, Any] | None = None,
) -> None:
    """The job row, in the capture's transaction (AW-02 "Insert capture + receipt + job row"): ``pending``,
    or ``enqueued`` at ``sent_at`` when its message was sent in the same transaction. ``message``: the job's
    ``to_message()`` when the caller has it already (the schema check costs more than the insert)."""
    conn.execute(
        """INSERT INTO resolver.resolution_job
               (tenant_id, job_id, capture_id, stage, attempt_group, status, message, enqueued_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            job.tenant_id,
            job.job_id,
            job.capture_id,
            job.stage,
            job.attempt_group,
            "pending" if sent_at is None else "enqueued",
            Jsonb(job.to_message() if message is None else message),
            sent_at,
        ),
    )


def record_completed(conn: Connection, job: ResolutionJob, now: datetime) -> None:
    """The job row says completed. Intake wrote it with the capture; a job sent by anyone else (a replay) gets
    its row here, so every processed job can be found in ``resolver.resolution_job``."""
    conn.execute(
        """INSERT INTO resolver.resolution_job
               (tenant_id, job_id, capture_id, stage, attempt_group, status, message, completed_at)
           VALUES (%s, %s, %s, %s, %s, 'completed', %s, %s)
           ON CONFLICT (tenant_id, job_id) DO UPDATE SET status = 'completed', completed_at = excluded.completed_at""",
        (
            job.tenant_id,
            job.job_id,
            job.capture_id,
            job.stage,
            job.attempt_group,
            Jsonb(job.to_message()),
            now,
        ),
    )


def mark_dead_lettered(conn: Connection, tenant_id: str, job_id: str) -> None:
    """A terminal failure of a job whose capture is in the tenant: the operator sees it next to the DLQ entry.
    A completed job is never marked (a late duplicate cannot undo it)."""
    conn.execute(
        """UPDATE resolver.resolution_job SET status = 'dead_lettered'
           WHERE tenant_id = %s AND job_id = %s AND status <> 'completed'""",
        (tenant_id, job_id),
    )


def hand_on(conn: Connection, enqueuer: JobEnqueuer | None, job: ResolutionJob, now: datetime) -> bool:
    """The next stage's job (if_resolution_job: "Each stage enqueues the next stage message"), written in the
    finishing stage's transaction, like intake writes the first one with the capture (AW-02): on a queue that
    joins the transaction (PostgreSQL) the message is sent in it and the row is ``enqueued``; otherwise the row
    stays ``pending`` and the caller sends it after the commit (``enqueue_after_commit``), with the pending-job
    sweeper as the net for a crash in between. Returns True when nothing is left for the caller to send: the
    message was sent here, or the row existed already (its own status says where that job is)."""
    message = job.to_message()
    row = conn.execute(
        """INSERT INTO resolver.resolution_job
               (tenant_id, job_id, capture_id, stage, attempt_group, status, message)
           VALUES (%s, %s, %s, %s, %s, 'pending', %s)
           ON CONFLICT (tenant_id, job_id) DO NOTHING
           RETURNING job_id""",
        (job.tenant_id, job.job_id, job.capture_id, job.stage, job.attempt_group, Jsonb(message)),
    ).fetchone()
    if row is None:
        return True
    if isinstance(enqueuer, TransactionalJobEnqueuer) and enqueuer.enqueue_in(conn, job, message):
        conn.execute(
            """UPDATE resolver.resolution_job SET status = 'enqueued', enqueued_at = %s
               WHERE tenant_id = %s AND job_id = %s""",
            (now, job.tenant_id, job.job_id),
        )
        return True
    return False


def enqueue_after_commit(db: Database, enqueuer: JobEnqueuer, job: ResolutionJob, now: datetime) -> bool:
    """Send a committed job and mark it enqueued; False (and the row left pending) when the send failed."""
    try:
        enqueuer.enqueue(job)
    except Exception:
        # AW-02: the receipt is durable whatever happens here; the sweeper re-enqueues the pending row.
        log.warning("enqueue of %s failed; left pending for the sweeper", job.job_id, exc_info=True)
        return False
    try:
        db.run(
            lambda conn: conn.execute(
                """UPDATE resolver.resolution_job SET status = 'enqueued', enqueued_at = %s
                   WHERE tenant_id = %s AND job_id = %s AND status = 'pending'""",
                (now, job.tenant_id, job.job_id),
            ),
            tenant_id=job.tenant_id,
        )
    except Exception:
        # Sent but not marked: the sweeper sends it again and the consumer's inbox drops the duplicate.
        log.warning("job %s was sent but not marked enqueued", job.job_id, exc_info=True)
    return True


@dataclass(frozen=True, slots=True)
class _PendingJob:
    tenant_id: str
    job_id: str
    message: object


def sweep_pending_jobs(
    db: Database, enqueuer: JobEnqueuer, older_than: timedelta, *, limit: int = 100
) -> SweepReport:
    """Send the jobs pending for longer than ``older_than`` (oldest first, at most ``limit``) and mark them
    enqueued. ``db`` acts as ``resolver_sweeper`` (or any role that may read every tenant's pending jobs).

    Rows are locked ``FOR UPDATE SKIP LOCKED``, so sweepers running at once share the work instead of sending
    the same job twice, and intake's own mark of a job being swept waits for this transaction."""
    enqueued: list[str] = []
    failed: list[str] = []
    with db.transaction() as conn:
        with conn.cursor(row_factory=class_row(_PendingJob)) as cur:
            rows = cur.execute(
                """SELECT tenant_id, job_id, message FROM resolver.resolution_job
                   WHERE status = 'pending' AND created_at <= now() - %s
                   ORDER BY created_at LIMIT %s FOR UPDATE SKIP LOCKED""",
                (older_than, limit),
            ).fetchall()
        for row in rows:
            job_id = row.job_id
            try:
                enqueuer.enqueue(ResolutionJob.from_message(row.message))
            except SchemaViolation:
                log.error("pending job %s has an invalid message; left pending", job_id, exc_info=True)
                failed.append(job_id)
                continue
            except Exception:
                log.warning("re-enqueue of %s failed; still pending", job_id, exc_info=True)
                failed.append(job_id)
                continue
            conn.execute(
                """UPDATE resolver.resolution_job SET status = 'enqueued', enqueued_at = now()
                   WHERE tenant_id = %s AND job_id = %s AND status = 'pending'""",
                (row.tenant_id, job_id),
            )
            enqueued.append(job_id)
    return SweepReport(tuple(enqueued), tuple(failed))


class PendingJobSweeper:
    """AW-02's sweeper as a service: ``resolver_sweeper`` and the resolution queues, re-enqueueing every job (of
    any stage, to its stage's queue) left pending longer than ``older_than``."""

    def __init__(self, sweeper_db: Database, enqueuer: JobEnqueuer, older_than: timedelta) -> None:
        self._db = sweeper_db
        self._enqueuer = enqueuer
        self.older_than = older_than

    def run_batch(self, limit: int = 100) -> SweepReport:
        return sweep_pending_jobs(self._db, self._enqueuer, self.older_than, limit=limit)

    def has_work(self) -> bool:
        """A job pending longer than ``older_than`` exists (partial index on pending jobs)."""

        def probe(conn: Connection) -> bool:
            with conn.cursor(row_factory=scalar_row) as cur:
                due = cur.execute(
                    """SELECT EXISTS (SELECT 1 FROM resolver.resolution_job
                                       WHERE status = 'pending' AND created_at <= now() - %s)""",
                    (self.older_than,),
                ).fetchone()
            return bool(due)

        return self._db.run(probe, read_only=True)


def latest_job(conn: Connection, tenant_id: str, capture_id: str, stage: str) -> ResolutionJob | None:
    """The capture's job of ``stage`` with the highest attempt group (an apply replay starts the next group)."""
    row = conn.execute(
        """SELECT message FROM resolver.resolution_job
           WHERE tenant_id = %s AND capture_id = %s AND stage = %s
           ORDER BY attempt_group DESC LIMIT 1""",
        (tenant_id, capture_id, stage),
    ).fetchone()
    return None if row is None else ResolutionJob.model_validate(row["message"])

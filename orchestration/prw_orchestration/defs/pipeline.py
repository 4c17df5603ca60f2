"""Queue- and outbox-driven jobs and their sensors: resolution (if_resolution_job), relay (AW-03), apply (AW-04).

A sensor never does the work (STYLE.md): it looks for work, and when there is some and no batch of its job is
already queued or running, it requests ONE run under a deterministic run key ``<job>-batch-<n>``, keeping ``n``
in its cursor. A fresh cursor (a new daemon, the demo's driver) continues from the highest batch already on the
instance, so a run key is never reused. The ops are a few lines that call ``prw_platform.pipeline``.
"""

from collections.abc import Callable

import dagster as dg

from prw_orchestration.resources import PlatformResource
from prw_platform import pipeline
from prw_platform.bootstrap import Platform
from prw_platform.queues import Queue
from prw_platform.resolver.reports import stream_statuses

BATCHES_PER_RUN = 20
_UNFINISHED = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


@dg.op(description="Take resolution jobs: extract, normalize, identity, decision or review case.")
def resolve_captures(context: dg.OpExecutionContext, platform: PlatformResource) -> dg.Output[int]:
    services = pipeline.resolution_services(platform.platform)
    received = 0
    statuses: dict[str, int] = {}
    for _ in range(BATCHES_PER_RUN):
        report = pipeline.resolve_batch(platform.platform, services)
        received += report.received
        for status, n in report.statuses.items():
            statuses[status] = statuses.get(status, 0) + n
        if report.received == 0:
            break
    context.log.info(f"resolution: {received} jobs {statuses}")
    return dg.Output(
        received, metadata={"jobs": received, **{f"outcome.{k}": v for k, v in statuses.items()}}
    )


@dg.op(description="Publish committed outbox rows to the accepted-change queue, then mark them published.")
def relay_outbox(context: dg.OpExecutionContext, platform: PlatformResource) -> dg.Output[int]:
    published = 0
    for _ in range(BATCHES_PER_RUN):
        result = pipeline.relay_outbox(platform.platform)
        published += result.published
        if result.drained:
            break
    context.log.info(f"relay: published {published} events")
    return dg.Output(published, metadata={"published": published})


@dg.op(description="Apply accepted changes to the product projection; ack after each commit.")
def apply_accepted_changes(context: dg.OpExecutionContext, platform: PlatformResource) -> dg.Output[int]:
    received = applied = parked = 0
    for _ in range(BATCHES_PER_RUN):
        report = pipeline.apply_changes(platform.platform)
        received, applied, parked = (
            received + report.received,
            applied + report.applied,
            parked + report.parked,
        )
        if report.received == 0:
            break
    context.log.info(f"apply: {received} deliveries, {applied} applied, {parked} parked")
    return dg.Output(received, metadata={"deliveries": received, "applied": applied, "parked": parked})


@dg.op(description="AW-02: re-enqueue resolution jobs left pending after their capture committed.")
def sweep_pending_jobs(context: dg.OpExecutionContext, platform: PlatformResource) -> dg.Output[int]:
    report = pipeline.sweep_jobs(platform.platform)
    context.log.info(f"sweeper: {len(report.enqueued)} re-enqueued, {len(report.failed)} failed")
    return dg.Output(
        len(report.enqueued), metadata={"enqueued": len(report.enqueued), "failed": len(report.failed)}
    )


@dg.job(description="One batch of resolution jobs (sensor: resolution_jobs_sensor).")
def resolution_job() -> None:
    resolve_captures()


@dg.job(description="One relay pass over the outbox (sensor: outbox_relay_sensor).")
def relay_job() -> None:
    relay_outbox()


@dg.job(
    description="One batch of accepted changes into the product projection (sensor: accepted_changes_sensor)."
)
def apply_job() -> None:
    apply_accepted_changes()


@dg.job(description="The pending-job sweeper (schedule: every five minutes).")
def sweep_job() -> None:
    sweep_pending_jobs()


sweep_schedule = dg.ScheduleDefinition(
    name="pending_job_sweep",
    job=sweep_job,
    cron_schedule="*/5 * * * *",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)


def _last_batch(context: dg.SensorEvaluationContext, job_name: str) -> int:
    runs = context.instance.get_runs(
        filters=dg.RunsFilter(job_name=job_name, tags={"prw/batch_of": job_name}), limit=1
    )
    return int(runs[0].tags.get("prw/batch", "0")) if runs else 0


def _batch_sensor(
    name: str, job: dg.JobDefinition, has_work: Callable[[Platform], str | None], description: str
) -> dg.SensorDefinition:
    @dg.sensor(
        name=name,
        job=job,
        minimum_interval_seconds=5,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=description,
    )
    def _sensor(
        context: dg.SensorEvaluationContext, platform: PlatformResource
    ) -> dg.SensorResult | dg.SkipReason:
        work = has_work(platform.platform)
        if work is None:
            return dg.SkipReason("nothing to do")
        if context.instance.get_runs(filters=dg.RunsFilter(job_name=job.name, statuses=_UNFINISHED), limit=1):
            return dg.SkipReason(f"a {job.name} batch is still queued or running")
        batch = max(int(context.cursor or 0), _last_batch(context, job.name)) + 1
        request = dg.RunRequest(
            run_key=f"{job.name}-batch-{batch}",
            tags={"prw/batch_of": job.name, "prw/batch": str(batch), "prw/work": work},
        )
        return dg.SensorResult(run_requests=[request], cursor=str(batch))

    return _sensor


def _visible(queue: Queue) -> str | None:
    depth = queue.depth()
    return f"{depth.visible} visible messages" if depth.visible else None


def _unpublished(platform: Platform) -> str | None:
    unpublished = sum(s.unpublished for s in stream_statuses(platform.operator_db))
    return f"{unpublished} unpublished outbox rows" if unpublished else None


resolution_jobs_sensor = _batch_sensor(
    "resolution_jobs_sensor",
    resolution_job,
    lambda p: _visible(p.resolution_queue),
    "Requests a resolution batch when the resolution-jobs queue has visible messages.",
)
outbox_relay_sensor = _batch_sensor(
    "outbox_relay_sensor",
    relay_job,
    _unpublished,
    "Requests a relay pass when committed outbox rows are unpublished.",
)
accepted_changes_sensor = _batch_sensor(
    "accepted_changes_sensor",
    apply_job,
    lambda p: _visible(p.accepted_changes_in),
    "Requests an apply batch when the accepted-changes queue has visible messages.",
)

PIPELINE_SENSORS = (resolution_jobs_sensor, outbox_relay_sensor, accepted_changes_sensor)
PIPELINE_JOBS = (resolution_job, relay_job, apply_job, sweep_job)

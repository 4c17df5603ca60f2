"""One Dagster job per registered stage (``prw_platform.pipeline``), launched by a sensor for the pipeline's
stages and by a schedule for time-driven ones (the pending-job sweeper).

Every op is one call of the core runtime: ``run_stage(platform, stage, Budget(batches=20))``; every sensor asks
the stage's cheap probe ``has_work(platform, stage)`` (for the relay one index probe of unpublished outbox rows).
A sensor never does the work (STYLE.md): when there is some and fewer than the stage's concurrency of its runs are
queued or running, it requests ONE run under a deterministic run key ``<job>-batch-<n>``, keeping ``n`` in its
cursor. A fresh cursor (a new daemon, the demo's driver) continues from the highest batch already on the instance,
so a run key is never reused. A stage added to the registry gets its job, sensor or schedule here without code.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dagster as dg

from prw_orchestration.defs.state import replay_metadata
from prw_orchestration.resources import PlatformResource
from prw_platform.pipeline import EXPORTS, PRUNE, default_stages
from prw_platform.runtime import Budget, Stage, has_work, run_stage

#: Batches one run does at most (a run stops earlier when its source is drained).
BATCHES_PER_RUN = 20
_UNFINISHED = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


@dataclass(frozen=True)
class DagsterNames:
    op: str
    job: str
    sensor: str
    schedule: str


#: The names operators and their run history know from before the stage registry; a new stage gets
#: ``run_<stage>``, ``<stage>_job``, ``<stage>_sensor``, ``<stage>_schedule``.
_KNOWN_NAMES = {
    "resolution": DagsterNames("resolve_captures", "resolution_job", "resolution_jobs_sensor", ""),
    "relay": DagsterNames("relay_outbox", "relay_job", "outbox_relay_sensor", ""),
    "apply": DagsterNames("apply_accepted_changes", "apply_job", "accepted_changes_sensor", ""),
    "sweeper": DagsterNames("sweep_pending_jobs", "sweep_job", "", "pending_job_sweep"),
    # Seed 004 (the stage names have a hyphen, which Dagster names cannot).
    "files-sweep": DagsterNames("sweep_catalog_files", "files_sweep_job", "", "files_sweep_schedule"),
    "files-cleanup": DagsterNames("clean_up_catalog_files", "files_cleanup_job", "files_cleanup_sensor", ""),
    # Drops the generations finished product rebuilds left.
    "rebuild-cleanup": DagsterNames(
        "clean_up_rebuild_generations", "rebuild_cleanup_job", "", "rebuild_cleanup_schedule"
    ),
}


#: A stage whose runs also record an asset's new state: a replay run's diff summary is the
#: ``improvement_replays`` asset's metadata, visible as soon as the run ends.
_MATERIALIZES: dict[str, tuple[str, Callable[[PlatformResource], dict[str, Any]]]] = {
    "replay": ("improvement_replays", replay_metadata),
}


def dagster_names(stage: Stage) -> DagsterNames:
    return _KNOWN_NAMES.get(
        stage.name,
        DagsterNames(
            f"run_{stage.name}", f"{stage.name}_job", f"{stage.name}_sensor", f"{stage.name}_schedule"
        ),
    )


def stage_job(stage: Stage) -> dg.JobDefinition:
    names = dagster_names(stage)

    @dg.op(name=names.op, description=stage.description)
    def run(context: dg.OpExecutionContext, platform: PlatformResource) -> dg.Output[int]:
        report = run_stage(
            platform.platform, stage.name, Budget(batches=BATCHES_PER_RUN), progress=context.log.info
        )
        context.log.info(f"{stage.name}: {report.describe()} in {report.batches} batches")
        materializes = _MATERIALIZES.get(stage.name)
        if materializes is not None and report.taken:
            asset, metadata = materializes
            context.log_event(dg.AssetMaterialization(asset_key=asset, metadata=metadata(platform)))
        return dg.Output(report.taken, metadata=report.metadata())

    trigger = f"schedule: {names.schedule}" if stage.cron else f"sensor: {names.sensor}"

    @dg.job(name=names.job, description=f"{stage.description} ({trigger}).", tags={"prw/stage": stage.name})
    def job() -> None:
        run()

    return job


def _last_batch(context: dg.SensorEvaluationContext, job_name: str) -> int:
    runs = context.instance.get_runs(
        filters=dg.RunsFilter(job_name=job_name, tags={"prw/batch_of": job_name}), limit=1
    )
    return int(runs[0].tags.get("prw/batch", "0")) if runs else 0


def stage_sensor(stage: Stage, job: dg.JobDefinition) -> dg.SensorDefinition:
    @dg.sensor(
        name=dagster_names(stage).sensor,
        job=job,
        minimum_interval_seconds=5,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Requests a {job.name} run when the {stage.name} stage has work.",
    )
    def sensor(
        context: dg.SensorEvaluationContext, platform: PlatformResource
    ) -> dg.SensorResult | dg.SkipReason:
        if not has_work(platform.platform, stage.name):
            return dg.SkipReason("nothing to do")
        running = context.instance.get_runs(
            filters=dg.RunsFilter(job_name=job.name, statuses=_UNFINISHED), limit=stage.concurrency
        )
        if len(running) >= stage.concurrency:
            return dg.SkipReason(f"a {job.name} batch is still queued or running")
        batch = max(int(context.cursor or 0), _last_batch(context, job.name)) + 1
        request = dg.RunRequest(
            run_key=f"{job.name}-batch-{batch}",
            tags={"prw/batch_of": job.name, "prw/batch": str(batch), "prw/stage": stage.name},
        )
        return dg.SensorResult(run_requests=[request], cursor=str(batch))

    return sensor


def stage_schedule(stage: Stage, job: dg.JobDefinition) -> dg.ScheduleDefinition:
    """A tick requests a run only while fewer than the stage's concurrency of its runs are unfinished (seed 004:
    the files sweep has "reserved concurrency of one"); the stage itself stays safe if two runs overlap."""
    assert stage.cron is not None

    @dg.schedule(
        name=dagster_names(stage).schedule,
        job=job,
        cron_schedule=stage.cron,
        default_status=dg.DefaultScheduleStatus.RUNNING,
        tags={"prw/stage": stage.name},
    )
    def schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
        running = context.instance.get_runs(
            filters=dg.RunsFilter(job_name=job.name, statuses=_UNFINISHED), limit=stage.concurrency
        )
        if len(running) >= stage.concurrency:
            return dg.SkipReason(
                f"{len(running)} {job.name} run(s) still unfinished (concurrency {stage.concurrency})"
            )
        return dg.RunRequest(tags={"prw/stage": stage.name})

    return schedule


#: Stages with a dedicated job (``defs/retention.py``: their runs also record asset materializations).
DEDICATED_STAGES = frozenset({PRUNE, EXPORTS})
STAGES = default_stages()
_GENERATED = tuple(s for s in STAGES if s.name not in DEDICATED_STAGES)
PIPELINE_JOBS = tuple(stage_job(stage) for stage in _GENERATED)
_JOB_OF = dict(zip((s.name for s in _GENERATED), PIPELINE_JOBS, strict=True))
SENSOR_OF = {s.name: stage_sensor(s, _JOB_OF[s.name]) for s in _GENERATED if s.cron is None}
PIPELINE_SENSORS = tuple(SENSOR_OF.values())
STAGE_SCHEDULES = tuple(stage_schedule(s, _JOB_OF[s.name]) for s in _GENERATED if s.cron is not None)

resolution_jobs_sensor = SENSOR_OF["resolution"]

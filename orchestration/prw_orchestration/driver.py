"""Drive the pipeline through Dagster in this process: evaluate the pipeline sensors and execute the runs they
request on the real instance, until the stream is drained.

This is what the daemon does, one tick after another, without waiting for its intervals: the same sensors, the
same run keys (a run key already on the instance is skipped), the same jobs, recorded on the same instance so the
Dagster UI shows them afterwards. ``prw demo`` and the end-to-end tests use it; ``prw dev`` runs the daemon.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import dagster as dg

from prw_orchestration.defs.pipeline import PIPELINE_SENSORS
from prw_orchestration.defs.state import platform_state_job


@dataclass
class DriveReport:
    ticks: int = 0
    runs: list[str] = field(default_factory=list)
    failed_runs: list[str] = field(default_factory=list)
    skipped_run_keys: list[str] = field(default_factory=list)
    state_run: str | None = None


def _run_key_used(instance: dg.DagsterInstance, run_key: str) -> bool:
    return bool(instance.get_runs(filters=dg.RunsFilter(tags={"dagster/run_key": run_key}), limit=1))


def drive_until_drained(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    *,
    max_ticks: int = 200,
    on_run: Callable[[str, str], None] | None = None,
    materialize_state: bool = True,
) -> DriveReport:
    """Tick every pipeline sensor; execute each requested run; stop after a full tick requested nothing."""
    report = DriveReport()
    cursors: dict[str, str | None] = {}
    resources = {"platform": defs.resources["platform"]} if defs.resources else {}
    while report.ticks < max_ticks:
        report.ticks += 1
        launched = 0
        for sensor in PIPELINE_SENSORS:
            with dg.build_sensor_context(
                instance=instance,
                cursor=cursors.get(sensor.name),
                sensor_name=sensor.name,
                resources=resources,
            ) as context:
                result = sensor(context)
            if not isinstance(result, dg.SensorResult):
                continue
            cursors[sensor.name] = result.cursor
            for request in result.run_requests or ():
                run_key = request.run_key or ""
                if _run_key_used(instance, run_key):
                    report.skipped_run_keys.append(run_key)
                    continue
                job = defs.resolve_job_def(sensor.job_name)
                tags = {**request.tags, "dagster/run_key": run_key, "dagster/sensor_name": sensor.name}
                outcome = job.execute_in_process(instance=instance, tags=tags, raise_on_error=False)
                (report.runs if outcome.success else report.failed_runs).append(outcome.run_id)
                if on_run:
                    on_run(sensor.job_name, run_key)
                launched += 1
        if launched == 0:
            break
    if materialize_state:
        outcome = defs.resolve_job_def(platform_state_job.name).execute_in_process(instance=instance)
        report.state_run = outcome.run_id
    return report

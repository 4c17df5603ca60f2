"""The PRW Dagster code location: one ``Definitions`` assembled from ``defs/`` (``dagster dev -m
prw_orchestration.definitions``, or ``prw dev``)."""

from __future__ import annotations

import dagster as dg

from prw_orchestration.defs.pipeline import PIPELINE_JOBS, PIPELINE_SENSORS, STAGE_SCHEDULES
from prw_orchestration.defs.rebuild import REBUILD_JOBS
from prw_orchestration.defs.retention import (
    RETENTION_ASSETS,
    RETENTION_CHECKS,
    RETENTION_JOBS,
    RETENTION_SCHEDULES,
    RETENTION_SENSORS,
)
from prw_orchestration.defs.state import (
    STATE_ASSETS,
    STATE_CHECKS,
    platform_state_job,
    platform_state_schedule,
)
from prw_orchestration.resources import PlatformResource


def build_definitions(platform: PlatformResource | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=[*STATE_ASSETS, *RETENTION_ASSETS],
        asset_checks=[*STATE_CHECKS, *RETENTION_CHECKS],
        jobs=[*PIPELINE_JOBS, platform_state_job, *RETENTION_JOBS, *REBUILD_JOBS],
        sensors=[*PIPELINE_SENSORS, *RETENTION_SENSORS],
        schedules=[*STAGE_SCHEDULES, platform_state_schedule, *RETENTION_SCHEDULES],
        resources={"platform": platform or PlatformResource()},
    )


defs = build_definitions()

"""The PRW Dagster code location: one ``Definitions`` assembled from ``defs/`` (``dagster dev -m
prw_orchestration.definitions``, or ``prw dev``)."""

from __future__ import annotations

import dagster as dg

from prw_orchestration.defs.pipeline import PIPELINE_JOBS, PIPELINE_SENSORS, STAGE_SCHEDULES
from prw_orchestration.defs.state import (
    STATE_ASSETS,
    STATE_CHECKS,
    platform_state_job,
    platform_state_schedule,
)
from prw_orchestration.resources import PlatformResource


def build_definitions(platform: PlatformResource | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=list(STATE_ASSETS),
        asset_checks=list(STATE_CHECKS),
        jobs=[*PIPELINE_JOBS, platform_state_job],
        sensors=list(PIPELINE_SENSORS),
        schedules=[*STAGE_SCHEDULES, platform_state_schedule],
        resources={"platform": platform or PlatformResource()},
    )


defs = build_definitions()

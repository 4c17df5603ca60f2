"""The one runtime every edge drives: registered stages, ``run_stage``, ``has_work``, the worker loop and drain.

``prw worker`` runs ``WorkerLoop.for_platform``; the Dagster ops call ``run_stage`` and the sensors ``has_work``;
``prw demo`` and the tests ``drain``. A later capability (pruning, exports, replays, file cleanup) adds a
``Stage`` to the registry (``prw_platform.pipeline.default_stages``) and shows up in all of them.
"""

from prw_platform.runtime.drain import DrainReport, drain
from prw_platform.runtime.stages import (
    ONE_BATCH,
    Batch,
    Budget,
    Stage,
    StageHost,
    StageRegistry,
    StageReport,
    UnknownStage,
    has_work,
    run_stage,
    stage_progress,
)
from prw_platform.runtime.worker import Round, WorkerLoop, WorkerReport, stage_rounds, stop_on_signals

__all__ = [
    "ONE_BATCH",
    "Batch",
    "Budget",
    "DrainReport",
    "Round",
    "Stage",
    "StageHost",
    "StageRegistry",
    "StageReport",
    "UnknownStage",
    "WorkerLoop",
    "WorkerReport",
    "drain",
    "has_work",
    "run_stage",
    "stage_progress",
    "stage_rounds",
    "stop_on_signals",
]

"""Drain the pipeline synchronously: every pipeline stage, one after another, until a whole round took nothing.

What ``prw demo`` without Dagster, the benchmarks and tests use; the Dagster path does the same through sensors and
``prw worker --max-idle-rounds`` through threads. Each stage runs through ``run_stage``, like everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prw_platform.runtime.stages import Budget, StageHost, run_stage


@dataclass(frozen=True, slots=True)
class DrainReport:
    rounds: int
    #: Items taken per stage, in pipeline order.
    taken: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.taken.values())


def drain(
    platform: StageHost, *, stages: tuple[str, ...] | None = None, max_rounds: int = 1000
) -> DrainReport:
    """Run ``stages`` (default: the registered pipeline stages) round after round, each until it takes nothing,
    and stop after a round in which no stage took anything (or after ``max_rounds``)."""
    names = stages or platform.stages.names(pipeline_only=True)
    taken = dict.fromkeys(names, 0)
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        progress = 0
        for name in names:
            report = run_stage(platform, name, Budget())
            taken[name] += report.taken
            progress += report.taken
        if progress == 0:
            break
    return DrainReport(rounds, taken)

"""The stage runtime (prw_platform.runtime): run_stage's budget and drain rules, has_work, the registry, drain and
the worker loop over registered stages. No database: the stages here are registered on a platform that is never
connected (its services are built lazily and none of these stages asks for one)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from prw_platform.bootstrap import Platform
from prw_platform.config import Settings
from prw_platform.deployment import DatabaseUrls
from prw_platform.pipeline import (
    APPLY,
    ASSIST,
    EXPORTS,
    FILES_CLEANUP,
    FILES_SWEEP,
    GAPS,
    IDENTITY,
    NORMALIZE,
    PROGRESS,
    PRUNE,
    REBUILD_CLEANUP,
    RELAY,
    REPLAY,
    RESOLUTION,
    SWEEPER,
    default_stages,
)
from prw_platform.runtime import (
    Batch,
    Budget,
    Stage,
    StageRegistry,
    UnknownStage,
    WorkerLoop,
    drain,
    has_work,
    run_stage,
)


@dataclass
class Source:
    """A queue-like source: ``items`` waiting; a batch takes at most its size; every call is recorded."""

    items: int
    calls: list[int] = field(default_factory=list)
    looked_up: int = 0

    def has_work(self) -> bool:
        return self.items > 0

    def batch(self, _platform: Platform, n: int) -> Batch:
        self.calls.append(n)
        taken = min(n, self.items)
        self.items -= taken
        return Batch(taken, {"ok": taken, "never": 0})


def stage(name: str, source: Source, *, batch_size: int = 10, pipeline: bool = True) -> Stage[Platform]:
    def service(_platform: Platform) -> Source:
        source.looked_up += 1
        return source

    return Stage(
        name,
        f"the {name} test stage",
        service=service,
        run_batch=source.batch,
        batch_size=batch_size,
        idle_sleep=0.01,
        pipeline=pipeline,
    )


@pytest.fixture
def platform(tmp_path: Path) -> Iterator[Platform]:
    settings = Settings(database_url="postgresql://prw@127.0.0.1:9/never", data_dir=tmp_path)
    with Platform(
        settings, DatabaseUrls("postgresql://127.0.0.1:9/never", "postgresql://127.0.0.1:9/c", False)
    ) as p:
        p.stages = StageRegistry()  # only this test's stages
        yield p


def test_the_platform_registers_the_pipeline_stages_in_order_and_the_sweeper_beside_them() -> None:
    registry = default_stages()

    # if_resolution_job's three stages in their order (extract keeps the name "resolution"), then the rest.
    assert registry.names() == (
        RESOLUTION,
        NORMALIZE,
        IDENTITY,
        RELAY,
        APPLY,
        GAPS,
        PROGRESS,
        PRUNE,
        EXPORTS,
        REBUILD_CLEANUP,
        REPLAY,
        ASSIST,
        SWEEPER,
        FILES_SWEEP,
        FILES_CLEANUP,
    )
    assert registry.names(pipeline_only=True) == (
        RESOLUTION,
        NORMALIZE,
        IDENTITY,
        RELAY,
        APPLY,
        GAPS,
        PROGRESS,
    )
    assert registry[SWEEPER].cron is not None
    # Seed 004: "The sweep has reserved concurrency of one and the consumer mapping permits two".
    assert registry[FILES_SWEEP].cron is not None
    assert registry[FILES_SWEEP].concurrency == 1
    assert registry[FILES_CLEANUP].concurrency == 2
    # The pruner runs on its schedule, exports when one is requested; neither is part of the pipeline.
    assert registry[PRUNE].cron is not None
    assert registry[EXPORTS].cron is None
    assert registry[REBUILD_CLEANUP].cron is not None
    assert all(s.cron is None for s in registry if s.pipeline)


def test_run_stage_runs_batches_until_a_batch_takes_nothing(platform: Platform) -> None:
    source = Source(items=25)
    platform.stages.register(stage("work", source))

    report = run_stage(platform, "work", Budget())

    assert (report.taken, report.batches, report.drained) == (25, 4, True)
    assert source.calls == [10, 10, 10, 10]  # the fourth batch found nothing: drained
    assert report.counts == {"ok": 25}  # zero counts are left out


def test_an_item_budget_shrinks_the_last_batch_and_stops_without_draining(platform: Platform) -> None:
    source = Source(items=100)
    platform.stages.register(stage("work", source))

    report = run_stage(platform, "work", Budget(items=25))

    assert source.calls == [10, 10, 5]
    assert (report.taken, report.drained, source.items) == (25, False, 75)


def test_a_batch_budget_stops_after_that_many_batches(platform: Platform) -> None:
    source = Source(items=100)
    platform.stages.register(stage("work", source))

    report = run_stage(platform, "work", Budget(batches=2))

    assert (report.taken, report.batches, report.drained) == (20, 2, False)


def test_the_default_budget_is_one_batch(platform: Platform) -> None:
    source = Source(items=100)
    platform.stages.register(stage("work", source))

    assert run_stage(platform, "work").batches == 1


def test_a_time_budget_starts_no_batch_after_its_deadline(platform: Platform) -> None:
    source = Source(items=1_000_000)
    platform.stages.register(stage("work", source, batch_size=1))

    report = run_stage(platform, "work", Budget(seconds=0.05))

    assert not report.drained
    assert report.seconds >= 0.05
    assert 0 < report.taken < 1_000_000


@pytest.mark.parametrize("limits", [{"items": 0}, {"batches": -1}, {"seconds": 0}])
def test_a_budget_must_be_positive(limits: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="positive"):
        Budget(**limits)  # type: ignore[arg-type]


def test_has_work_asks_the_stage_probe(platform: Platform) -> None:
    source = Source(items=1)
    platform.stages.register(stage("work", source))

    assert has_work(platform, "work")
    run_stage(platform, "work")
    assert not has_work(platform, "work")


def test_an_unknown_stage_names_the_registered_ones(platform: Platform) -> None:
    platform.stages.register(stage("work", Source(0)))

    with pytest.raises(UnknownStage, match=r"'ingest'.*work"):
        run_stage(platform, "ingest")


def test_a_stage_is_registered_once(platform: Platform) -> None:
    platform.stages.register(stage("work", Source(0)))

    with pytest.raises(ValueError, match="twice"):
        platform.stages.register(stage("work", Source(0)))


def test_drain_runs_the_pipeline_stages_until_a_round_takes_nothing(platform: Platform) -> None:
    first, second, scheduled = Source(items=23), Source(items=0), Source(items=5)
    platform.stages.register(stage("first", first))
    platform.stages.register(stage("second", second))
    platform.stages.register(stage("scheduled", scheduled, pipeline=False))

    report = drain(platform)

    assert report.taken == {"first": 23, "second": 0}
    assert report.rounds == 2  # the second round took nothing
    assert scheduled.calls == []  # not a pipeline stage: drain leaves it to its schedule


def test_a_worker_over_registered_stages_prepares_them_and_drains(platform: Platform) -> None:
    first, second = Source(items=7), Source(items=3)
    platform.stages.register(stage("first", first, batch_size=2))
    platform.stages.register(stage("second", second))

    loop = WorkerLoop.for_platform(platform, ("first", "second"), batch=4, max_idle_rounds=2)
    report = loop.run()

    assert (first.looked_up, second.looked_up) == (1, 1)  # before any thread started
    assert report.drained
    assert report.taken == {"first": 7, "second": 3}
    assert first.calls[:2] == [2, 2]  # a round of 4 items is two batches of the stage's size

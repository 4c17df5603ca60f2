"""Stages: every background path of the platform as one bounded, repeatable unit of work.

A ``Stage`` names a service of a platform (built once by the composition root), how to run one batch of it and
how to ask cheaply whether it has work. ``run_stage(platform, name, budget)`` runs batches until the budget is
spent or a batch takes nothing, and returns one ``StageReport`` whatever the stage. The runtime knows a platform
only as a ``StageHost``: something holding a registry of stages that run over it (``prw_platform.pipeline``
registers the platform's stages over the concrete ``Platform``). ``prw worker`` (through
``runtime.worker``), ``runtime.drain`` (``prw demo`` without Dagster, tests) and the Dagster ops and sensors
(``prw_orchestration``) all drive stages this way; a new capability registers a stage, never a new loop.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Generic, Protocol, Self, TypeVar

#: The platform a stage runs over.
P = TypeVar("P")

log = logging.getLogger(__name__)

#: Where a running stage's progress lines go besides the log: the edge that runs it (a Dagster op's log).
_PROGRESS: ContextVar[Callable[[str], None] | None] = ContextVar("prw_stage_progress", default=None)


def stage_progress(message: str) -> None:
    """A progress line of a long batch (the rebuild cleanup's rows dropped so far): logged, and shown by the edge
    that runs the stage (``run_stage(..., progress=...)``)."""
    log.info(message)
    sink = _PROGRESS.get()
    if sink is not None:
        sink(message)


@dataclass(frozen=True, slots=True)
class Batch:
    """One batch of one stage: how many messages or rows it took (0: nothing to do) and its outcomes."""

    taken: int
    counts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Budget:
    """How much one ``run_stage`` call may do: at most ``items`` messages or rows, at most ``batches`` batches,
    and no new batch after ``seconds``. Unset limits are unlimited; a stage also stops at a batch that took
    nothing (its source is drained)."""

    items: int | None = None
    batches: int | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        for name in ("items", "batches", "seconds"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"budget {name} must be positive")


#: One batch, as ``prw worker`` runs it by default.
ONE_BATCH = Budget(batches=1)


@dataclass(frozen=True, slots=True)
class StageReport:
    """What one ``run_stage`` call (or one worker round) did: the same shape for every stage."""

    stage: str
    taken: int = 0
    batches: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)
    #: The last batch took nothing: the stage's source had no (visible) work left.
    drained: bool = False
    seconds: float = 0.0

    def describe(self) -> str:
        outcomes = ", ".join(f"{name} {n}" for name, n in self.counts.items() if n)
        return f"{self.taken} taken" + (f": {outcomes}" if outcomes else "")

    def metadata(self) -> dict[str, int | float | bool]:
        """Flat numbers for a run's metadata (the Dagster UI shows them per op)."""
        return {
            "taken": self.taken,
            "batches": self.batches,
            "drained": self.drained,
            "seconds": round(self.seconds, 3),
            **{f"outcome.{name}": n for name, n in self.counts.items() if n},
        }


class StageService(Protocol):
    def has_work(self) -> bool: ...


@dataclass(frozen=True)
class Stage(Generic[P]):
    """One registered stage of platform ``P``.

    ``service(platform)`` is the service the stage runs (the platform builds its services on first use; a worker
    looks up every stage's service before starting threads); its ``has_work()`` is a cheap probe (an indexed
    EXISTS or a queue depth, never a report over the whole state) that sensors and idle workers call often;
    ``run_batch(platform, n)`` does one bounded batch of at most ``n`` items through it."""

    name: str
    description: str
    service: Callable[[P], StageService]
    run_batch: Callable[[P, int], Batch]
    #: Items per batch (a queue receive takes at most 10 messages; the relay publishes 100 rows per transaction).
    batch_size: int
    #: The longest sleep of an idle ``prw worker`` round.
    idle_sleep: float = 0.2
    #: How many runs of the stage may work at once (the seed's sweep = 1, cleanup consumer = 2).
    concurrency: int = 1
    #: Part of the pipeline from capture to public item: ``prw worker all``, ``drain`` and the demo run it.
    pipeline: bool = True
    #: A cron schedule for a stage driven by time rather than by work (Dagster runs it on this schedule).
    cron: str | None = None

    def __post_init__(self) -> None:
        if self.batch_size < 1 or self.concurrency < 1 or self.idle_sleep <= 0:
            raise ValueError(f"stage {self.name}: batch_size, concurrency and idle_sleep must be positive")


class UnknownStage(LookupError):
    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"no stage {name!r}; stages: {', '.join(known)}")


class StageRegistry(Generic[P]):
    """The stages of a platform in pipeline order (a stage that took something wakes the ones after it)."""

    def __init__(self, stages: tuple[Stage[P], ...] = ()) -> None:
        self._stages: dict[str, Stage[P]] = {}
        for stage in stages:
            self.register(stage)

    def register(self, stage: Stage[P]) -> None:
        if stage.name in self._stages:
            raise ValueError(f"stage {stage.name} is registered twice")
        self._stages[stage.name] = stage

    def __getitem__(self, name: str) -> Stage[P]:
        try:
            return self._stages[name]
        except KeyError:
            raise UnknownStage(name, list(self._stages)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._stages

    def __iter__(self) -> Iterator[Stage[P]]:
        return iter(self._stages.values())

    def names(self, *, pipeline_only: bool = False) -> tuple[str, ...]:
        return tuple(s.name for s in self if s.pipeline or not pipeline_only)


class StageHost(Protocol):
    """What the runtime needs from a platform: its registered stages, each run over the platform itself."""

    @property
    def stages(self) -> StageRegistry[Self]: ...


def run_stage(
    platform: StageHost,
    name: str,
    budget: Budget = ONE_BATCH,
    *,
    progress: Callable[[str], None] | None = None,
) -> StageReport:
    """Run batches of stage ``name`` until ``budget`` is spent or a batch takes nothing; ``progress`` receives the
    stage's progress lines (``stage_progress``) meanwhile."""
    token = _PROGRESS.set(progress)
    try:
        return _run_stage(platform, name, budget)
    finally:
        _PROGRESS.reset(token)


def _run_stage(platform: StageHost, name: str, budget: Budget) -> StageReport:
    stage = platform.stages[name]
    started = time.monotonic()
    taken = batches = 0
    counts: Counter[str] = Counter()
    drained = False
    while True:
        size = stage.batch_size if budget.items is None else min(stage.batch_size, budget.items - taken)
        batch = stage.run_batch(platform, size)
        batches += 1
        taken += batch.taken
        counts.update(batch.counts)
        if batch.taken == 0:
            drained = True
            break
        if (
            (budget.items is not None and taken >= budget.items)
            or (budget.batches is not None and batches >= budget.batches)
            or (budget.seconds is not None and time.monotonic() - started >= budget.seconds)
        ):
            break
    return StageReport(
        stage=name,
        taken=taken,
        batches=batches,
        counts={k: v for k, v in counts.items() if v},
        drained=drained,
        seconds=time.monotonic() - started,
    )


def has_work(platform: StageHost, name: str) -> bool:
    """The stage's cheap probe: is there something for ``run_stage`` to take now?"""
    return platform.stages[name].service(platform).has_work()

"""``prw worker resolution|relay|apply|sweeper|all``: the pipeline stages in a loop, for low latency, without
Dagster (ARCHITECTURE.md: "calling the same core functions that ``prw worker …`` can run in a loop").

Each stage calls the function a Dagster op calls (``prw_platform.pipeline``), one bounded batch at a time, and
prints one line per batch that took something. A round that took nothing sleeps a short, bounded time: the sleep
starts at 1/16 of ``--idle-sleep`` and doubles while the stage stays idle, so work that follows work (the relay
right after a decision) is picked up within milliseconds, while an idle worker polls its queue gently. Inside one
process (``all``) a stage that took something also wakes the stages after it at once.

``all`` runs resolution, relay and apply in one process, **one thread per stage**. A round-robin loop would run
them one after the other, so a slow resolution batch (ten pages to extract) would hold back the relay and the
product apply of decisions already committed; with threads each stage keeps its own pace and idle backoff, and
a capture's events flow through while the next pages are being extracted. The stages share nothing but the
platform's connection pools (thread-safe, one per database role), and the seed's guarantees do not depend on
their interleaving: the relay reads committed rows only (AW-03) and the product consumer orders by position and
parks what arrives early (AW-04). The sweeper is not part of ``all``: it re-enqueues jobs left pending for a
minute (AW-02), so it runs alone at a slow pace (``prw worker sweeper``) or as Dagster's schedule.

Stopping: SIGINT or SIGTERM asks every stage to stop; each finishes the batch it is in (its transactions commit
and its deliveries are acknowledged, AW-04 "ack after commit"), then the process exits. ``--max-idle-rounds K``
exits once every stage has been idle for K rounds that all began after the last batch of any stage took
something: the pipeline is drained.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from types import FrameType
from typing import Annotated

import typer
from rich.console import Console

from prw_cli.settings import load_settings
from prw_platform import pipeline
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.queues import MAX_MESSAGES_PER_RECEIVE

console = Console(highlight=False)


class StageName(StrEnum):
    resolution = "resolution"
    relay = "relay"
    apply = "apply"
    sweeper = "sweeper"
    all = "all"


#: What ``all`` runs (the sweeper keeps its own slow pace).
PIPELINE_STAGES = ("resolution", "relay", "apply")
#: Per stage: the batch size (the queue stages receive at most MAX_MESSAGES_PER_RECEIVE per call) and the
#: longest idle sleep in seconds.
DEFAULT_BATCH = {"resolution": MAX_MESSAGES_PER_RECEIVE, "relay": 100, "apply": MAX_MESSAGES_PER_RECEIVE}
DEFAULT_IDLE_SLEEP = {"resolution": 0.2, "relay": 0.2, "apply": 0.2, "sweeper": 30.0}
#: AW-02: a job is re-enqueued when it has been pending this long (its send after commit failed or never ran).
SWEEP_PENDING_AFTER = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class StageBatch:
    """One batch of one stage: how many messages or rows it took (0: an idle round) and its outcomes."""

    stage: str
    taken: int
    counts: Mapping[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        outcomes = ", ".join(f"{name} {n}" for name, n in self.counts.items() if n)
        return f"{self.taken} taken" + (f": {outcomes}" if outcomes else "")


StageFn = Callable[[], StageBatch]


def _resolution(platform: Platform, batch: int) -> StageFn:
    services = pipeline.resolution_services(platform)

    def run() -> StageBatch:
        taken, counts = 0, dict[str, int]()
        while taken < batch:
            report = pipeline.resolve_batch(
                platform, services, max_messages=min(MAX_MESSAGES_PER_RECEIVE, batch - taken)
            )
            taken += report.received
            for status, n in report.statuses.items():
                counts[status] = counts.get(status, 0) + n
            counts["retried"] = counts.get("retried", 0) + report.retried
            counts["unsettled"] = counts.get("unsettled", 0) + report.unsettled
            if report.received == 0:
                break
        return StageBatch("resolution", taken, counts)

    return run


def _relay(platform: Platform, batch: int) -> StageFn:
    def run() -> StageBatch:
        result = pipeline.relay_outbox(platform, batch_size=batch)
        return StageBatch(
            "relay", result.published, {"published": result.published, "streams": len(result.streams)}
        )

    return run


def _apply(platform: Platform, batch: int) -> StageFn:
    def run() -> StageBatch:
        taken, counts = 0, dict[str, int]()
        while taken < batch:
            report = pipeline.apply_changes(
                platform, max_messages=min(MAX_MESSAGES_PER_RECEIVE, batch - taken)
            )
            taken += report.received
            outcomes = {
                "applied": report.applied,
                "duplicate": report.ignored_duplicate,
                "stale": report.ignored_stale_revision,
                "old_epoch": report.ignored_old_epoch,
                "parked": report.parked,
                "released": report.released,
                "retried": report.retried,
                "ack_superseded": report.ack_superseded,
                **{f"dead_lettered {code}": n for code, n in report.dead_lettered.items()},
            }
            for name, n in outcomes.items():
                counts[name] = counts.get(name, 0) + n
            if report.received == 0:
                break
        return StageBatch("apply", taken, counts)

    return run


def _sweeper(platform: Platform) -> StageFn:
    def run() -> StageBatch:
        report = pipeline.sweep_jobs(platform, older_than=SWEEP_PENDING_AFTER)
        # A job whose send failed again is not progress: counting it would keep the sweeper from idling.
        return StageBatch(
            "sweeper", len(report.enqueued), {"enqueued": len(report.enqueued), "failed": len(report.failed)}
        )

    return run


def stage_functions(
    platform: Platform, stages: tuple[str, ...], batch: int | None = None
) -> dict[str, StageFn]:
    """The batch function of each stage over ``platform``. Built in the calling thread, so that every pool and
    queue the stages use is created once, before any stage thread starts."""
    builders: dict[str, Callable[[int], StageFn]] = {
        "resolution": lambda n: _resolution(platform, n),
        "relay": lambda n: _relay(platform, n),
        "apply": lambda n: _apply(platform, n),
        "sweeper": lambda _n: _sweeper(platform),
    }
    functions = {name: builders[name](batch or DEFAULT_BATCH.get(name, 1)) for name in stages}
    # The platform's services are cached properties: create the ones the stages use here, not racing in threads.
    if "resolution" in stages:
        _ = platform.resolution_queue
    if "relay" in stages:
        _ = platform.accepted_changes_out
    if "apply" in stages:
        _ = platform.accepted_changes_in
    if "sweeper" in stages:
        _ = platform.sweeper_db, platform.resolution_queue
    return functions


@dataclass
class WorkerReport:
    """What a worker did until it stopped: per stage, the batches that took something and the messages taken."""

    batches: dict[str, int] = field(default_factory=dict)
    taken: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    drained: bool = False


class _StopEvent(threading.Event):
    """Set once to stop every stage; setting it also wakes the stages that are sleeping."""

    def __init__(self, wake_all: Callable[[], None]) -> None:
        super().__init__()
        self._wake_all = wake_all

    def set(self) -> None:
        super().set()
        self._wake_all()


class WorkerLoop:
    """Run each stage in its own thread until ``stop`` is set or, with ``max_idle_rounds``, the pipeline is
    drained. ``stages`` are in pipeline order: a batch that took something wakes the stages after it at once
    (the relay right after a decision, the apply right after a publish), so work handed over inside one process
    never waits for an idle sleep. ``on_batch`` sees every batch that took something; ``on_error`` every
    exception a batch raised (the stage backs off for its longest idle sleep and goes on: a database outage must
    not end a worker)."""

    def __init__(
        self,
        stages: Mapping[str, StageFn],
        *,
        idle_sleep: float | Mapping[str, float] = 0.5,
        max_idle_rounds: int | None = None,
        on_batch: Callable[[StageBatch], None] | None = None,
        on_error: Callable[[str, BaseException], None] | None = None,
    ) -> None:
        if not stages:
            raise ValueError("a worker needs at least one stage")
        if max_idle_rounds is not None and max_idle_rounds < 1:
            raise ValueError("max_idle_rounds must be at least 1")
        self._stages = dict(stages)
        self._idle_sleep = {
            name: float(idle_sleep if isinstance(idle_sleep, int | float) else idle_sleep[name])
            for name in self._stages
        }
        if any(s <= 0 for s in self._idle_sleep.values()):
            raise ValueError("idle sleep must be positive")
        self._max_idle_rounds = max_idle_rounds
        self._wake = {name: threading.Event() for name in self._stages}
        self.stop: threading.Event = _StopEvent(self._wake_all)
        self._on_batch = on_batch
        self._on_error = on_error
        self._lock = threading.Lock()
        # Drain detection: ``_activity`` counts batches that took something; a stage's idle streak counts idle
        # rounds that began after the latest of them, and a busy stage is never counted as idle.
        self._activity = 0
        self._streak = dict.fromkeys(self._stages, 0)
        self._busy = dict.fromkeys(self._stages, False)
        self.report = WorkerReport(
            batches=dict.fromkeys(self._stages, 0),
            taken=dict.fromkeys(self._stages, 0),
            errors=dict.fromkeys(self._stages, 0),
        )

    def run(self) -> WorkerReport:
        threads = [
            # Daemon threads: an interpreter that exits anyway (an unexpected error in the caller) does not wait
            # for a sleeping stage; a requested stop joins them below.
            threading.Thread(target=self._run_stage, args=(name,), name=f"prw-worker-{name}", daemon=True)
            for name in self._stages
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return self.report

    def _begin_round(self, name: str) -> int | None:
        with self._lock:
            if self.stop.is_set():
                return None
            self._busy[name] = True
            return self._activity

    def _end_round(self, name: str, batch: StageBatch | None, seen_activity: int) -> None:
        with self._lock:
            self._busy[name] = False
            if batch is None:
                self.report.errors[name] += 1
                return
            if batch.taken:
                names = list(self._stages)
                for downstream in names[names.index(name) + 1 :]:
                    self._wake[downstream].set()
                self._activity += 1
                self._streak = dict.fromkeys(self._streak, 0)
                self.report.batches[name] += 1
                self.report.taken[name] += batch.taken
            elif seen_activity == self._activity:
                self._streak[name] += 1
            limit = self._max_idle_rounds
            if limit is not None and all(
                not self._busy[s] and self._streak[s] >= limit for s in self._stages
            ):
                self.report.drained = True
                self.stop.set()

    def _wake_all(self) -> None:
        for wake in self._wake.values():
            wake.set()

    def _run_stage(self, name: str) -> None:
        wake = self._wake[name]
        longest = self._idle_sleep[name]
        sleep = longest / 16
        while (seen := self._begin_round(name)) is not None:
            batch: StageBatch | None = None
            try:
                batch = self._stages[name]()
            except Exception as error:  # a stage's own failures are settled per message; this is an outage
                if self._on_error:
                    self._on_error(name, error)
            self._end_round(name, batch, seen)
            if batch is not None and batch.taken:
                sleep = longest / 16
                if self._on_batch:
                    self._on_batch(batch)
                continue
            # Idle (or failed): sleep, unless an upstream stage hands over work or a stop is requested. A wake
            # that arrived during the batch ends this sleep at once: that work may be newer than the batch's read.
            woken = wake.wait(longest if batch is None else sleep)
            wake.clear()
            sleep = longest / 16 if woken else min(sleep * 2, longest)


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop`` (each stage finishes its batch); the previous handlers come back after."""

    def request_stop(signum: int, frame: FrameType | None) -> None:
        if not stop.is_set():
            console.print(
                f"[yellow]{signal.Signals(signum).name}[/yellow]: stopping after the current batches"
            )
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _print_batch(batch: StageBatch) -> None:
    console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] [bold]{batch.stage:<10}[/bold] {batch.describe()}")


def _print_error(stage: str, error: BaseException) -> None:
    console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] [bold red]{stage:<10}[/bold red] {error!r}")


def worker(
    stage: Annotated[StageName, typer.Argument(help="The stage to run; all = resolution, relay and apply.")],
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            min=1,
            help="Messages (resolution, apply) or outbox rows (relay) per batch. Default: 10, 100.",
        ),
    ] = None,
    idle_sleep: Annotated[
        float | None,
        typer.Option(
            "--idle-sleep",
            min=0.001,
            help="Longest sleep in seconds after a round that found nothing. Default: 0.2 (sweeper 30).",
        ),
    ] = None,
    max_idle_rounds: Annotated[
        int | None,
        typer.Option(
            "--max-idle-rounds", min=1, help="Exit once every stage found nothing K rounds in a row."
        ),
    ] = None,
) -> None:
    """Run pipeline stages in a loop without Dagster, for low latency. Ctrl-C finishes the current batch."""
    stages = PIPELINE_STAGES if stage is StageName.all else (stage.value,)
    settings = load_settings()
    with console.status("connecting", spinner="dots"):
        platform = bootstrap(settings)
    with platform:
        loop = WorkerLoop(
            stage_functions(platform, stages, batch),
            idle_sleep=idle_sleep or {name: DEFAULT_IDLE_SLEEP[name] for name in stages},
            max_idle_rounds=max_idle_rounds,
            on_batch=_print_batch,
            on_error=_print_error,
        )
        where = "embedded PostgreSQL" if platform.urls.embedded else "PRW_DATABASE_URL"
        console.print(
            f"[bold]prw worker[/bold] {', '.join(stages)} on {where}; Ctrl-C stops after the current batch"
        )
        with stop_on_signals(loop.stop):
            report = loop.run()
    summary = ", ".join(f"{name} {report.taken[name]} in {report.batches[name]} batches" for name in stages)
    why = "drained" if report.drained else "stopped"
    console.print(f"[bold]prw worker[/bold] {why}: {summary}")

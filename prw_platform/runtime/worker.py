"""The worker loop: stages in threads, for low latency, without Dagster (``prw worker``, ``prw dev``'s tests).

Each stage runs in its own thread, one round after another; a round is one ``run_stage`` call with the stage's
per-round budget. A round that took nothing sleeps a short, bounded time: the sleep starts at 1/16 of the stage's
longest idle sleep and doubles while the stage stays idle, so work that follows work (the relay right after a
decision) is picked up within milliseconds while an idle worker polls gently. A round that took something wakes
the stages after it at once (in-process handover without idle sleeps).

Why threads and not a round-robin: a slow resolution batch (ten pages to extract) would otherwise hold back the
relay and the product apply of decisions already committed. The stages share nothing but the platform's
connection pools (thread-safe, one per database role), and the seed's guarantees do not depend on their
interleaving: the relay reads committed rows only (AW-03) and the product consumer orders by position and parks
what arrives early (AW-04).

Stopping: setting ``stop`` (``stop_on_signals`` does it on SIGINT/SIGTERM) lets every stage finish the round it is
in (its transactions commit and its deliveries are acknowledged, AW-04 "ack after commit"), then ``run`` returns.
With ``max_idle_rounds=K`` the loop stops by itself once every stage has been idle for K rounds that all began
after the last round of any stage that took something: the pipeline is drained.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from types import FrameType

from prw_platform.runtime.stages import Budget, StageHost, StageReport, run_stage

#: One round of one stage.
Round = Callable[[], StageReport]


def stage_rounds(platform: StageHost, names: tuple[str, ...], batch: int | None = None) -> dict[str, Round]:
    """One round per stage over ``platform``: ``run_stage`` with at most ``batch`` items (default: the stage's
    batch size). Every service the stages use is built here, in the calling thread, before any stage thread
    starts (the platform builds its services lazily)."""
    rounds: dict[str, Round] = {}
    for name in names:
        stage = platform.stages[name]
        stage.service(platform)
        budget = Budget(items=batch or stage.batch_size)
        rounds[name] = partial(run_stage, platform, name, budget)
    return rounds


@dataclass
class WorkerReport:
    """What a worker did until it stopped: per stage, the rounds that took something and the items taken."""

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
    """Run each stage's rounds in its own thread until ``stop`` is set or, with ``max_idle_rounds``, the pipeline
    is drained. ``rounds`` are in pipeline order. ``on_batch`` sees every round that took something; ``on_error``
    every exception a round raised (the stage backs off for its longest idle sleep and goes on: a database outage
    must not end a worker)."""

    def __init__(
        self,
        rounds: Mapping[str, Round],
        *,
        idle_sleep: float | Mapping[str, float] = 0.5,
        max_idle_rounds: int | None = None,
        on_batch: Callable[[StageReport], None] | None = None,
        on_error: Callable[[str, BaseException], None] | None = None,
    ) -> None:
        if not rounds:
            raise ValueError("a worker needs at least one stage")
        if max_idle_rounds is not None and max_idle_rounds < 1:
            raise ValueError("max_idle_rounds must be at least 1")
        self._rounds = dict(rounds)
        self._idle_sleep = {
            name: float(idle_sleep if isinstance(idle_sleep, int | float) else idle_sleep[name])
            for name in self._rounds
        }
        if any(s <= 0 for s in self._idle_sleep.values()):
            raise ValueError("idle sleep must be positive")
        self._max_idle_rounds = max_idle_rounds
        self._wake = {name: threading.Event() for name in self._rounds}
        self.stop: threading.Event = _StopEvent(self._wake_all)
        self._on_batch = on_batch
        self._on_error = on_error
        self._lock = threading.Lock()
        # Drain detection: ``_activity`` counts rounds that took something; a stage's idle streak counts idle
        # rounds that began after the latest of them, and a busy stage is never counted as idle.
        self._activity = 0
        self._streak = dict.fromkeys(self._rounds, 0)
        self._busy = dict.fromkeys(self._rounds, False)
        self.report = WorkerReport(
            batches=dict.fromkeys(self._rounds, 0),
            taken=dict.fromkeys(self._rounds, 0),
            errors=dict.fromkeys(self._rounds, 0),
        )

    @classmethod
    def for_platform(
        cls,
        platform: StageHost,
        names: tuple[str, ...],
        *,
        batch: int | None = None,
        idle_sleep: float | None = None,
        max_idle_rounds: int | None = None,
        on_batch: Callable[[StageReport], None] | None = None,
        on_error: Callable[[str, BaseException], None] | None = None,
    ) -> WorkerLoop:
        """The registered stages ``names`` of ``platform``, each with its own idle sleep unless one is given."""
        return cls(
            stage_rounds(platform, names, batch),
            idle_sleep=idle_sleep or {name: platform.stages[name].idle_sleep for name in names},
            max_idle_rounds=max_idle_rounds,
            on_batch=on_batch,
            on_error=on_error,
        )

    def run(self) -> WorkerReport:
        threads = [
            # Daemon threads: an interpreter that exits anyway (an unexpected error in the caller) does not wait
            # for a sleeping stage; a requested stop joins them below.
            threading.Thread(target=self._run_stage, args=(name,), name=f"prw-worker-{name}", daemon=True)
            for name in self._rounds
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

    def _end_round(self, name: str, report: StageReport | None, seen_activity: int) -> None:
        with self._lock:
            self._busy[name] = False
            if report is None:
                self.report.errors[name] += 1
                return
            if report.taken:
                names = list(self._rounds)
                for downstream in names[names.index(name) + 1 :]:
                    self._wake[downstream].set()
                self._activity += 1
                self._streak = dict.fromkeys(self._streak, 0)
                self.report.batches[name] += 1
                self.report.taken[name] += report.taken
            elif seen_activity == self._activity:
                self._streak[name] += 1
            limit = self._max_idle_rounds
            if limit is not None and all(
                not self._busy[s] and self._streak[s] >= limit for s in self._rounds
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
            report: StageReport | None = None
            try:
                report = self._rounds[name]()
            except Exception as error:  # a stage's own failures are settled per message; this is an outage
                if self._on_error:
                    self._on_error(name, error)
            self._end_round(name, report, seen)
            if report is not None and report.taken:
                sleep = longest / 16
                if self._on_batch:
                    self._on_batch(report)
                continue
            # Idle (or failed): sleep, unless an upstream stage hands over work or a stop is requested. A wake
            # that arrived during the round ends this sleep at once: that work may be newer than the round's read.
            woken = wake.wait(longest if report is None else sleep)
            wake.clear()
            sleep = longest / 16 if woken else min(sleep * 2, longest)


@contextmanager
def stop_on_signals(stop: threading.Event, on_signal: Callable[[str], None] | None = None) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop`` (each stage finishes its round); the previous handlers come back after.
    ``on_signal`` hears the signal's name the first time (a CLI prints it)."""

    def request_stop(signum: int, frame: FrameType | None) -> None:
        if not stop.is_set() and on_signal is not None:
            on_signal(signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

"""``prw worker``: the pipeline stages in a loop, the same core functions Dagster runs
(docs/architecture.md: One stage runtime).

The loop is driven in-process with its own stop conditions (drained after K idle rounds, or a stop request); no
test sleeps to wait for background work."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_cli.commands.demo import CATALOG, TENANT, run_demo
from prw_cli.demo_pages import demo_pages
from prw_platform.bootstrap import Platform
from prw_platform.pipeline import APPLY, IDENTITY, NORMALIZE, RELAY, RESOLUTION
from prw_platform.product import reports as product_reports
from prw_platform.resolver import reports
from prw_platform.runtime import StageReport, WorkerLoop, WorkerReport, stage_rounds

#: The bundled demo pages with a strong identifier (GTIN, or brand + MPN) become these public items.
PUBLIC_TITLES = {
    "Certified International Elegance Canape Plates, Set of 6",
    "Executive Anvil",
    "Keystick Wall Sconce",
    "Large green jacket",
    "Large light blue coat",
}
#: The bound of every wait below, generous for a loaded machine: each ends as soon as its condition holds.
DEADLINE_S = 60.0
PIPELINE_STAGES = (RESOLUTION, NORMALIZE, IDENTITY, RELAY, APPLY)


@pytest.fixture
def product_api(platform: Platform) -> Iterator[httpx.Client]:
    with (
        BackgroundServer(compose.product_app(platform, TENANT, CATALOG)) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        yield http


def _public_titles(http: httpx.Client) -> set[str]:
    response = http.get("/v1/items", params={"limit": 100})
    assert response.status_code == 200
    return {str(item["title"]) for item in response.json()["items"]}


def test_worker_all_takes_queued_captures_through_to_public_items(
    platform: Platform, product_api: httpx.Client
) -> None:
    # Captures stored over HTTP (202) and queued; nothing resolved yet.
    run_demo(platform, drive=False)
    assert _public_titles(product_api) == set()

    batches: list[StageReport] = []
    loop = WorkerLoop(
        stage_rounds(platform, PIPELINE_STAGES),
        idle_sleep=0.02,
        max_idle_rounds=2,
        on_batch=batches.append,
    )
    report = _run_with_deadline(loop)

    assert report.drained
    assert report.errors == {"resolution": 0, "normalize": 0, "identity": 0, "relay": 0, "apply": 0}
    assert {b.stage for b in batches} == set(PIPELINE_STAGES)
    assert all(b.taken > 0 for b in batches)  # one printed line per batch that took something
    assert _public_titles(product_api) == PUBLIC_TITLES

    # Drained means drained: every committed event relayed and applied, every job settled.
    (stream,) = reports.stream_statuses(platform.operator_db)
    assert stream.contiguous
    assert stream.unpublished == 0
    assert report.taken["relay"] == stream.committed_position
    (progress,) = product_reports.all_stream_progress(platform.operator_db)
    assert progress.lag(stream.committed_position) == 0
    assert platform.resolution_queue.depth().visible == 0
    resolved = sum(
        b.counts.get("stage_completed", 0) + b.counts.get("review_case_opened", 0)
        for b in batches
        if b.stage == IDENTITY
    )
    # Every page through each of if_resolution_job's three stages, once.
    assert resolved == report.taken["identity"] == report.taken["normalize"] == report.taken["resolution"]
    assert resolved == len(demo_pages())


def test_worker_stages_run_as_separate_loops_reach_the_same_public_items(
    platform: Platform, product_api: httpx.Client
) -> None:
    run_demo(platform, drive=False)
    for stage in PIPELINE_STAGES:  # three processes' worth, one after the other
        report = _run_with_deadline(
            WorkerLoop(stage_rounds(platform, (stage,), batch=3), idle_sleep=0.02, max_idle_rounds=1)
        )
        assert report.drained
        assert report.taken[stage] > 0
        assert report.batches[stage] > 1  # --batch 3 splits the work

    assert _public_titles(product_api) == PUBLIC_TITLES


def test_stop_request_lets_the_current_batch_finish_and_starts_no_other() -> None:
    calls = itertools.count(1)
    finished: list[int] = []
    loop: WorkerLoop

    def stage() -> StageReport:
        call = next(calls)
        if call == 3:
            loop.stop.set()  # SIGINT arrives in the middle of the third batch
        finished.append(call)
        return StageReport("apply", 1)

    loop = WorkerLoop({"apply": stage}, idle_sleep=0.01)
    report = _run_with_deadline(loop)

    assert finished == [1, 2, 3]
    assert report.batches == {"apply": 3}
    assert not report.drained


def test_a_stop_request_wakes_a_sleeping_stage() -> None:
    rounds = itertools.count(1)
    slept_once = threading.Event()

    def stage() -> StageReport:
        if next(rounds) == 1:
            slept_once.set()
        return StageReport("sweeper", 0)

    loop = WorkerLoop({"sweeper": stage}, idle_sleep=3600)  # first sleep: 225 s

    def stop_once_asleep() -> None:
        if slept_once.wait(DEADLINE_S):
            loop.stop.set()

    stopper = threading.Thread(target=stop_once_asleep)
    stopper.start()
    report = _run_with_deadline(loop)  # fails unless the stop ends the sleep
    stopper.join()

    assert report.batches == {"sweeper": 0}


def test_work_handed_downstream_wakes_the_next_stage_without_waiting_for_its_sleep() -> None:
    relay_rounds = itertools.count(1)
    relay_went_to_sleep = threading.Event()
    pending = _Pending()
    loop: WorkerLoop

    def resolution() -> StageReport:
        if not relay_went_to_sleep.is_set():
            assert relay_went_to_sleep.wait(DEADLINE_S)
            pending.add(4)
            return StageReport("resolution", 1)
        return StageReport("resolution", 0)

    def relay() -> StageReport:
        taken = pending.take()
        if taken:
            loop.stop.set()
        elif next(relay_rounds) == 1:
            relay_went_to_sleep.set()  # idle: the relay now sleeps 225 s unless woken
        return StageReport("relay", taken)

    loop = WorkerLoop({"resolution": resolution, "relay": relay}, idle_sleep=3600)
    report = _run_with_deadline(loop)

    assert report.taken == {"resolution": 1, "relay": 4}


def test_a_failing_batch_is_reported_and_the_stage_goes_on() -> None:
    outcomes: Iterator[StageReport | Exception] = iter(
        [RuntimeError("database unavailable"), StageReport("relay", 4)]
    )
    errors: list[tuple[str, str]] = []

    def stage() -> StageReport:
        outcome = next(outcomes, StageReport("relay", 0))
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    report = _run_with_deadline(
        WorkerLoop(
            {"relay": stage},
            idle_sleep=0.01,
            max_idle_rounds=2,
            on_error=lambda name, error: errors.append((name, str(error))),
        )
    )

    assert errors == [("relay", "database unavailable")]
    assert report.errors == {"relay": 1}
    assert report.taken == {"relay": 4}
    assert report.drained


def test_drain_is_not_declared_while_another_stage_is_in_a_batch() -> None:
    """Resolution idles (a full idle streak), then spends a long batch deciding while the relay idles many
    rounds; the decision's events appear as that batch ends, so the loop may not stop before the relay took them."""
    resolution_calls = itertools.count(1)
    relay_idle_rounds = itertools.count(1)
    resolution_deciding = threading.Event()
    relay_idled_long = threading.Event()
    pending = _Pending()

    def resolution() -> StageReport:
        if next(resolution_calls) != 3:  # idle twice, then one long batch, then idle
            return StageReport("resolution", 0)
        resolution_deciding.set()
        assert relay_idled_long.wait(DEADLINE_S), "the relay never idled"
        pending.add(4)  # the decision's events, committed as the batch ends
        return StageReport("resolution", 1)

    def relay() -> StageReport:
        # The relay's idle streak only builds up while resolution is deciding.
        assert resolution_deciding.wait(DEADLINE_S), "resolution never started its batch"
        taken = pending.take()
        if not taken and next(relay_idle_rounds) >= 5:
            relay_idled_long.set()
        return StageReport("relay", taken)

    report = _run_with_deadline(
        WorkerLoop({"resolution": resolution, "relay": relay}, idle_sleep=0.01, max_idle_rounds=2)
    )

    assert report.drained
    assert report.taken == {"resolution": 1, "relay": 4}


def test_an_idle_round_that_began_before_the_last_work_does_not_count_towards_drain() -> None:
    """The relay looks at the outbox just before a decision commits and finds nothing: that round says nothing
    about the decision's events, so it may not count as idle."""
    resolution_calls = itertools.count(1)
    relay_calls = itertools.count(1)
    relay_looking = threading.Event()
    pending = _Pending()
    loop: WorkerLoop

    def resolution() -> StageReport:
        if next(resolution_calls) != 1:
            return StageReport("resolution", 0)
        assert relay_looking.wait(DEADLINE_S), "the relay never started a round"
        pending.add(4)
        return StageReport("resolution", 1)

    def relay() -> StageReport:
        if next(relay_calls) == 1:
            relay_looking.set()  # found nothing: the decision is not committed yet ...
            _wait_for(lambda: loop.report.taken["resolution"] == 1, "the decision")
            return StageReport("relay", 0)  # ... and the round ends after it was
        return StageReport("relay", pending.take())

    loop = WorkerLoop({"resolution": resolution, "relay": relay}, idle_sleep=0.01, max_idle_rounds=1)
    report = _run_with_deadline(loop)

    assert report.drained
    assert report.taken == {"resolution": 1, "relay": 4}


class _Pending:
    """Work one stage leaves for another, like committed outbox rows."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def add(self, n: int) -> None:
        with self._lock:
            self._count += n

    def take(self) -> int:
        with self._lock:
            taken, self._count = self._count, 0
        return taken


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + DEADLINE_S
    poll = threading.Event()
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        poll.wait(0.005)


def test_a_worker_loop_needs_stages_and_a_positive_idle_limit() -> None:
    with pytest.raises(ValueError, match="at least one stage"):
        WorkerLoop({})
    with pytest.raises(ValueError, match="max_idle_rounds"):
        WorkerLoop({"relay": lambda: StageReport("relay", 0)}, max_idle_rounds=0)
    with pytest.raises(ValueError, match="idle sleep"):
        WorkerLoop({"relay": lambda: StageReport("relay", 0)}, idle_sleep=0)


def _run_with_deadline(loop: WorkerLoop) -> WorkerReport:
    """Run the loop in a thread; if it has not stopped by the deadline, stop it and fail (never hang)."""
    result: list[WorkerReport] = []
    thread = threading.Thread(target=lambda: result.append(loop.run()), daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    if thread.is_alive():
        loop.stop.set()
        thread.join(DEADLINE_S)
        pytest.fail("the worker loop did not stop by itself before the deadline")
    return result[0]

"""``prw worker`` as an operator runs it: a process that prints one line per batch, exits once drained with
``--max-idle-rounds``, and stops on SIGINT or SIGTERM after finishing its current batch."""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import pytest
from typer.testing import CliRunner

from prw_cli.commands.demo import run_demo
from prw_cli.main import app
from prw_platform.bootstrap import Platform
from prw_platform.resolver import reports
from prw_platform.runtime import stop_on_signals
from tests.e2e.cli.processes import PrwProcess, alive, catches, descendants, poll_until, survivors

DEADLINE_S = 40.0
BATCH_LINE = re.compile(r"^\d\d:\d\d:\d\d (resolution|relay|apply)\s+(\d+) taken")


def test_worker_all_drains_queued_captures_and_prints_one_line_per_batch(
    platform: Platform, cli_env: dict[str, str]
) -> None:
    run_demo(platform, drive=False)

    with PrwProcess(["worker", "all", "--max-idle-rounds", "2", "--idle-sleep", "0.05"], cli_env) as worker:
        assert worker.wait(DEADLINE_S) == 0

    lines = [m for line in worker.output.splitlines() if (m := BATCH_LINE.match(line))]
    taken = {
        stage: sum(int(m[2]) for m in lines if m[1] == stage) for stage in ("resolution", "relay", "apply")
    }
    (stream,) = reports.stream_statuses(platform.operator_db)
    assert taken["relay"] == stream.committed_position > 0
    assert stream.unpublished == 0
    assert taken["resolution"] == 8  # the bundled pages; the repeated one was an idempotent replay (no job)
    assert taken["apply"] >= stream.committed_position
    assert "prw worker drained:" in worker.output


def test_worker_stops_on_sigterm_and_exits_cleanly(platform: Platform, cli_env: dict[str, str]) -> None:
    with PrwProcess(["worker", "all"], cli_env) as worker:
        worker.wait_for_line("Ctrl-C stops after the current batch", DEADLINE_S)
        # The command prints that line a moment before it installs its handlers: on a busy machine a signal sent
        # at once could still meet the default action.
        poll_until(lambda: catches(worker.process.pid, signal.SIGTERM), "the SIGTERM handler", DEADLINE_S)
        worker.signal_group(signal.SIGTERM)
        assert worker.wait(DEADLINE_S) == 0

    assert "SIGTERM: stopping after the current batches" in worker.output
    assert "prw worker stopped: resolution 0 in 0 batches" in worker.output


def test_killing_the_pid_of_run_prw_leaves_no_process_behind(
    platform: Platform, cli_env: dict[str, str]
) -> None:
    """``./run prw ...`` becomes the prw process (no ``uv run`` in between that a SIGKILL would orphan it from):
    the pid an operator sees is the one that does the work, and killing it leaves nothing running."""
    with PrwProcess(["worker", "all"], cli_env, through_run=True) as worker:
        worker.wait_for_line("Ctrl-C stops after the current batch", 5 * DEADLINE_S)  # ./run syncs first
        started = {worker.process.pid} | descendants(worker.process.pid)
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.wait(DEADLINE_S)
        end = time.monotonic() + DEADLINE_S
        while any(alive(pid) for pid in started) and time.monotonic() < end:
            time.sleep(0.05)
    assert survivors(started) == {}  # killed on the way if not


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_asks_the_loop_to_stop_instead_of_interrupting_it(signum: signal.Signals) -> None:
    before = signal.getsignal(signum)
    stop = threading.Event()
    with stop_on_signals(stop):
        os.kill(os.getpid(), signum)  # no KeyboardInterrupt, no exit: the batch in progress goes on
        assert stop.wait(DEADLINE_S)
    assert signal.getsignal(signum) is before


def test_worker_refuses_an_unknown_stage_and_a_zero_batch() -> None:
    runner = CliRunner()
    unknown = runner.invoke(app, ["worker", "ingest"])
    assert unknown.exit_code == 2
    assert "ingest" in unknown.output
    zero = runner.invoke(app, ["worker", "relay", "--batch", "0"])
    assert zero.exit_code == 2

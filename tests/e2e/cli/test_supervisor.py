"""``prw_cli.supervisor``, the process between ``prw dev`` and each Dagster process, on plain Python commands: it
passes the command's exit status on, and when its parent dies (even by SIGKILL) the kernel's parent-death signal
makes it stop the command and everything the command started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from prw_cli.supervisor import PARENT_DEATH_SIGNAL, parent_death_signal, supervised
from tests.e2e.cli.processes import descendants, poll_until, wait_until_gone

DEADLINE_S = 30.0

#: A command that starts a grandchild and waits, like dagster-webserver with its code server.
WITH_GRANDCHILD = (
    "import subprocess, sys, time;"
    " subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']);"
    " time.sleep(600)"
)

#: The role of `prw dev`: starts the supervisor as `prw dev` does, prints its pid, then waits to be killed.
PARENT = f"""
import signal, subprocess, sys, time
from prw_cli.supervisor import PARENT_DEATH_SIGNAL, parent_death_signal, supervised
child = subprocess.Popen(
    supervised([sys.executable, "-c", {WITH_GRANDCHILD!r}]),
    start_new_session=True,
    preexec_fn=parent_death_signal(PARENT_DEATH_SIGNAL),
)
print(child.pid, flush=True)
time.sleep(600)
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_DEATHSIG is Linux only")


def test_sigkill_of_the_parent_stops_the_command_and_its_children() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        supervisor = int(parent.stdout.readline())
        # supervisor -> command -> grandchild
        poll_until(lambda: len(descendants(supervisor)) == 2, "the command and its child", DEADLINE_S)
        started = descendants(parent.pid)
        assert supervisor in started

        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(DEADLINE_S)
        orphans = wait_until_gone(started, DEADLINE_S)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()

    assert orphans == {}


@pytest.mark.parametrize(
    ("command", "status"),
    [
        ("raise SystemExit(3)", 3),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + signal.SIGTERM),
    ],
)
def test_the_supervisor_exits_with_the_commands_status(command: str, status: int) -> None:
    completed = subprocess.run(supervised([sys.executable, "-c", command]), timeout=DEADLINE_S, check=False)
    assert completed.returncode == status


def test_a_signal_to_the_group_reaches_the_command_and_the_supervisor_waits_for_it() -> None:
    supervisor = subprocess.Popen(
        supervised([sys.executable, "-c", WITH_GRANDCHILD]),
        start_new_session=True,
        preexec_fn=parent_death_signal(PARENT_DEATH_SIGNAL),
    )
    try:
        poll_until(lambda: len(descendants(supervisor.pid)) == 2, "the command and its child", DEADLINE_S)
        started = descendants(supervisor.pid)
        os.killpg(supervisor.pid, signal.SIGINT)  # what `prw dev` sends first on Ctrl-C
        # The command ends by SIGINT (Python re-raises an uncaught KeyboardInterrupt as the signal); the supervisor
        # ignored the signal, waited for the command and reports its status.
        assert supervisor.wait(DEADLINE_S) == 128 + signal.SIGINT
        assert wait_until_gone(started, DEADLINE_S) == {}
    finally:
        if supervisor.poll() is None:
            os.killpg(supervisor.pid, signal.SIGKILL)
            supervisor.wait()


def test_without_a_command_it_prints_its_usage() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "prw_cli.supervisor"], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 2
    assert "usage: python -m prw_cli.supervisor -- COMMAND" in completed.stderr

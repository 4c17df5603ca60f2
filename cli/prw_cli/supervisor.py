"""No Dagster process outlives ``prw dev``, however ``prw dev`` ends (Ctrl-C, SIGTERM, a crash, SIGKILL).

    python -m prw_cli.supervisor -- COMMAND [ARGS...]

``prw dev`` starts each Dagster process (webserver, daemon) through this small supervisor, as the leader of a new
process group, with a **parent-death signal**: ``prctl(PR_SET_DEATHSIG, SIGHUP)`` in the child before it executes
(``parent_death_signal``, a ``preexec_fn``), so the kernel itself tells the supervisor when ``prw dev`` is gone,
even killed with SIGKILL. The supervisor runs COMMAND in its own process group, where Dagster keeps everything it
starts (the code servers, ``dagster api grpc``, and the runs they launch: Dagster creates no session or group of
its own on POSIX). So:

* ``prw dev`` stops normally: it signals the group (SIGINT, then SIGTERM, then SIGKILL, ``GRACE_SECONDS``);
  COMMAND and its code servers get each signal directly, the supervisor ignores them and exits with COMMAND's
  exit status once COMMAND has exited, and ``prw dev`` kills whatever is left of the group.
* ``prw dev`` is gone (SIGHUP from the kernel): the supervisor stops the group the same way itself, and its last
  SIGKILL to the group takes the supervisor with it.
* the supervisor alone is killed: COMMAND has a parent-death signal too (SIGKILL, set here: this process has no
  other thread, so its ``preexec_fn`` is safe), and ``prw dev`` kills the rest of the group when it notices.

Why not the signal on the Dagster processes alone: the kernel sends it to a direct child only (``fork`` clears it),
and Dagster's code servers would then outlive a killed webserver by their 30 s heartbeat timeout, runs longer.

The parent-death signal is **Linux only** (``prctl``). Elsewhere ``parent_death_signal`` returns ``None``: a normal
stop still reaches every process through the group, but a ``prw dev`` killed with SIGKILL leaves the groups
running (stop one with ``kill -INT -<pgid>``).

Keep this module light: it is a process of its own for as long as ``prw dev`` runs (standard library only).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from types import FrameType

#: Seconds the group may take to stop after SIGINT, then after SIGTERM, before SIGKILL.
GRACE_SECONDS = (15.0, 5.0)
#: What the kernel sends the supervisor when ``prw dev`` ends (a terminal hangup cannot: no controlling terminal).
PARENT_DEATH_SIGNAL = signal.SIGHUP
_PR_SET_DEATHSIG = 1  # <linux/prctl.h>


def supervised(command: list[str]) -> list[str]:
    """The command line that runs ``command`` under a supervisor with this interpreter."""
    return [sys.executable, "-m", "prw_cli.supervisor", "--", *command]


def parent_death_signal(signum: int) -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess.Popen``: the kernel sends the child ``signum`` when the thread that
    started it ends (call Popen from the main thread). Linux only: ``None`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    # Resolved here, in the parent: the forked child only makes the call.
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()

    def set_in_child() -> None:
        if prctl(_PR_SET_DEATHSIG, signum, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DEATHSIG) failed")
        if os.getppid() != parent:  # the parent ended before the call above: no signal will ever come
            os._exit(1)

    return set_in_child


class _ParentGone(Exception):
    """The supervised parent died (PR_SET_DEATHSIG): stop the group."""


def _parent_gone(signum: int, frame: FrameType | None) -> None:
    raise _ParentGone


def _ignore(signum: int, frame: FrameType | None) -> None:
    """SIGINT and SIGTERM reach the whole group: COMMAND acts on them; the supervisor waits for it to exit.
    A handler, not SIG_IGN: an ignored signal would stay ignored in COMMAND after exec."""


def stop_group(process: subprocess.Popen[bytes] | None) -> None:
    """Stop this process group as ``prw dev`` would; the final SIGKILL ends this process too."""
    for signum, grace in zip((signal.SIGINT, signal.SIGTERM), GRACE_SECONDS, strict=True):
        if process is None:
            break
        os.killpg(0, signum)
        try:
            process.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    sys.stdout.flush()
    os.killpg(0, signal.SIGKILL)


def exit_status(returncode: int) -> int:
    """A shell's convention: 128 + N for a process ended by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print("usage: python -m prw_cli.supervisor -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    parent = os.getppid()
    if os.getpgrp() != os.getpid():  # started without a group of its own: never signal the caller's group
        os.setpgid(0, 0)
    process: subprocess.Popen[bytes] | None = None
    try:
        signal.signal(PARENT_DEATH_SIGNAL, _parent_gone)
        signal.signal(signal.SIGINT, _ignore)
        signal.signal(signal.SIGTERM, _ignore)
        process = subprocess.Popen(command, preexec_fn=parent_death_signal(signal.SIGKILL))
        return exit_status(process.wait())
    except _ParentGone:
        print(f"prw dev (pid {parent}) is gone: stopping {command[0]} and what it started", flush=True)
        stop_group(process)
        return 1  # not reached: the group's SIGKILL ends this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

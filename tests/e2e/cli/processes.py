"""A ``prw`` command as a child process in a session of its own, its output read line by line, and the tree of
processes it started (Linux ``/proc``), for tests that stop it with a signal and look for orphans."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

PRW = str(Path(sys.executable).parent / "prw")
#: The README's entry point: ``./run prw <args>`` installs what is missing, then runs prw.
RUN = str(Path(__file__).resolve().parents[3] / "run")


class PrwProcess:
    def __init__(self, args: list[str], env: dict[str, str], *, through_run: bool = False) -> None:
        # Wide enough that rich never wraps a line the tests look for.
        self.process = subprocess.Popen(
            [RUN, "prw", *args] if through_run else [PRW, *args],
            env={**env, "COLUMNS": "200"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            with self._changed:
                self._lines.append(raw.decode(errors="replace").rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def output(self) -> str:
        with self._changed:
            return "\n".join(self._lines)

    def wait_for_line(self, fragment: str, deadline_s: float) -> str:
        """The first output line containing ``fragment``; fails at the deadline or when the process ended."""
        end = time.monotonic() + deadline_s
        with self._changed:
            while True:
                found = next((line for line in self._lines if fragment in line), None)
                if found is not None:
                    return found
                left = end - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"no line with {fragment!r} in:\n" + "\n".join(self._lines))
                self._changed.wait(min(left, 0.2))

    def signal_group(self, signum: int) -> None:
        """What a terminal's Ctrl-C does: the signal to the whole foreground process group."""
        os.killpg(self.process.pid, signum)

    def wait(self, deadline_s: float) -> int:
        code = self.process.wait(timeout=deadline_s)
        self._reader.join(deadline_s)
        return code

    def __enter__(self) -> PrwProcess:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        # Whatever the test did, leave nothing behind: the command's group and every descendant's group.
        if self.process.poll() is None:
            groups = {self.process.pid} | {process_group(pid) for pid in descendants(self.process.pid)}
            for group in groups:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)
            self.process.wait(timeout=10)


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name is in parentheses and may contain spaces; the fields after it are space-separated.
    return text[text.rindex(")") + 2 :].split()


def alive(pid: int) -> bool:
    """Running (a zombie has exited: it only waits for its parent to read its status)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def process_group(pid: int) -> int:
    fields = _stat(pid)
    return int(fields[2]) if fields else pid


def descendants(root: int) -> set[int]:
    """Every live process below ``root`` (children, grandchildren, ...)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None and fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def survivors(pids: set[int]) -> dict[int, str]:
    """Which of ``pids`` still run, with their command lines; killed on the way, so that a failing test does not
    leave orphans behind either."""
    found = {pid: command_line(pid) for pid in pids if alive(pid)}
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        return ""


def poll_until(condition: Callable[[], bool], what: str, deadline_s: float) -> None:
    end = time.monotonic() + deadline_s
    pause = threading.Event()
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        pause.wait(0.1)


def listening_ports(pids: set[int]) -> set[int]:
    """The TCP ports (IPv4 and IPv6) that any of ``pids`` listens on: their socket inodes matched against the
    LISTEN rows of /proc/net/tcp and tcp6."""
    inodes: set[str] = set()
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError, PermissionError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        inodes.add(target[len("socket:[") : -1])
    ports: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # 0A: TCP_LISTEN
                ports.add(int(local.rsplit(":", 1)[1], 16))
    return ports


def wait_until_gone(pids: set[int], deadline_s: float) -> dict[int, str]:
    """Poll until none of ``pids`` runs or the deadline passes; then the survivors (killed on the way)."""
    end = time.monotonic() + deadline_s
    pause = threading.Event()
    while any(alive(pid) for pid in pids) and time.monotonic() < end:
        pause.wait(0.1)
    return survivors(pids)


def catches(pid: int, signum: int) -> bool:
    """Has the process installed a handler for ``signum`` (the SigCgt mask of /proc/<pid>/status)?"""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) >> (signum - 1) & 1)

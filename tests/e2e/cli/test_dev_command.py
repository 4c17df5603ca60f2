"""``prw dev``: the intake API, the product API and the Dagster webserver and daemon on the test's database;
Ctrl-C (SIGINT to the process group, as a terminal sends it) stops every process it started, and so does the
kernel's parent-death signal when ``prw dev`` is killed with SIGKILL. A port in use ends it before it starts
anything."""

from __future__ import annotations

import os
import signal
import socket

import httpx
import pytest

from prw_cli.commands.demo import run_demo
from prw_platform.bootstrap import Platform
from prw_platform.config import Settings
from prw_platform.runtime import drain
from tests.e2e.cli.processes import (
    PrwProcess,
    command_line,
    descendants,
    listening_ports,
    poll_until,
    survivors,
    wait_until_gone,
)

# A Dagster webserver and daemon take 10-20 s to answer on a quiet 2-core machine and several times that while the
# rest of the suite runs beside them: a deadline, not a timing.
START_DEADLINE_S = 120.0
STOP_DEADLINE_S = 30.0
#: A code server whose webserver was stopped by the watchdog is normally gone within seconds; on a loaded machine
#: the webserver's own shutdown can be slow, and then the code server's heartbeat timeout (45 s, ``--heartbeat-
#: timeout`` of ``dagster api grpc``) ends it: both are the platform's doing, so the test waits well past the latter
#: (a full suite on the 2-core machine once left a code server alive 60 s after the kill; it had exited by 180 s).
ORPHAN_DEADLINE_S = 180.0

# Each test starts a Dagster webserver, a daemon and their code servers: under pytest-xdist (``./run tests`` runs
# with --dist loadgroup) they run one after another on one worker instead of competing for the two cores.
pytestmark = pytest.mark.xdist_group("dagster-processes")


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@pytest.fixture
def ports() -> dict[str, int]:
    intake, product, dagster, admin, idp = _free_ports(5)
    return {"intake": intake, "product": product, "dagster": dagster, "admin": admin, "idp": idp}


def _args(ports: dict[str, int]) -> list[str]:
    return [
        "dev",
        "--intake-port",
        str(ports["intake"]),
        "--product-port",
        str(ports["product"]),
        "--dagster-port",
        str(ports["dagster"]),
        "--admin-port",
        str(ports["admin"]),
        "--idp-port",
        str(ports["idp"]),
    ]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _code_servers(pid: int) -> int:
    return sum("dagster api grpc" in command_line(p) for p in descendants(pid))


# Two tests, one Dagster start each (the suite's budget): one serves the demo's catalog and is then killed with
# SIGKILL; the other has no catalog yet and is stopped with Ctrl-C.


def test_dev_serves_both_apis_and_dagster_and_sigkill_leaves_no_process_behind(
    platform: Platform, cli_settings: Settings, cli_env: dict[str, str], ports: dict[str, int]
) -> None:
    # A catalog with public items, as `prw demo` leaves it (captures over HTTP, then the pipeline drained).
    run_demo(platform, drive=False)
    drain(platform)
    intake = f"http://127.0.0.1:{ports['intake']}"
    product = f"http://127.0.0.1:{ports['product']}"
    dagster = f"http://127.0.0.1:{ports['dagster']}"

    with PrwProcess(_args(ports), cli_env) as dev:
        dev.wait_for_line("Ctrl-C stops everything", START_DEADLINE_S)
        assert f"{product}/v1/items" in dev.output
        assert f"{intake}/docs" in dev.output
        assert "no catalog" not in dev.output
        poll_until(lambda: _answers(f"{dagster}/server_info"), "the Dagster webserver", START_DEADLINE_S)

        items = httpx.get(f"{product}/v1/items", timeout=5)
        assert items.status_code == 200
        assert len(items.json()["items"]) == 5  # the same database the demo wrote
        assert httpx.get(f"{intake}/openapi.json", timeout=5).status_code == 200
        assert httpx.get(f"{intake}/docs", timeout=5).status_code == 200
        # The admin origin logs an operator in through the development identity provider.
        admin = f"http://127.0.0.1:{ports['admin']}"
        assert f"{admin}/auth/login" in dev.output
        with httpx.Client(base_url=admin, follow_redirects=True, timeout=10) as operator:
            logged_in = operator.get("/auth/login", params={"login_hint": "rita", "return_to": "/v1/session"})
            assert logged_in.status_code == 200, logged_in.text
            session = operator.get("/v1/session").json()
        assert session["subject"] == "rita"
        assert session["memberships"] == {"ten_primary": "reviewer"}

        # The webserver and the daemon, each with the code server it started: the grandchildren a parent-death
        # signal on the Dagster processes alone would leave behind.
        poll_until(lambda: _code_servers(dev.process.pid) >= 2, "both code servers", START_DEADLINE_S)
        started = descendants(dev.process.pid)
        commands = {pid: command_line(pid) for pid in started}
        assert any("dagster-webserver" in c for c in commands.values())
        assert any("dagster-daemon" in c for c in commands.values())
        # Every TCP port of the whole tree is one prw dev checks before it starts.
        assert listening_ports(started | {dev.process.pid}) == set(ports.values())

        os.kill(dev.process.pid, signal.SIGKILL)
        dev.wait(STOP_DEADLINE_S)
        orphans = wait_until_gone(started, ORPHAN_DEADLINE_S)

    assert orphans == {}
    # A supervisor saw prw dev go and stopped its group. Which one says so first depends on scheduling: in a loaded
    # full run the webserver's log once lacked the line while nothing was left behind, so either log will do.
    logs = [
        (cli_settings.data_dir / "logs" / f"{name}.log").read_text(errors="replace")
        for name in ("dagster-webserver", "dagster-daemon")
    ]
    assert any(f"prw dev (pid {dev.process.pid}) is gone: stopping" in log for log in logs), logs
    assert not _answers(f"{product}/v1/items")


def test_dev_without_a_catalog_says_to_run_the_demo_first_and_ctrl_c_stops_every_child(
    platform: Platform, cli_env: dict[str, str], ports: dict[str, int]
) -> None:
    product = f"http://127.0.0.1:{ports['product']}"
    with PrwProcess(_args(ports), cli_env) as dev:
        hint = dev.wait_for_line("no catalog ten_primary/cat_primary yet", START_DEADLINE_S)
        dev.wait_for_line("Ctrl-C stops everything", START_DEADLINE_S)
        started = descendants(dev.process.pid)
        # Stopped while Dagster is still starting up.
        dev.signal_group(signal.SIGINT)
        assert dev.wait(STOP_DEADLINE_S) == 0
        orphans = survivors(started)

    assert "prw demo" in hint
    assert orphans == {}
    assert "stopped dagster-webserver" in dev.output
    assert "stopped dagster-daemon" in dev.output
    assert not _answers(f"{product}/v1/items")


@pytest.mark.parametrize(
    ("busy", "what"),
    [("intake", "intake API"), ("product", "product API"), ("dagster", "Dagster webserver")],
)
def test_dev_reports_a_port_in_use_and_starts_nothing(
    cli_settings: Settings, cli_env: dict[str, str], ports: dict[str, int], busy: str, what: str
) -> None:
    # What a running `prw dev` (or anything else) holding the port looks like to a second one.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = {**ports, busy: taken.getsockname()[1]}
        with PrwProcess(_args(ports), cli_env) as dev:
            code = dev.wait(START_DEADLINE_S)

    assert code == 1
    assert f"cannot serve the {what} on 127.0.0.1:{ports[busy]}: Address already in use" in dev.output
    assert "prw dev started nothing" in dev.output
    # No Dagster home prepared, no child log opened: nothing was started.
    assert not (cli_settings.data_dir / "dagster").exists()
    assert not (cli_settings.data_dir / "logs").exists()


def test_dev_refuses_one_port_for_two_servers(
    cli_settings: Settings, cli_env: dict[str, str], ports: dict[str, int]
) -> None:
    ports = {**ports, "dagster": ports["intake"]}
    with PrwProcess(_args(ports), cli_env) as dev:
        code = dev.wait(START_DEADLINE_S)

    assert code == 1
    assert f"port {ports['intake']} is given for both the intake API and the Dagster webserver" in dev.output
    assert not (cli_settings.data_dir / "logs").exists()

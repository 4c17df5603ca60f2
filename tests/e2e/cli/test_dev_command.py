"""``prw dev``: the intake API, the product API and the Dagster webserver and daemon on the test's database;
Ctrl-C (SIGINT to the process group, as a terminal sends it) stops every process it started."""

from __future__ import annotations

import signal
import socket

import httpx
import pytest

from prw_cli.commands.demo import run_demo
from prw_platform.bootstrap import Platform
from prw_platform.runtime import drain
from tests.e2e.cli.processes import PrwProcess, command_line, descendants, poll_until, survivors

START_DEADLINE_S = 45.0
STOP_DEADLINE_S = 30.0


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
    intake, product, dagster = _free_ports(3)
    return {"intake": intake, "product": product, "dagster": dagster}


def _args(ports: dict[str, int]) -> list[str]:
    return [
        "dev",
        "--intake-port",
        str(ports["intake"]),
        "--product-port",
        str(ports["product"]),
        "--dagster-port",
        str(ports["dagster"]),
    ]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_dev_serves_both_apis_and_dagster_and_ctrl_c_stops_every_child(
    platform: Platform, cli_env: dict[str, str], ports: dict[str, int]
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

        # The webserver and the daemon, each with the code server it started.
        started = descendants(dev.process.pid)
        commands = {pid: command_line(pid) for pid in started}
        assert any("dagster-webserver" in c for c in commands.values())
        assert any("dagster-daemon" in c for c in commands.values())
        assert sum("dagster api grpc" in c for c in commands.values()) >= 1

        dev.signal_group(signal.SIGINT)
        assert dev.wait(STOP_DEADLINE_S) == 0
        orphans = survivors(started)

    assert orphans == {}
    assert "stopped dagster-webserver" in dev.output
    assert "stopped dagster-daemon" in dev.output
    assert not _answers(f"{product}/v1/items")


def test_dev_without_a_catalog_says_to_run_the_demo_first_and_still_stops_cleanly(
    platform: Platform, cli_env: dict[str, str], ports: dict[str, int]
) -> None:
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


def test_dev_reports_a_port_in_use_and_starts_nothing(
    platform: Platform, cli_env: dict[str, str], ports: dict[str, int]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = {**ports, "product": taken.getsockname()[1]}
        with PrwProcess(_args(ports), cli_env) as dev:
            code = dev.wait(START_DEADLINE_S)

    assert code != 0
    assert f"cannot serve the product API on 127.0.0.1:{ports['product']}" in dev.output
    assert "dagster" not in dev.output.lower()

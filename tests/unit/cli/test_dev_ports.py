"""``prw dev`` checks every port it will listen on before it starts anything (``port_problems``)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from prw_cli.commands.dev import port_problems


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_free_ports_have_no_problem() -> None:
    assert port_problems({"intake API": _free_port(), "Dagster webserver": _free_port()}) == []


def test_a_port_in_use_is_named_with_what_would_serve_on_it(listening: int) -> None:
    problems = port_problems({"intake API": _free_port(), "Dagster webserver": listening})
    assert problems == [
        f"cannot serve the Dagster webserver on 127.0.0.1:{listening}: Address already in use"
    ]


def test_every_busy_port_is_reported_not_only_the_first(listening: int) -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        second = other.getsockname()[1]
        problems = port_problems({"intake API": listening, "product API": second})
    assert [p.split(":")[0] for p in problems] == [
        "cannot serve the intake API on 127.0.0.1",
        "cannot serve the product API on 127.0.0.1",
    ]


def test_one_port_for_two_servers_is_a_problem() -> None:
    port = _free_port()
    assert port_problems({"intake API": port, "product API": _free_port(), "Dagster webserver": port}) == [
        f"port {port} is given for both the intake API and the Dagster webserver"
    ]

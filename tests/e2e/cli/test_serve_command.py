"""``prw serve intake|product``: several uvicorn worker processes on the test's database, each with a platform of
its own; liveness and readiness on both origins; SIGTERM finishes in-flight work, exits 0 and leaves no process
behind; a database that does not answer makes readiness 503 while liveness stays 200."""

from __future__ import annotations

import hashlib
import signal
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from prw_platform.bootstrap import Platform
from prw_platform.config import Settings
from prw_platform.services import CatalogSpec, ClientSpec, SourceSpec
from tests.e2e.cli.processes import PrwProcess, descendants, poll_until, wait_until_gone

# Generous: 4-5 s on an idle machine, but a CI runner with four xdist workers on two cores once needed over 60 s to
# import and start two uvicorn workers (the dev command's test allows 120 s for the same reason).
START_DEADLINE_S = 120.0
STOP_DEADLINE_S = 30.0
TENANT, CATALOG, SOURCE = "ten_serve", "cat_serve", "src_serve_web"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code in (200, 503)
    except httpx.TransportError:
        return False


@pytest.fixture
def port() -> int:
    return _free_port()


def _serve(app: str, port: int, env: dict[str, str], *extra: str) -> PrwProcess:
    return PrwProcess(["serve", app, "--port", str(port), *extra], env)


@pytest.fixture
def started(port: int, cli_env: dict[str, str]) -> Iterator[PrwProcess]:
    with _serve("intake", port, cli_env, "--workers", "2") as served:
        poll_until(
            lambda: _answers(f"http://127.0.0.1:{port}/healthz"), "prw serve to answer", START_DEADLINE_S
        )
        yield served


def test_serve_intake_with_two_workers_answers_health_tokens_and_stops_on_sigterm(
    platform: Platform, started: PrwProcess, port: int
) -> None:
    platform.catalogs.provision(CatalogSpec(TENANT, CATALOG, "Serve", sources=(SourceSpec(SOURCE, "Web"),)))
    client = platform.clients.create(ClientSpec(TENANT, CATALOG, "cw_serve", "ci_serve_01", (SOURCE,)))
    base = f"http://127.0.0.1:{port}"

    live = httpx.get(f"{base}/healthz")
    assert (live.status_code, live.json()) == (200, {"status": "alive"})
    ready = httpx.get(f"{base}/readyz")
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})

    token = httpx.post(
        f"{base}/v1/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=(client.client_id, client.client_secret),
    )
    assert token.status_code == 200, token.text
    assert token.json()["token_type"].lower() == "bearer"

    # A new connection per request: the kernel hands each to whichever worker accepts first.
    def served_by(_: int) -> str:
        with httpx.Client(base_url=base, headers={"Connection": "close"}) as http:
            response = http.get("/readyz")
            assert response.status_code == 200
            return response.headers["X-Served-By"]

    workers = descendants(started.process.pid)
    seen: set[str] = set()
    with ThreadPoolExecutor(4) as pool:
        for _ in range(20):
            seen |= set(pool.map(served_by, range(20)))
            if len(seen) >= 2:
                break
    assert len(seen) == 2, seen
    assert {int(pid) for pid in seen} <= workers
    # Every log line carries its process's pid: both workers said they started.
    for pid in seen:
        started.wait_for_line(f"pid={pid} ", 5)

    # SIGTERM while an upload is in flight (half its bytes sent): the worker finishes it before it exits.
    auth = {"Authorization": f"Bearer {token.json()['access_token']}"}
    data = b"<html>" + b"x" * 100_000 + b"</html>"
    declared = httpx.post(
        f"{base}/v1/artifacts/uploads",
        headers=auth,
        json={
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "media_type": "text/html",
            "source_id": SOURCE,
        },
    )
    assert declared.status_code in (200, 201), declared.text
    target = declared.json()["target"]
    half_sent, stopping = threading.Event(), threading.Event()

    def body() -> Iterator[bytes]:
        yield data[: len(data) // 2]
        half_sent.set()
        stopping.wait(STOP_DEADLINE_S)
        yield data[len(data) // 2 :]

    outcome: list[int] = []

    def upload() -> None:
        headers = {**auth, **target["headers"]}
        outcome.append(
            httpx.request(target["method"], target["url"], headers=headers, content=body()).status_code
        )

    uploading = threading.Thread(target=upload)
    uploading.start()
    assert half_sent.wait(START_DEADLINE_S)
    started.process.send_signal(signal.SIGTERM)
    started.wait_for_line("Waiting for connections to close", STOP_DEADLINE_S)
    stopping.set()
    uploading.join(STOP_DEADLINE_S)
    assert len(outcome) == 1, started.output
    assert 200 <= outcome[0] < 300, (outcome, started.output)
    assert started.wait(STOP_DEADLINE_S) == 0, started.output
    assert wait_until_gone(workers, STOP_DEADLINE_S) == {}
    assert "stopped" in started.output


def test_readiness_is_503_when_the_database_does_not_answer_and_liveness_stays_200(
    cli_env: dict[str, str], cli_settings: Settings, port: int
) -> None:
    dead = _free_port()  # nothing listens there
    env = {**cli_env, "PRW_DATABASE_URL": f"postgresql://postgres@127.0.0.1:{dead}/prw_nowhere"}
    env["PRW_CONTROL_DATABASE_URL"] = env["PRW_DATABASE_URL"] + "_control"
    # One worker process each (the two-worker server is test_serve_intake_with_two_workers_...): the same checks,
    # the least start-up and shutdown against a database that never answers.
    for app, workers in (("intake", "1"), ("product", "1")):
        with _serve(app, port, env, "--workers", workers) as served:
            base = f"http://127.0.0.1:{port}"
            liveness = f"{base}/healthz"
            poll_until(lambda url=liveness: _answers(url), f"prw serve {app} to answer", START_DEADLINE_S)
            assert httpx.get(f"{base}/healthz").status_code == 200
            ready = httpx.get(f"{base}/readyz", timeout=10)
            assert ready.status_code == 503, ready.text
            assert ready.json()["error"]["code"] == "STORAGE_UNAVAILABLE"
            assert ready.headers["Retry-After"]
            served.process.send_signal(signal.SIGTERM)
            assert served.wait(STOP_DEADLINE_S) == 0, served.output


def test_serve_product_answers_readiness_on_the_configured_catalog(
    platform: Platform, cli_env: dict[str, str], port: int
) -> None:
    with _serve("product", port, cli_env) as served:
        base = f"http://127.0.0.1:{port}"
        poll_until(lambda: _answers(f"{base}/healthz"), "prw serve product to answer", START_DEADLINE_S)
        assert httpx.get(f"{base}/readyz").status_code == 200
        assert httpx.get(f"{base}/v1/items").status_code == 200
        served.process.send_signal(signal.SIGTERM)
        assert served.wait(STOP_DEADLINE_S) == 0, served.output


def test_an_unknown_app_is_refused_with_status_2(cli_env: dict[str, str]) -> None:
    with PrwProcess(["serve", "nothing"], cli_env) as refused:
        assert refused.wait(30) == 2
        assert "intake" in refused.output
        assert "product" in refused.output

"""``prw collect`` against a real intake server on loopback, behind an ASGI
wrapper that answers 429 + Retry-After and 503, and drops connections before the app sees a request and after it
processed a capture: every page ends with exactly one capture (the Idempotency-Key makes the retry a replay); a
400 or 403 is reported once and never retried; revoked credentials stop the run with a clear report."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from prw_api.intake import create_app
from prw_api.server import BackgroundServer
from prw_cli.main import app
from prw_platform.auth import ProvisionedClient, revoke_client
from prw_platform.config import Settings
from prw_platform.db.database import Database
from tests.e2e.intake.conftest import IntakeApiServices
from tests.e2e.intake.faults import Faults
from tests.integration.intake.helpers import INSTANCE, SOURCE, UNGRANTED_SOURCE, World

runner = CliRunner()
CAPTURES = "/v1/captures"
DECLARE = "/v1/artifacts/uploads"
PUT = "/v1/artifacts/uploads/{id}"


@pytest.fixture
def faults(settings: Settings, services: IntakeApiServices) -> Faults:
    return Faults(create_app(settings, services.intake, services.auth, services.collectors))


@pytest.fixture
def faulty_server(faults: Faults) -> Iterator[BackgroundServer]:
    with BackgroundServer(faults) as running:
        yield running


@pytest.fixture
def pages(tmp_path: Path) -> Path:
    folder = tmp_path / "pages"
    folder.mkdir()
    for n in range(1, 6):
        (folder / f"p{n}.html").write_text(
            f"<html><title>Page {n}</title><body>GTIN 084000664782{n}</body></html>"
        )
    return folder


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def prw_collect(
    server: BackgroundServer, client: ProvisionedClient, *args: str, source: str = SOURCE
) -> Result:
    env = {
        "PRW_COLLECTOR_CLIENT_ID": client.client_id,
        "PRW_COLLECTOR_CLIENT_SECRET": client.client_secret,
        "COLUMNS": "250",
    }
    # Nothing resolves captures here, so receipts stay ``stored``: read once (polling: test_collect_polls_...).
    argv = [
        "collect",
        "--source",
        source,
        "--intake",
        server.url,
        "--backoff-base",
        "0.01",
        "--receipt-wait",
        "0",
    ]
    argv += args
    return runner.invoke(app, argv, env=env)


def captures_per_record(owner_db: Database, tenant: str) -> dict[str, int]:
    with owner_db.transaction() as conn:
        rows = conn.execute(
            "SELECT native_record_id, count(*) AS n FROM resolver.capture WHERE tenant_id = %s GROUP BY 1",
            (tenant,),
        ).fetchall()
    return {row["native_record_id"]: row["n"] for row in rows}


def test_every_page_ends_with_exactly_one_capture_through_429_503_and_dropped_connections(
    faults: Faults,
    faulty_server: BackgroundServer,
    client: ProvisionedClient,
    world: World,
    owner_db: Database,
    pages: Path,
) -> None:
    faults.plan = {
        ("POST", DECLARE, sha(pages / "p1.html")): ["429"],
        ("PUT", PUT, "*"): ["drop_before"],  # the first PUT: aborted before intake reads it
        ("POST", CAPTURES, "p2.html"): ["503", "drop_before"],
        ("POST", CAPTURES, "p3.html"): ["drop_after"],  # stored, but the answer is lost
        ("POST", CAPTURES, "p4.html"): ["drop_after", "503", "drop_after"],
    }

    result = prw_collect(faulty_server, client, str(pages), "--url-base", "https://lumen.example/p")

    assert result.exit_code == 0, result.output
    assert all(not planned for planned in faults.plan.values()), faults.plan  # every fault was injected
    assert captures_per_record(owner_db, world.tenant) == {f"p{n}.html": 1 for n in range(1, 6)}
    lines = {line.split("│")[1].strip(): line for line in result.output.splitlines() if "│ p" in line}
    assert "stored" in lines["p1.html"]
    assert "replayed" in lines["p3.html"]  # the retry after the lost answer replayed: 200, the same receipt
    assert "│ 200 " in lines["p3.html"]
    assert "│ 4 " in lines["p4.html"]  # four capture attempts, one capture
    # Registered, heartbeats sent and accepted (an intake without the routes: tests/unit/cli/test_collect_flow.py).
    assert "warning" not in result.output
    assert faults.seen[("POST", "/v1/workers/register", "*")] == 1
    assert (
        faults.seen[("POST", f"/v1/workers/{INSTANCE}/heartbeat", "*")] >= 2
    )  # liveness, then the run report
    assert "captures 5, outcome succeeded" in result.output

    # A rerun replays every capture: still one capture per page.
    again = prw_collect(faulty_server, client, str(pages), "--url-base", "https://lumen.example/p")
    assert again.exit_code == 0, again.output
    assert again.output.count("replayed") == 5
    assert captures_per_record(owner_db, world.tenant) == {f"p{n}.html": 1 for n in range(1, 6)}


def test_a_400_is_reported_once_and_never_retried(
    faults: Faults,
    faulty_server: BackgroundServer,
    client: ProvisionedClient,
    world: World,
    owner_db: Database,
    pages: Path,
) -> None:
    faults.plan = {("POST", CAPTURES, "p2.html"): ["400"]}

    result = prw_collect(faulty_server, client, str(pages / "p1.html"), str(pages / "p2.html"))

    assert result.exit_code == 1, result.output
    assert faults.seen[("POST", CAPTURES, "p2.html")] == 1
    assert "failed: capture: 400 BAD_REQUEST" in result.output
    assert captures_per_record(owner_db, world.tenant) == {"p1.html": 1}


def test_a_403_is_reported_once_and_never_retried(
    faults: Faults,
    faulty_server: BackgroundServer,
    client: ProvisionedClient,
    world: World,
    owner_db: Database,
    pages: Path,
) -> None:
    result = prw_collect(faulty_server, client, str(pages / "p1.html"), source=UNGRANTED_SOURCE)

    assert result.exit_code == 1, result.output
    assert faults.seen[("POST", DECLARE, sha(pages / "p1.html"))] == 1
    assert "declare: 403" in result.output
    assert captures_per_record(owner_db, world.tenant) == {}


def test_revoked_credentials_stop_the_run_with_a_clear_report(
    faults: Faults,
    faulty_server: BackgroundServer,
    client: ProvisionedClient,
    world: World,
    owner_db: Database,
    resolver_db: Database,
    pages: Path,
) -> None:
    # The operator revokes the client while the run is between its second and third page.
    faults.plan = {
        ("POST", DECLARE, sha(pages / "p3.html")): [
            lambda: revoke_client(resolver_db, world.tenant, client.client_id)
        ]
    }

    result = prw_collect(faulty_server, client, str(pages))

    assert result.exit_code == 3, result.output
    assert "CREDENTIAL_REVOKED" in result.output
    assert "alert the operator" in result.output
    assert result.output.count("run stopped: CREDENTIAL_REVOKED") == 2  # p4 and p5 were not attempted
    assert faults.seen[("POST", DECLARE, sha(pages / "p4.html"))] == 0
    assert captures_per_record(owner_db, world.tenant) == {"p1.html": 1, "p2.html": 1}


def test_a_client_revoked_before_the_run_stops_at_the_token(
    faulty_server: BackgroundServer,
    client: ProvisionedClient,
    world: World,
    resolver_db: Database,
    pages: Path,
) -> None:
    revoke_client(resolver_db, world.tenant, client.client_id)

    result = prw_collect(faulty_server, client, str(pages))

    assert result.exit_code == 3, result.output
    assert "token: 401 invalid_client" in result.output

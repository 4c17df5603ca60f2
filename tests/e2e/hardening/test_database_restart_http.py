"""PostgreSQL goes away and comes back: every origin keeps answering, never a 500.

A server restart ends every backend with FATAL 57P01 (AdminShutdown); ``pg_terminate_backend`` on every backend of
the test's main and control databases does the same to each pooled connection without touching the machine's
server. Afterwards a capture (intake: bearer token, the control database's history epoch, the capture
transaction), a public read (product: its ``async`` pool) and an operator read (admin: the session, the operator
pool) each succeed at once: the pools look at a connection before handing it out, and reads retry a broken one.
While a database cannot be reached at all, the answer is 503 with ``retryable: true`` and ``/readyz`` says 503 too,
the control database included; both recover once it is back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import psycopg
import pytest
from psycopg import sql

from prw_api import compose
from prw_api.devidp import create_dev_idp
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import DevIdpSettings, DevUser, Settings
from prw_platform.db.urls import database_name
from prw_platform.resolver.intake import IntakeSettings
from prw_platform.services import CatalogSpec, ClientSpec, SourceSpec
from tests.e2e.admin.conftest import Operator
from tests.e2e.intake import flows
from tests.e2e.intake.conftest import Collector, token_for
from tests.integration.intake.helpers import INSTANCE, SOURCE, WORKER

TENANT, CATALOG = "ten_restart", "cat_restart"
#: Bounds of the waits below, generous for a loaded machine: they end as soon as the condition holds.
DEADLINE_S = 60.0


@dataclass(frozen=True)
class Origins:
    intake: str
    product: str
    admin: str


@pytest.fixture
def platform(deployment_settings: Settings) -> Iterator[Platform]:
    # The history epoch read on every capture (no cache), so every capture takes a control-database connection.
    with bootstrap(deployment_settings, intake_settings=IntakeSettings(epoch_cache_seconds=0)) as built:
        built.catalogs.provision(
            CatalogSpec(TENANT, CATALOG, "Restart", sources=(SourceSpec(SOURCE, "Web"),))
        )
        yield built


@pytest.fixture
def origins(platform: Platform) -> Iterator[Origins]:
    users = [DevUser(subject="vic", name="Vic Viewer", tenants={TENANT: "viewer"})]
    with (
        BackgroundServer(create_dev_idp(DevIdpSettings(users=users))) as idp,
        BackgroundServer(compose.intake_app(platform)) as intake,
        BackgroundServer(compose.product_app(platform, TENANT, CATALOG)) as product,
        BackgroundServer(compose.admin_app(platform, issuer=idp.url)) as admin,
    ):
        yield Origins(intake.url, product.url, admin.url)


@pytest.fixture
def collector(platform: Platform, origins: Origins) -> Iterator[Collector]:
    client = platform.clients.create(ClientSpec(TENANT, CATALOG, WORKER, INSTANCE, (SOURCE,)))
    with httpx.Client(base_url=origins.intake, timeout=30) as http:
        yield Collector(http, token_for(http, client))


@pytest.fixture
def viewer(origins: Origins) -> Iterator[Operator]:
    operator = Operator(origins.admin, "vic")
    yield operator
    operator.close()


def _databases(settings: Settings) -> list[str]:
    """The names of the test's main and control databases."""
    return [database_name(settings.database_url or ""), database_name(settings.control_database_url or "")]


def _terminate_backends(admin_url: str, names: list[str]) -> int:
    """End every backend of these databases, as a server restart does, and wait until each of them is gone.

    A pool may open a new connection meanwhile (one still filling up after the last request): that one is the
    restarted server's, as it would be after a real restart, so the wait is for the ended backends only."""
    terminate = """SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = ANY(%s) AND pid <> pg_backend_pid()"""
    alive = "SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        ended = [int(row[0]) for row in conn.execute(terminate, (names,)).fetchall()]
        _wait_until(lambda: not conn.execute(alive, (ended,)).fetchall(), "the ended backends to be gone")
    return len(ended)


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _capture(collector: Collector, n: int) -> httpx.Response:
    """A new capture (its own record and key) of a stored artifact."""
    ref = flows.upload(collector)
    record = f"restart-{n}"
    return flows.submit(collector, flows.capture(ref, native_record_id=record), key=f"{WORKER}:{record}")


def _never_500(response: httpx.Response) -> None:
    assert response.status_code != 500, response.text
    if response.status_code == 503:
        assert response.json()["error"]["retryable"] is True, response.text


def test_after_every_backend_was_terminated_each_origin_answers_its_first_request(
    pg_admin_url: str, deployment_settings: Settings, origins: Origins, collector: Collector, viewer: Operator
) -> None:
    first = _capture(collector, 1)
    assert first.status_code == 202, first.text
    receipt_id = first.json()["receipt_id"]
    assert viewer.http.get(f"/v1/receipts/{receipt_id}").status_code == 200
    assert httpx.get(f"{origins.product}/v1/items").status_code == 200
    for origin in (origins.intake, origins.product, origins.admin):
        assert httpx.get(f"{origin}/readyz").status_code == 200

    assert _terminate_backends(pg_admin_url, _databases(deployment_settings)) > 0

    again = _capture(collector, 2)
    _never_500(again)
    assert again.status_code == 202, again.text
    read = httpx.get(f"{origins.product}/v1/items")
    _never_500(read)
    assert read.status_code == 200, read.text
    operator_read = viewer.http.get(f"/v1/receipts/{receipt_id}")
    _never_500(operator_read)
    assert operator_read.status_code == 200, operator_read.text

    assert _terminate_backends(pg_admin_url, _databases(deployment_settings)) > 0
    for origin in (origins.intake, origins.product, origins.admin):
        ready = httpx.get(f"{origin}/readyz")
        assert ready.status_code == 200, (origin, ready.text)


@pytest.fixture
def control_refusing(pg_admin_url: str, deployment_settings: Settings) -> Iterator[Callable[[bool], None]]:
    """``refuse(True)``: the control database accepts no connection (and has none left); ``refuse(False)``: back."""
    control = database_name(deployment_settings.control_database_url or "")
    name = sql.Identifier(control)

    def refuse(refusing: bool) -> None:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            allow = sql.Literal(not refusing)
            conn.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS {}").format(name, allow))
        if refusing:  # the main database's connections stay: only the control database goes away
            _terminate_backends(pg_admin_url, [control])

    yield refuse
    refuse(False)


def test_while_the_control_database_is_away_captures_and_readiness_are_503_retryable_and_both_recover(
    origins: Origins, collector: Collector, control_refusing: Callable[[bool], None]
) -> None:
    assert _capture(collector, 1).status_code == 202

    control_refusing(True)

    ready = httpx.get(f"{origins.intake}/readyz", timeout=30)
    assert ready.status_code == 503, ready.text
    assert ready.json()["error"] == {
        "code": "STORAGE_UNAVAILABLE",
        "message": "the database is unavailable; retry later",
        "retryable": True,
    }
    refused = _capture(collector, 2)
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["retryable"] is True
    assert refused.headers["Retry-After"]

    control_refusing(False)

    _wait_until(lambda: httpx.get(f"{origins.intake}/readyz", timeout=30).status_code == 200, "readiness")
    retried = _capture(collector, 2)  # the same request again, as a collector retries a 503
    assert retried.status_code == 202, retried.text

"""The admin origin on real parts: the development identity provider and the admin API, each a uvicorn server on
loopback, over a fresh PostgreSQL pair; review cases opened by real resolution of real pages (intake, the
resolution consumer and the installed plugins, as tests/integration/resolution composes them)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from prw_api import compose
from prw_api.devidp import create_dev_idp
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import DevIdpSettings, DevUser, OperatorOidcSettings, Settings
from prw_platform.db.database import Database
from tests.integration.resolution.conftest import (  # noqa: F401  (fixtures)
    catalogs,
    collector,
    queue,
    registry,
    resolution,
    services,
    stage_queues,
    store,
)
from tests.integration.resolution.pipeline import ANVIL_MICRODATA, RACING_BIKE, Collector, Resolution, page
from tests.support.postgres import TestDatabases

TENANT = "ten_primary"
OTHER_TENANT = "ten_other"

USERS = [
    DevUser(subject="ada", name="Ada Admin", tenants={TENANT: "operator_admin"}),
    DevUser(subject="rita", name="Rita Reviewer", tenants={TENANT: "reviewer"}),
    DevUser(subject="rob", name="Rob Reviewer", tenants={TENANT: "reviewer"}),
    DevUser(subject="vic", name="Vic Viewer", tenants={TENANT: "viewer"}),
    DevUser(subject="otto", name="Otto Other", tenants={OTHER_TENANT: "reviewer"}),
    DevUser(subject="mia", name="Mia Multi", tenants={OTHER_TENANT: "operator_admin", TENANT: "viewer"}),
]


class MovableClock:
    """The platform's clock, moved forward by the test (session deadlines); thread-safe."""

    def __init__(self) -> None:
        self._offset = timedelta()
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return datetime.now(UTC) + self._offset

    def advance(self, delta: timedelta) -> None:
        with self._lock:
            self._offset += delta


@pytest.fixture(scope="session")
def dev_idp() -> Iterator[BackgroundServer]:
    """One identity provider for every test of a worker: it keeps nothing but its signing key and the codes it
    issued, each good for one exchange, so a test's logins never meet another's; a test that stops its identity
    provider overrides this fixture with one of its own."""
    with BackgroundServer(create_dev_idp(DevIdpSettings(users=USERS))) as server:
        yield server


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def admin_settings(databases: TestDatabases, dev_idp: BackgroundServer, tmp_path: Path) -> Settings:
    return Settings(
        database_url=databases.main,
        control_database_url=databases.control,
        # The object store under tmp_path/objects is the one the ``store`` fixture gives intake and resolution:
        # the admin origin reads the evidence they stored.
        data_dir=tmp_path,
        operator_oidc=OperatorOidcSettings(issuer=dev_idp.url),
    )


@pytest.fixture
def admin_platform(admin_settings: Settings, clock: MovableClock) -> Iterator[Platform]:
    with bootstrap(admin_settings, clock=clock) as platform:
        yield platform


@pytest.fixture
def admin(admin_platform: Platform) -> Iterator[BackgroundServer]:
    with BackgroundServer(compose.admin_app(admin_platform)) as server:
        yield server


class Operator:
    """A browser-like HTTP client logged in at the admin origin through the development identity provider."""

    def __init__(self, admin_url: str, subject: str) -> None:
        self.subject = subject
        self.http = httpx.Client(base_url=admin_url, follow_redirects=True, timeout=30)
        self.login_response = self.http.get(
            "/auth/login", params={"login_hint": subject, "return_to": "/v1/session"}
        )
        assert self.login_response.status_code == 200, self.login_response.text
        session = self.http.get("/v1/session")
        assert session.status_code == 200, session.text
        self.csrf = session.json()["csrf_token"]

    def session(self) -> httpx.Response:
        return self.http.get("/v1/session")

    def decide(self, body: dict[str, Any], *, key: str | None = None, **headers: str) -> httpx.Response:
        sent = {"X-CSRF-Token": self.csrf, **headers}
        if key is not None:
            sent["Idempotency-Key"] = key
        return self.http.post("/v1/decisions", json=body, headers=sent)

    def map_to(self, case: dict[str, Any], item_id: str, rationale: str) -> httpx.Response:
        """``POST /v1/decisions``: map the case's listing to ``item_id`` at the revision ``case`` was read at."""
        body = {
            "case_id": case["case_id"],
            "expected_revision": case["revision"],
            "action": "map_to",
            "map_to": item_id,
            "rationale": rationale,
        }
        return self.decide(body)

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def login(admin: BackgroundServer) -> Iterator[Callable[[str], Operator]]:
    opened: list[Operator] = []

    def make(subject: str) -> Operator:
        operator = Operator(admin.url, subject)
        opened.append(operator)
        return operator

    yield make
    for operator in opened:
        operator.close()


class Cases:
    """Review cases opened by real resolution: an item from a page with strong identifiers, then a page without
    them (a review case with candidates, its receipt in_review)."""

    def __init__(self, submitter: Collector, runner: Resolution) -> None:
        self.collector = submitter
        self.resolution = runner
        self.item_id: str | None = None
        self._records = 0

    def item(self) -> str:
        if self.item_id is None:
            self.collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
            self.resolution.run()
            self.item_id = self.resolution.one("SELECT item_id FROM resolver.catalog_item LIMIT 1")["item_id"]
        return self.item_id

    def open(self) -> dict[str, Any]:
        """A new review case: its row (case_id, revision, capture_id, ...)."""
        self.item()
        self._records += 1
        capture_id = self.collector.submit(page(RACING_BIKE), record=f"racing-bike-{self._records}")
        self.resolution.run()
        return self.resolution.one("SELECT * FROM resolver.review_case WHERE capture_id = %s", capture_id)

    def count(self, table: str) -> int:
        return self.resolution.count(table)

    def receipt_status(self, capture_id: str) -> str:
        return str(
            self.resolution.one("SELECT status FROM resolver.receipt WHERE capture_id = %s", capture_id)[
                "status"
            ]
        )

    def written(self) -> dict[str, int]:
        """Rows of every table a decision writes: a refused decision leaves all of them as they were."""
        tables = ("decision", "outbox", "catalog_item", "listing_mapping", "item_identifier", "release")
        counts = {t: self.count(f"resolver.{t}") for t in tables}
        counts["cursor"] = int(
            self.resolution.one(
                "SELECT coalesce(sum(committed_position), 0) AS n FROM resolver.stream_cursor"
            )["n"]
        )
        counts["case_revisions"] = int(
            self.resolution.one("SELECT coalesce(sum(revision), 0) AS n FROM resolver.review_case")["n"]
        )
        counts["accepted_receipts"] = int(
            self.resolution.one("SELECT count(*) AS n FROM resolver.receipt WHERE status = 'accepted'")["n"]
        )
        return counts


@pytest.fixture
def cases(collector: Collector, resolution: Resolution) -> Cases:  # noqa: F811
    return Cases(collector, resolution)


@pytest.fixture
def owner(owner_db: Database) -> Database:
    return owner_db

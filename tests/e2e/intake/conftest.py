"""A real intake HTTP server: uvicorn in a thread on a free loopback port, over a real PostgreSQL, the
filesystem object store and the PostgreSQL resolution queue."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from prw_api.intake import create_app
from prw_api.server import BackgroundServer
from prw_platform.auth import (
    ClientSpec,
    CollectorAuthService,
    ProvisionedClient,
    TokenSettings,
    create_client,
)
from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.queues.postgres import PostgresQueue
from prw_platform.resolver.exports.events import ExportService
from prw_platform.resolver.intake import (
    CollectorService,
    IntakeContext,
    IntakeService,
    IntakeSettings,
    QueueJobEnqueuer,
    control_plane_epochs,
)
from prw_platform.storage import (
    EVIDENCE_BUCKET,
    FilesystemObjectStore,
    ObjectKey,
    PutResult,
    StorageUnavailable,
)
from tests.integration.intake.helpers import CATALOG, INSTANCE, SOURCE, WORKER, World
from tests.support.postgres import CONTROL, MAIN, TestDatabases, fresh_database

MAX_ARTIFACT_BYTES = 64 * 1024


@dataclass(frozen=True)
class IntakeApiServices:
    """The services the intake app serves, composed here from core pieces over this test's database, store
    and queue (in production ``Platform.intake``, ``Platform.collector_auth`` and ``Platform.collectors``)."""

    intake: IntakeService
    auth: CollectorAuthService
    collectors: CollectorService
    #: The product principal's export stream (GET /v1/exports/events), served by the same origin.
    exports: ExportService


@pytest.fixture(scope="module")
def databases(pg_admin_url: str, pg_templates: dict[str, str]) -> Iterator[TestDatabases]:
    """One database pair per module; every test provisions tenants of its own (``World``)."""
    with (
        fresh_database(pg_admin_url, pg_templates[MAIN], "prw_te") as main,
        fresh_database(pg_admin_url, pg_templates[CONTROL], "prw_tec") as control,
    ):
        yield TestDatabases(main=main, control=control)


@pytest.fixture
def world(resolver_db: Database, control_db: Database) -> World:
    fresh = World.fresh()
    fresh.provision(resolver_db, control_db)
    return fresh


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "prw")


class SwitchableStore(FilesystemObjectStore):
    """The filesystem store, with a switch that makes writes fail as an unreachable backend does."""

    available = True

    def put_if_absent(self, key: ObjectKey, data: bytes, sha256: str, media_type: str) -> PutResult:
        if not self.available:
            raise StorageUnavailable(f"object store unreachable for {key}")
        return super().put_if_absent(key, data, sha256, media_type)


@pytest.fixture
def store(settings: Settings) -> SwitchableStore:
    return SwitchableStore(settings.object_store_root, protected_buckets=frozenset({EVIDENCE_BUCKET}))


@pytest.fixture
def queue(resolver_db: Database, world: World) -> PostgresQueue:
    # A queue of this test's own: the module's tests share one database.
    return PostgresQueue(resolver_db, f"resolution-jobs-{world.tenant.replace('_', '-')}")


@pytest.fixture
def services(
    settings: Settings,
    resolver_db: Database,
    control_db: Database,
    store: FilesystemObjectStore,
    queue: PostgresQueue,
) -> IntakeApiServices:
    return IntakeApiServices(
        IntakeService(
            IntakeContext(
                db=resolver_db,
                store=store,
                epochs=control_plane_epochs(control_db),
                enqueuer=QueueJobEnqueuer(queue),
                limits=IntakeSettings(max_artifact_bytes=MAX_ARTIFACT_BYTES).limits(settings),
            )
        ),
        CollectorAuthService.from_settings(settings, resolver_db, TokenSettings()),
        CollectorService(resolver_db),
        ExportService(resolver_db),
    )


@pytest.fixture
def server(settings: Settings, services: IntakeApiServices) -> Iterator[BackgroundServer]:
    with BackgroundServer(
        create_app(settings, services.intake, services.auth, services.collectors, services.exports)
    ) as running:
        yield running


@pytest.fixture
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


@pytest.fixture
def client(world: World, resolver_db: Database) -> ProvisionedClient:
    return create_client(resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, (SOURCE,)))


@dataclass(frozen=True)
class Collector:
    """A collector instance talking to the server with its own bearer token."""

    http: httpx.Client
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def token_for(http: httpx.Client, client: ProvisionedClient, scope: str | None = None) -> str:
    form = {
        "grant_type": "client_credentials",
        "client_id": client.client_id,
        "client_secret": client.client_secret,
    }
    if scope is not None:
        form["scope"] = scope
    response = http.post("/v1/oauth/token", data=form)
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


@pytest.fixture
def collector(http: httpx.Client, client: ProvisionedClient) -> Collector:
    return Collector(http, token_for(http, client))

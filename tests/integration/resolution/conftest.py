"""Fixtures for the resolution consumer (if_resolution_job): a real PostgreSQL (one fresh database per test), a
filesystem object store, the PostgreSQL resolution queue, intake writing real captures, and the installed
plugins (pa_schemaorg, np_core, np_storage, and the built-in JSON listing adapter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from prw_platform.db.database import Database
from prw_platform.plugins import PluginRegistry, get_plugin_manager
from prw_platform.queues import RESOLUTION_STAGE_QUEUES, PostgresQueue
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec, current_stream, provision_catalog
from prw_platform.resolver.intake import (
    IntakeContext,
    IntakeService,
    QueueJobEnqueuer,
    control_plane_epochs,
)
from prw_platform.resolver.resolution import ResolutionServices, RetryPolicy
from prw_platform.storage import EVIDENCE_BUCKET, FilesystemObjectStore
from tests.integration.resolution.pipeline import (
    CATALOG,
    OTHER_TENANT,
    SECOND_CATALOG,
    SECOND_SOURCE,
    SOURCE,
    TENANT,
    Collector,
    Resolution,
)
from tests.support.postgres import TestDatabases


@pytest.fixture(scope="session")
def registry() -> PluginRegistry:
    """The plugins installed in the venv, found through the ``prw`` entry points as in production."""
    installed = PluginRegistry.from_manager(get_plugin_manager())
    assert {"pa_schemaorg@1.0.0", "pa_prw_listing_json@1.0.0"} <= set(installed.adapter_pins)
    assert {"np_core@1", "np_storage@1", "np_storage@2"} <= set(installed.profile_pins)
    return installed


@pytest.fixture
def catalogs(resolver_db: Database, control_db: Database) -> None:
    """ten_primary/cat_primary (automatic release, two sources), a second catalog of the same tenant and another
    tenant, each with an open stream."""
    provision_catalog(
        resolver_db,
        control_db,
        CatalogSpec(
            TENANT,
            CATALOG,
            "Primary catalog",
            "automatic",
            (SourceSpec(SOURCE, "Lumen web shop"), SourceSpec(SECOND_SOURCE, "Bazaarline")),
        ),
    )
    provision_catalog(
        resolver_db,
        control_db,
        CatalogSpec(
            TENANT, SECOND_CATALOG, "Second catalog", "automatic", (SourceSpec("src_second", "Second"),)
        ),
    )
    provision_catalog(
        resolver_db,
        control_db,
        CatalogSpec(OTHER_TENANT, CATALOG, "Other tenant", "automatic", (SourceSpec(SOURCE, "Same id"),)),
    )


@pytest.fixture
def store(tmp_path: Path) -> FilesystemObjectStore:
    return FilesystemObjectStore(tmp_path / "objects", protected_buckets=frozenset({EVIDENCE_BUCKET}))


@pytest.fixture
def stage_queues(resolver_db: Database) -> dict[str, PostgresQueue]:
    """The queue of each resolution stage (extract: resolution-jobs), produced and consumed by resolver_app."""
    return {
        stage: PostgresQueue(resolver_db, spec.name, max_receives=5, visibility_timeout=60)
        for stage, spec in RESOLUTION_STAGE_QUEUES.items()
    }


@pytest.fixture
def queue(stage_queues: dict[str, PostgresQueue]) -> PostgresQueue:
    """resolution-jobs (the extract stage's queue, intake's), produced and consumed by resolver_app (0002)."""
    return stage_queues["extract"]


@pytest.fixture
def collector(
    catalogs: None,
    resolver_db: Database,
    control_db: Database,
    store: FilesystemObjectStore,
    queue: PostgresQueue,
    stage_queues: dict[str, PostgresQueue],
) -> Collector:
    context = IntakeContext(
        db=resolver_db,
        store=store,
        epochs=control_plane_epochs(control_db),
        enqueuer=QueueJobEnqueuer(queue, stage_queues),
    )
    return Collector(IntakeService(context))


@pytest.fixture
def services(
    resolver_db: Database,
    control_db: Database,
    store: FilesystemObjectStore,
    registry: PluginRegistry,
    stage_queues: dict[str, PostgresQueue],
) -> ResolutionServices:
    # No backoff delay, so a test can take a retried message again at once (the delay rule has a unit test).
    return ResolutionServices(
        resolver_db=resolver_db,
        store=store,
        registry=registry,
        streams=lambda tenant_id, catalog_id: current_stream(control_db, tenant_id, catalog_id),
        retry=RetryPolicy(base_seconds=0),
        enqueuer=QueueJobEnqueuer(stage_queues["extract"], stage_queues),
    )


@pytest.fixture
def resolution(
    stage_queues: dict[str, PostgresQueue], services: ResolutionServices, owner_db: Database
) -> Resolution:
    return Resolution(stage_queues["extract"], services, owner_db, stage_queues)


@pytest.fixture
def runner(databases: TestDatabases, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """``prw`` in-process against the test's databases (the commands bootstrap from the environment)."""
    monkeypatch.setenv("PRW_DATABASE_URL", databases.main)
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", databases.control)
    return CliRunner()

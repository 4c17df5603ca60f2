"""Intake fixtures: a provisioned catalog on a real PostgreSQL, a filesystem object store, a recording enqueuer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.intake import (
    SWEEPER_ROLE,
    IntakeContext,
    IntakeLimits,
    IntakeService,
    control_plane_epochs,
)
from prw_platform.storage import EVIDENCE_BUCKET, FilesystemObjectStore
from tests.integration.intake.helpers import RecordingEnqueuer, World
from tests.support.postgres import CONTROL, MAIN, TestDatabases, fresh_database

#: Small, so that the limit is easy to cross in a test.
MAX_ARTIFACT_BYTES = 64 * 1024


@pytest.fixture(scope="module")
def databases(pg_admin_url: str, pg_templates: dict[str, str]) -> Iterator[TestDatabases]:
    """One database pair per module (overrides the per-test one of tests/conftest.py): creating and dropping two
    databases costs about a second, and every intake test works in tenants of its own (``World``)."""
    with (
        fresh_database(pg_admin_url, pg_templates[MAIN], "prw_ti") as main,
        fresh_database(pg_admin_url, pg_templates[CONTROL], "prw_tic") as control,
    ):
        yield TestDatabases(main=main, control=control)


@pytest.fixture
def world(resolver_db: Database, control_db: Database) -> World:
    fresh = World.fresh()
    fresh.provision(resolver_db, control_db)
    return fresh


@pytest.fixture
def store(tmp_path: Path) -> FilesystemObjectStore:
    return FilesystemObjectStore(tmp_path / "objects", protected_buckets=frozenset({EVIDENCE_BUCKET}))


@pytest.fixture
def enqueuer() -> RecordingEnqueuer:
    return RecordingEnqueuer()


@pytest.fixture
def context(
    world: World,
    resolver_db: Database,
    control_db: Database,
    store: FilesystemObjectStore,
    enqueuer: RecordingEnqueuer,
) -> IntakeContext:
    return IntakeContext(
        db=resolver_db,
        store=store,
        epochs=control_plane_epochs(control_db),
        enqueuer=enqueuer,
        limits=IntakeLimits(max_artifact_bytes=MAX_ARTIFACT_BYTES),
    )


@pytest.fixture
def intake(context: IntakeContext) -> IntakeService:
    return IntakeService(context)


@pytest.fixture
def sweeper_db(db_url: str) -> Iterator[Database]:
    db = Database(db_url, role=SWEEPER_ROLE, max_size=2, application_name="prw-test-sweeper").open()
    yield db
    db.close()

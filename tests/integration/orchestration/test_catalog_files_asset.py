"""The Dagster asset ``catalog_files`` (seed 004: count per state, oldest due, failed) and its check
``failed_files_reviewed``, which fails once a failed file has waited longer than
``PRW_CATALOG_FILE_FAILED_ALERT_SECONDS``; over a migrated database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from prw_orchestration.defs.state import catalog_files, failed_files_reviewed
from prw_orchestration.resources import PlatformResource
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.resolver.files.sources import UploadSource
from tests.integration.files.conftest import png
from tests.integration.resolution.conftest import catalogs  # noqa: F401  (fixture)
from tests.integration.resolution.pipeline import CATALOG, TENANT
from tests.support import postgres


@pytest.fixture
def platform(
    databases: postgres.TestDatabases,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    catalogs: None,  # noqa: F811
) -> Iterator[Platform]:
    monkeypatch.setenv("PRW_CATALOG_FILE_FAILED_ALERT_SECONDS", "3600")
    settings = Settings(
        database_url=databases.main, control_database_url=databases.control, data_dir=tmp_path
    )
    with bootstrap(settings) as opened:
        yield opened


def _observe(resource: PlatformResource) -> tuple[dict[str, Any], dg.AssetCheckResult]:
    with dg.build_resources({"platform": resource}) as resources:
        observed = catalog_files(platform=resources.platform)
        checked = failed_files_reviewed(platform=resources.platform)
    assert isinstance(observed, dg.MaterializeResult)
    assert isinstance(checked, dg.AssetCheckResult)
    return dict(observed.metadata or {}), checked


def test_the_asset_counts_files_per_state_and_the_check_fails_when_a_failed_file_waited_too_long(
    platform: Platform, databases: postgres.TestDatabases, tmp_path: Path, owner_db: Database
) -> None:
    resource = PlatformResource(database_url=databases.main, data_dir=str(tmp_path))
    metadata, check = _observe(resource)
    assert metadata["state_failed"] == 0
    assert metadata["oldest_due_at"] == "-"
    assert check.passed

    files = platform.catalog_files
    waiting = files.prepare(TENANT, CATALOG, UploadSource(png()), save_id="sav_a", actor="request:a")
    files._abandon(TENANT, [waiting], "request:a")  # abandoned, due in an hour
    failing = files.prepare(TENANT, CATALOG, UploadSource(png()), save_id="sav_b", actor="request:b")
    files._abandon(TENANT, [failing], "request:b")
    for state in (
        "discarding",
        "failed",
    ):  # setup; the consumer's own path is tested in tests/integration/files
        owner_db.run(
            lambda c, s=state: c.execute(
                "UPDATE resolver.catalog_file SET state = %s, state_actor = 'test', state_changed_at = now()"
                " - interval '30 minutes' WHERE file_id = %s",
                (s, failing),
            )
        )

    metadata, check = _observe(resource)
    assert (metadata["state_abandoned"], metadata["state_failed"], metadata["failed"]) == (1, 1, 1)
    assert metadata["oldest_due_at"] != "-"
    assert check.passed  # waited 30 minutes of the hour allowed

    owner_db.run(
        lambda c: c.execute(
            "UPDATE resolver.catalog_file SET state_changed_at = now() - interval '2 hours' WHERE file_id = %s",
            (failing,),
        )
    )
    metadata, check = _observe(resource)
    assert not check.passed
    assert check.severity == dg.AssetCheckSeverity.ERROR
    assert check.metadata["alert_after_seconds"].value == 3600
    assert check.metadata["oldest_failed_waited_seconds"].value >= 7200

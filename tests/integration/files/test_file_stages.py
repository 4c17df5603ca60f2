"""The files stages through the core runtime (``run_stage``), as ``prw worker files-sweep files-cleanup`` and the
Dagster jobs run them: the platform's own wiring (resolver_sweeper for the sweep, resolver_app for the consumer,
the catalog-file-cleanup queue, the platform clock)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.pipeline import FILES_CLEANUP, FILES_SWEEP
from prw_platform.resolver.files.sources import UploadSource
from prw_platform.runtime import Budget, has_work, run_stage
from tests.integration.files.conftest import ACTOR, Items, Rows, SimClock, png
from tests.integration.resolution.pipeline import TENANT
from tests.support import postgres


@pytest.fixture
def platform(
    databases: postgres.TestDatabases, tmp_path: Path, sim_clock: SimClock, catalogs: None
) -> Iterator[Platform]:
    settings = Settings(
        database_url=databases.main,
        control_database_url=databases.control,
        data_dir=tmp_path,
        catalog_file_cleanup_delay_seconds=600,
    )
    with bootstrap(settings, clock=sim_clock) as opened:
        yield opened


def test_the_sweep_and_the_consumer_run_as_stages(
    platform: Platform, items: Items, rows: Rows, sim_clock: SimClock
) -> None:
    item = items.add("itm_anvil")
    files = platform.catalog_files
    first = files.save_item_pictures(TENANT, item, UploadSource(png()), [], actor=ACTOR).main
    files.save_item_pictures(TENANT, item, UploadSource(png()), [], actor=ACTOR)
    assert first is not None
    assert rows.state(first.file_id) == "detached"
    assert not has_work(platform, FILES_SWEEP)

    sim_clock.advance(timedelta(seconds=601))
    assert has_work(platform, FILES_SWEEP)
    swept = run_stage(platform, FILES_SWEEP, Budget(batches=5))
    assert swept.counts["claimed"] == 1
    assert has_work(platform, FILES_CLEANUP)
    cleaned = run_stage(platform, FILES_CLEANUP, Budget(batches=5))

    assert cleaned.counts["retired"] == 1
    assert cleaned.drained
    assert rows.state(first.file_id) == "discarded"
    assert not has_work(platform, FILES_CLEANUP)
    assert platform.reports.catalog_files().per_state == {"attached": 1, "discarded": 1}

    sim_clock.advance(timedelta(days=30, seconds=1))
    assert run_stage(platform, FILES_SWEEP, Budget(batches=5)).counts["retirement_over"] == 1
    assert not has_work(platform, FILES_SWEEP)

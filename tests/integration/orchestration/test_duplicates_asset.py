"""The Dagster asset ``likely_duplicate_items``: materialized against a migrated database where real decisions
created items, it records the number of likely duplicate pairs and the best ones as a markdown table; a merge makes
the pair disappear."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from prw_orchestration.defs.state import likely_duplicate_items
from prw_orchestration.resources import PlatformResource
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.services import MergeItems
from tests.e2e.product.decisions import create_and_map
from tests.integration.resolution.conftest import catalogs  # noqa: F401  (fixture)
from tests.integration.resolution.pipeline import CATALOG, SOURCE, TENANT
from tests.support import postgres


@pytest.fixture
def platform(
    databases: postgres.TestDatabases,
    tmp_path: Path,
    catalogs: None,  # noqa: F811
) -> Iterator[Platform]:
    settings = Settings(
        database_url=databases.main, control_database_url=databases.control, data_dir=tmp_path
    )
    with bootstrap(settings) as opened:
        yield opened


def _materialize(resource: PlatformResource) -> dict[str, Any]:
    result = dg.materialize([likely_duplicate_items], resources={"platform": resource})
    assert result.success
    (materialization,) = result.asset_materializations_for_node("likely_duplicate_items")
    return {key: value.value for key, value in materialization.metadata.items()}


def _create(platform: Platform, tag: str, n: int, **change: Any) -> str:
    command = create_and_map(CATALOG, SOURCE, tag, n)
    command = dataclasses.replace(command, item=dataclasses.replace(command.item, **change))
    item_id = platform.decisions.decide(command, TENANT, CATALOG).item_id
    assert item_id is not None
    return item_id


def test_the_asset_lists_the_likely_duplicates_and_a_merge_removes_the_pair(
    platform: Platform, databases: postgres.TestDatabases, tmp_path: Path
) -> None:
    resource = PlatformResource(database_url=databases.main, data_dir=str(tmp_path))
    assert _materialize(resource)["pairs"] == 0
    kept = _create(platform, "dup", 1)
    duplicate = _create(platform, "dupb", 1, title="Strata P5 1 TB | SSD", brand="Corvana Storage", gtin=None)
    _create(platform, "other", 4)

    metadata = _materialize(resource)

    assert (metadata["pairs"], metadata["catalogs_with_pairs"]) == (1, 1)
    header, _, row = metadata["top_pairs"].splitlines()
    assert header == "| tenant | catalog | item | item | score | evidence |"
    assert row.startswith(f"| {TENANT} | {CATALOG} | ")
    assert kept in row
    assert duplicate in row
    assert "Strata P5 1 TB \\| SSD" in row  # a pipe in a title stays in its cell
    assert "same MPN CVN-SP5-1T0" in row

    platform.decisions.merge_items(
        MergeItems(CATALOG, duplicate, kept, "reviewer:rita", "the same SSD"), TENANT
    )

    assert _materialize(resource)["pairs"] == 0

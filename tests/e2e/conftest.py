"""A deployment on real parts for end-to-end tests: a fresh main and control database on the test server and a
temporary data dir (filesystem object store, Dagster home), exported as the ``PRW_*`` environment that every entry
point, the Dagster resource and every child process read, so nothing here touches the repository's ``.prw/``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.db.urls import database_name
from tests.support.postgres import CONTROL, MAIN, fresh_database


@pytest.fixture
def deployment_settings(
    pg_admin_url: str, pg_templates: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    with (
        fresh_database(pg_admin_url, pg_templates[MAIN], "prw_e2e") as main,
        fresh_database(pg_admin_url, pg_templates[CONTROL], "prw_e2ec") as control,
    ):
        monkeypatch.setenv("PRW_DATABASE_URL", main)
        monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", control)
        monkeypatch.setenv("PRW_DATA_DIR", str(tmp_path / "data"))
        yield Settings()
        # With a server configured, Dagster keeps its own storage in <main>_dagster (prw_orchestration.instance).
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(f"{database_name(main)}_dagster")
                )
            )


@pytest.fixture
def platform(deployment_settings: Settings) -> Iterator[Platform]:
    with bootstrap(deployment_settings) as built:
        yield built

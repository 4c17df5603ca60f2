"""The whole spine on real parts: a fresh main and control database on the test server, a temporary data dir
(filesystem object store, Dagster home), the PostgreSQL queues, the real plugins, real HTTP servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.db.urls import database_name, with_database
from tests.support.postgres import CONTROL, MAIN, fresh_database


@pytest.fixture
def spine_settings(
    pg_admin_url: str, pg_templates: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    with (
        fresh_database(pg_admin_url, pg_templates[MAIN], "prw_spine") as main,
        fresh_database(pg_admin_url, pg_templates[CONTROL], "prw_spinec") as control,
    ):
        # The Dagster resource and every entry point read PRW_* like a deployment does.
        monkeypatch.setenv("PRW_DATABASE_URL", main)
        monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", control)
        monkeypatch.setenv("PRW_DATA_DIR", str(tmp_path / "data"))
        yield Settings()
        # Dagster's own storage database (prw_platform: <main>_dagster) goes with the test's databases.
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(f"{database_name(main)}_dagster")
                )
            )


@pytest.fixture
def platform(spine_settings: Settings) -> Iterator[Platform]:
    with bootstrap(spine_settings) as built:
        yield built


__all__ = ["with_database"]

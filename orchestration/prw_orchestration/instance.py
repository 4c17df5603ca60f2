"""The Dagster instance for this deployment: PostgreSQL storage when a database server is configured, SQLite
otherwise (docs/operators/running.md), under ``<data_dir>/dagster`` (DAGSTER_HOME)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import yaml
from psycopg.conninfo import conninfo_to_dict

from prw_platform.config import Settings
from prw_platform.deployment import database_name, ensure_database, with_database


def dagster_home(settings: Settings) -> Path:
    return (settings.data_dir / "dagster").resolve()


def instance_config(settings: Settings) -> dict[str, object]:
    """dagster.yaml: runs, events and schedules in ``<main database>_dagster`` on the configured PostgreSQL
    server (dagster-postgres with ``scheme: postgresql+psycopg2``, needed beside SQLAlchemy 2.1), or SQLite files
    under DAGSTER_HOME with the embedded defaults (Dagster cannot use a Unix-socket-only embedded server)."""
    config: dict[str, object] = {"telemetry": {"enabled": False}}
    if settings.database_url:
        dagster_db = with_database(settings.database_url, f"{database_name(settings.database_url)}_dagster")
        ensure_database(dagster_db)
        parts = conninfo_to_dict(dagster_db)
        host = str(parts.get("host") or "127.0.0.1")
        postgres_db: dict[str, object] = {
            "username": parts.get("user") or "postgres",
            "hostname": host,
            "db_name": parts["dbname"],
            "port": int(str(parts.get("port") or 5432)),
            "scheme": "postgresql+psycopg2",
        }
        if host.startswith("/"):
            # A Unix-socket server: dagster-postgres builds a URL from hostname, so the socket directory goes in
            # the libpq ``host`` parameter, which takes precedence over the URL's host.
            postgres_db["hostname"] = "localhost"
            postgres_db["params"] = {"host": host}
        if parts.get("password"):
            postgres_db["password"] = parts["password"]
        config["storage"] = {"postgres": {"postgres_db": postgres_db}}
    return config


def prepare_instance(settings: Settings) -> Path:
    """Write dagster.yaml under DAGSTER_HOME, export DAGSTER_HOME, and return it."""
    home = dagster_home(settings)
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text(yaml.safe_dump(instance_config(settings), sort_keys=True))
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def open_instance(settings: Settings) -> dg.DagsterInstance:
    prepare_instance(settings)
    return dg.DagsterInstance.get()

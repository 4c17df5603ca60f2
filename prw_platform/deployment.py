"""Deployment helpers for the edges that set a platform up: where the databases are (or the embedded server),
their names, and the migrations. Part of the core's public surface (docs/architecture.md)."""

from prw_platform.db.locate import DatabaseUrls, locate_databases
from prw_platform.db.migrate import MigrationStatus, ensure_database, migrate_all
from prw_platform.db.urls import database_name, with_database

__all__ = [
    "DatabaseUrls",
    "MigrationStatus",
    "database_name",
    "ensure_database",
    "locate_databases",
    "migrate_all",
    "with_database",
]

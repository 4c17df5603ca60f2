"""How the CLI gets its settings and databases: once per command, never at import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prw_platform.config import Settings

if TYPE_CHECKING:
    from prw_platform.deployment import DatabaseUrls


def load_settings() -> Settings:
    return Settings()


def databases(settings: Settings) -> DatabaseUrls:
    # The database stack (psycopg, Alembic) loads when a command locates its databases, not for --help.
    from prw_platform.deployment import locate_databases

    return locate_databases(settings)

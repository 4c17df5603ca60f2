"""How the CLI gets its settings and databases: once per command, never at import."""

from __future__ import annotations

from prw_platform.config import Settings
from prw_platform.deployment import DatabaseUrls, locate_databases


def load_settings() -> Settings:
    return Settings()


def databases(settings: Settings) -> DatabaseUrls:
    return locate_databases(settings)

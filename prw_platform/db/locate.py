"""Where the databases are: the configured server, or the embedded one."""

from __future__ import annotations

from dataclasses import dataclass

from prw_platform.config import Settings
from prw_platform.db.embedded import EMBEDDED_DATABASE, EmbeddedPostgres
from prw_platform.db.urls import control_database_url, with_database


@dataclass(frozen=True, slots=True)
class DatabaseUrls:
    main: str
    control: str
    embedded: bool


def locate_databases(settings: Settings) -> DatabaseUrls:
    """With ``database_url`` set, use that server; without it, start (or attach to) the embedded PostgreSQL
    under ``data_dir``. The control database defaults to ``<main>_control`` on the same server."""
    if settings.database_url:
        main = settings.database_url
        embedded = False
    else:
        main = with_database(EmbeddedPostgres(settings.embedded_pg_dir).start(), EMBEDDED_DATABASE)
        embedded = True
    control = settings.control_database_url or control_database_url(main)
    return DatabaseUrls(main=main, control=control, embedded=embedded)

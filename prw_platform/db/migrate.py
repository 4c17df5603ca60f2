"""Apply Alembic migrations to the main and control databases (``prw migrate``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
from psycopg import sql

from prw_platform.db.urls import database_name, with_database

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic (and SQLAlchemy under it) is imported where a migration tree is read or applied, not at import time:
# every process of the platform imports this module through bootstrap, and most never migrate.

MIGRATIONS = Path(__file__).parent / "migrations"
MAIN = "main"
CONTROL = "control"


@dataclass(frozen=True, slots=True)
class MigrationStatus:
    database: str
    kind: str
    before: str | None
    after: str | None


def alembic_config(kind: str, conninfo: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS / kind))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", str(MIGRATIONS / kind / "versions"))
    cfg.set_main_option("file_template", "%%(rev)s_%%(slug)s")
    cfg.attributes["conninfo"] = conninfo
    return cfg


def head_revisions(kind: str) -> frozenset[str]:
    """The heads of a migration tree. Independent areas (queue, resolver facts, product releases) may branch
    from the same parent; ``migrate`` upgrades every head."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config(kind, ""))
    return frozenset(script.get_heads())


def current_revisions(conninfo: str) -> frozenset[str]:
    with psycopg.connect(conninfo) as conn:
        exists = conn.execute("SELECT to_regclass('public.alembic_version') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return frozenset()
        rows = conn.execute("SELECT version_num FROM public.alembic_version").fetchall()
        return frozenset(str(r[0]) for r in rows)


def current_revision(conninfo: str) -> str | None:
    """The current revisions as one display string ("0002+0003" when several branches are applied)."""
    revisions = current_revisions(conninfo)
    return "+".join(sorted(revisions)) if revisions else None


def ensure_database(conninfo: str) -> bool:
    """Create the database named in ``conninfo`` if it does not exist (connecting to ``postgres``).
    Returns True when it was created."""
    name = database_name(conninfo)
    admin = with_database(conninfo, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if found:
            return False
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.errors.DuplicateDatabase:
            return False
        return True


def migrate(conninfo: str, kind: str = MAIN, revision: str = "heads") -> MigrationStatus:
    """Upgrade one database to ``revision`` (creating the database first if needed)."""
    ensure_database(conninfo)
    before = current_revision(conninfo)
    from alembic import command

    command.upgrade(alembic_config(kind, conninfo), revision)
    return MigrationStatus(database_name(conninfo), kind, before, current_revision(conninfo))


def migrate_all(main_conninfo: str, control_conninfo: str) -> list[MigrationStatus]:
    return [migrate(main_conninfo, MAIN), migrate(control_conninfo, CONTROL)]


def is_current(conninfo: str, kind: str = MAIN) -> bool:
    return current_revisions(conninfo) == head_revisions(kind)

"""Test databases: one real PostgreSQL server, one migrated template, one fresh database per test.

The server is ``PRW_TEST_DATABASE_URL`` when set (CI points it at the machine's PostgreSQL), else an embedded
server (pgserver) started once per test session. Each test that asks for a database gets
``CREATE DATABASE ... TEMPLATE <migrated template>``: fast, isolated, and real.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from prw_platform.config import Settings
from prw_platform.db.migrate import CONTROL, MAIN, MIGRATIONS, migrate
from prw_platform.db.urls import with_database

_TEMPLATE_LOCK = 72_801_001


def migrations_fingerprint() -> str:
    digest = hashlib.sha256()
    for path in sorted(MIGRATIONS.rglob("*.py")):
        digest.update(path.relative_to(MIGRATIONS).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def server_url(tmp_root: Path) -> str:
    url = os.environ.get("PRW_TEST_DATABASE_URL")
    if url:
        return with_database(url, "postgres")
    from prw_platform.db.embedded import EmbeddedPostgres

    return EmbeddedPostgres(tmp_root / "embedded-pg", keep_running=False).start()


def stop_embedded(tmp_root: Path) -> None:
    """Stop the embedded test server started under ``tmp_root``, if any (a no-op for an external server)."""
    pgdata = tmp_root / "embedded-pg"
    if (pgdata / "postmaster.pid").exists():
        from prw_platform.db.embedded import pg_ctl_stop

        pg_ctl_stop(pgdata)


def ensure_template(admin_url: str, kind: str) -> str:
    """A migrated template database for ``kind``, named after the migrations' fingerprint so that a changed
    migration gets a new template. Serialized with an advisory lock: parallel test runs may share a server."""
    name = f"prw_tmpl_{kind}_{migrations_fingerprint()}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_TEMPLATE_LOCK,))
        try:
            ready = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s AND datistemplate", (name,)
            ).fetchone()
            if not ready:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                migrate(with_database(admin_url, name), kind)
                conn.execute(
                    sql.SQL("ALTER DATABASE {} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false").format(
                        sql.Identifier(name)
                    )
                )
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_TEMPLATE_LOCK,))
    return name


@dataclass(frozen=True, slots=True)
class TestDatabases:
    """A fresh main database and control database for one test, both at head."""

    main: str
    control: str


def _create_database(admin_url: str, template: str, prefix: str) -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template))
        )
    return name


def _drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


class _DatabaseMill:
    """Copies and drops test databases beside the tests (the suite's budget): a copy of a template costs the server
    0.3 - 0.5 s of file copying and fsync, which the test process used to wait for twice per database. The next
    test's copy of the same (template, prefix) is made while this test runs, and a finished test's database is
    dropped in the background; ``close`` (at the end of the session) waits for both and drops the spare copies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._background = ThreadPoolExecutor(max_workers=2, thread_name_prefix="prw-test-databases")
        self._spares: dict[tuple[str, str, str], Future[str]] = {}
        self._drops: list[Future[None]] = []

    def take(self, admin_url: str, template: str, prefix: str) -> str:
        key = (admin_url, template, prefix)
        with self._lock:
            spare = self._spares.pop(key, None)
            self._spares[key] = self._background.submit(_create_database, *key)
        return spare.result() if spare is not None else _create_database(*key)

    def give_back(self, admin_url: str, name: str) -> None:
        with self._lock:
            self._drops.append(self._background.submit(_drop_database, admin_url, name))

    def close(self, admin_url: str) -> None:
        """Drop the spares made on ``admin_url``'s server and wait for every drop sent to it."""
        with self._lock:
            spares = {key: self._spares.pop(key) for key in list(self._spares) if key[0] == admin_url}
            drops, self._drops = self._drops, []
        for (url, _, _), spare in spares.items():
            with suppress(psycopg.Error):
                _drop_database(url, spare.result())
        for drop in drops:
            with suppress(psycopg.Error):
                drop.result()


_MILL = _DatabaseMill()


@contextmanager
def fresh_database(admin_url: str, template: str, prefix: str) -> Iterator[str]:
    """A fresh copy of ``template`` named ``<prefix>_<hex>``, dropped after use (``_DatabaseMill``)."""
    name = _MILL.take(admin_url, template, prefix)
    try:
        yield with_database(admin_url, name)
    finally:
        _MILL.give_back(admin_url, name)


def release_databases(admin_url: str) -> None:
    """At the end of a session: the spare copies dropped, every pending drop done (before the server stops)."""
    _MILL.close(admin_url)


@contextmanager
def fresh_deployment_settings(
    admin_url: str, templates: dict[str, str], data_dir: Path, prefix: str, **overrides: Any
) -> Iterator[Settings]:
    """Settings of a deployment on a fresh main and control database (dropped afterwards) and ``data_dir``, for a
    module-scoped deployment (its tests provision catalogs of their own); ``overrides`` are further settings."""
    with (
        fresh_database(admin_url, templates[MAIN], prefix) as main,
        fresh_database(admin_url, templates[CONTROL], f"{prefix}c") as control,
    ):
        yield Settings(database_url=main, control_database_url=control, data_dir=data_dir, **overrides)


__all__ = [
    "CONTROL",
    "MAIN",
    "TestDatabases",
    "ensure_template",
    "fresh_database",
    "fresh_deployment_settings",
    "release_databases",
    "server_url",
    "stop_embedded",
]

"""Test databases: one real PostgreSQL server, one migrated template, one fresh database per test.

The server is ``PRW_TEST_DATABASE_URL`` when set (CI points it at the machine's PostgreSQL), else an embedded
server (pgserver) started once per test session. Each test that asks for a database gets one that holds exactly
what ``CREATE DATABASE ... TEMPLATE <migrated template>`` gives: the first such copy is made that way, and after a
test its database is emptied back to that state and handed to the next (``_DatabaseMill``).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from collections import deque
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

    __test__ = False  # not a test class, whatever its name

    main: str
    control: str


def _create_database(admin_url: str, template: str, prefix: str) -> str:
    name = _new_name(prefix)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template))
        )
    return name


def _new_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def _drop_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


#: The catalogs a schema change, a grant, a policy, a function or a trigger writes a row into. A test database
#: whose catalogs hold a row written after it was handed out is dropped, never recycled.
_DDL_CATALOGS = (
    "pg_class",
    "pg_attribute",
    "pg_attrdef",
    "pg_constraint",
    "pg_index",
    "pg_inherits",
    "pg_policy",
    "pg_proc",
    "pg_aggregate",
    "pg_trigger",
    "pg_event_trigger",
    "pg_rewrite",
    "pg_type",
    "pg_enum",
    "pg_sequence",
    "pg_default_acl",
    "pg_init_privs",
    "pg_extension",
    "pg_operator",
    "pg_cast",
    "pg_collation",
    "pg_conversion",
    "pg_statistic_ext",
    "pg_largeobject_metadata",
    "pg_publication",
    "pg_foreign_server",
    "pg_foreign_table",
    "pg_user_mapping",
)
_XID_WRAP = 1 << 32
#: A table this large after a test is emptied by TRUNCATE (new files); the rest by DELETE (no catalog change,
#: a few milliseconds for the empty and nearly empty tables most tests leave).
_TRUNCATE_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class _Pristine:
    """What a fresh copy of a template holds, read once from a fresh copy: its tables, the rows the migrations
    put in some of them (COPY data, put back on every reset), its sequences' positions and the database's own
    settings (owner, grants, connection limit, per-database role settings)."""

    tables: tuple[str, ...]
    seeds: tuple[tuple[str, bytes], ...]
    sequences: tuple[tuple[str, int, bool], ...]
    settings: tuple[Any, ...]
    #: Rows per catalog of ``_DDL_CATALOGS`` (and pg_namespace): a DROP only deletes catalog rows.
    catalog_rows: tuple[int, ...]

    @classmethod
    def read(cls, conn: psycopg.Connection[Any]) -> _Pristine:
        tables = tuple(
            str(r[0])
            for r in conn.execute(
                """SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
                    WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
                      AND NOT (schemaname = 'public' AND tablename = 'alembic_version')
                    ORDER BY 1"""
            ).fetchall()
        )
        seeds: list[tuple[str, bytes]] = []
        for table in tables:
            if conn.execute(sql.SQL("SELECT EXISTS (SELECT FROM {})").format(sql.SQL(table))).fetchone() == (
                True,
            ):
                data = bytearray()
                with conn.cursor().copy(
                    sql.SQL("COPY {} TO STDOUT (FORMAT binary)").format(sql.SQL(table))
                ) as cp:
                    for chunk in cp:
                        data += chunk
                seeds.append((table, bytes(data)))
        sequences = tuple(
            (str(r[0]), int(r[1]), bool(r[2]))
            for r in conn.execute(
                """SELECT format('%I.%I', schemaname, sequencename), coalesce(last_value, start_value),
                          last_value IS NOT NULL
                     FROM pg_sequences ORDER BY 1"""
            ).fetchall()
        )
        return cls(tables, tuple(seeds), sequences, _database_settings(conn), _catalog_rows(conn))


def _database_settings(conn: psycopg.Connection[Any]) -> tuple[Any, ...]:
    row = conn.execute(
        """SELECT datdba, datacl::text, datconnlimit, datallowconn,
                  (SELECT count(*) FROM pg_db_role_setting WHERE setdatabase = d.oid)
             FROM pg_database d WHERE datname = current_database()"""
    ).fetchone()
    return tuple(row or ())


def _watermark(conn: psycopg.Connection[Any]) -> int:
    """A transaction id newer than every catalog row the database holds now (``conn`` is on the test server)."""
    row = conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()
    assert row is not None
    return int(row[0])


def _catalog_sources() -> list[sql.Composable]:
    catalogs: list[sql.Composable] = [sql.Identifier(catalog) for catalog in _DDL_CATALOGS]
    # Temporary schemas are made on first use and outlive their session's objects.
    catalogs.append(sql.SQL("(SELECT xmin FROM pg_namespace WHERE nspname !~ '^pg_(toast_)?temp_') AS n"))
    return catalogs


def _catalog_rows(conn: psycopg.Connection[Any]) -> tuple[int, ...]:
    counts = [sql.SQL("(SELECT count(*) FROM {})").format(source) for source in _catalog_sources()]
    row = conn.execute(sql.SQL("SELECT {}").format(sql.SQL(", ").join(counts))).fetchone()
    return tuple(int(n) for n in row or ())


def _changed_since(conn: psycopg.Connection[Any], watermark: int, pristine: _Pristine) -> bool:
    """Whether this database's schema differs from a fresh copy's: a catalog row written after ``watermark``
    (CREATE, ALTER, GRANT...) or one fewer than a fresh copy has (DROP); or the transaction ids wrapped since (then
    nothing can be told: treated as changed)."""
    now = _watermark(conn)
    if now // _XID_WRAP != watermark // _XID_WRAP:
        return True
    probe = sql.SQL("SELECT 1 FROM {} WHERE xmin::text::bigint > {}")
    probes = [probe.format(source, sql.Placeholder("w")) for source in _catalog_sources()]
    query = sql.SQL("SELECT EXISTS ({})").format(sql.SQL(" UNION ALL ").join(probes))
    row = conn.execute(query, {"w": watermark % _XID_WRAP}).fetchone()
    return bool(row and row[0]) or _catalog_rows(conn) != pristine.catalog_rows


class _DatabaseMill:
    """Hands out test databases and takes them back (the suite's budget).

    A copy of the migrated template is cheap; a DROP DATABASE costs far more: PostgreSQL forces a checkpoint for
    it, which writes every dirty buffer of every concurrent test and fsyncs it, two per test with xdist workers
    side by side (bench/README.md, "The test suite's databases"). So a test's databases are recycled, not dropped:
    once the test is done, in the background,

    1. every connection to the database is ended and it is renamed (a process the test left behind cannot reach the
       next test's data through its old conninfo);
    2. if any catalog row was written since the database was handed out (a test that created a table, granted,
       altered or truncated) or the catalogs hold fewer rows than a fresh copy's (a DROP), or the database's own
       settings differ from a fresh copy's, it is dropped instead;
    3. every table is emptied (DELETE with triggers off; TRUNCATE for the large), the migrations' seed rows and
       the sequences' positions are put back as a fresh copy has them, and a new watermark is taken.

    The next test asking for the same template gets it back; only the first asks the server for a copy. ``close``
    (at the end of the session) drops them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._background = ThreadPoolExecutor(max_workers=2, thread_name_prefix="prw-test-databases")
        #: (server, template) -> databases being reset or ready: each future's result is the database's name and
        #: watermark, or None when it had to be dropped.
        self._recycled: dict[tuple[str, str], deque[Future[tuple[str, int] | None]]] = {}
        self._pristine: dict[tuple[str, str], _Pristine] = {}
        #: Database name -> (server, template, watermark) while a test holds it.
        self._out: dict[str, tuple[str, str, int]] = {}

    def take(self, admin_url: str, template: str, prefix: str) -> str:
        key = (admin_url, template)
        while True:
            with self._lock:
                queue = self._recycled.get(key)
                waiting = queue.popleft() if queue else None
            if waiting is None:
                break
            recycled = waiting.result()
            if recycled is not None:
                name, watermark = recycled
                with self._lock:
                    self._out[name] = (admin_url, template, watermark)
                return name
        name = _create_database(admin_url, template, prefix)
        with psycopg.connect(with_database(admin_url, name), autocommit=True) as conn:
            if key not in self._pristine:
                self._pristine[key] = _Pristine.read(conn)
            watermark = _watermark(conn)
        with self._lock:
            self._out[name] = (admin_url, template, watermark)
        return name

    def give_back(self, admin_url: str, name: str) -> None:
        with self._lock:
            admin_url, template, watermark = self._out.pop(name)
            key = (admin_url, template)
            future = self._background.submit(self._recycle, admin_url, self._pristine[key], name, watermark)
            self._recycled.setdefault(key, deque()).append(future)

    def _recycle(
        self, admin_url: str, pristine: _Pristine, name: str, watermark: int
    ) -> tuple[str, int] | None:
        prefix = name.rsplit("_", 1)[0]
        renamed = _new_name(prefix)
        try:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                if not _end_connections_and_rename(admin, name, renamed):
                    _drop_database(admin_url, name)
                    return None
            with psycopg.connect(with_database(admin_url, renamed), autocommit=True) as conn:
                if _changed_since(conn, watermark, pristine) or _database_settings(conn) != pristine.settings:
                    conn.close()
                    _drop_database(admin_url, renamed)
                    return None
                _reset(conn, pristine)
                return renamed, _watermark(conn)
        except psycopg.errors.InvalidCatalogName:  # the test dropped it itself
            return None
        except psycopg.Error:
            with suppress(psycopg.Error):
                _drop_database(admin_url, renamed)
                _drop_database(admin_url, name)
            return None

    def close(self, admin_url: str) -> None:
        """Drop every database of ``admin_url``'s server this process made, side by side (their checkpoints
        coalesce), once every pending reset (or its drop) has finished."""
        with self._lock:
            keys = [key for key in self._recycled if key[0] == admin_url]
            waiting = [future for key in keys for future in self._recycled.pop(key)]
        names = [recycled[0] for future in waiting if (recycled := _result(future)) is not None]
        with ThreadPoolExecutor(max_workers=8, thread_name_prefix="prw-test-drops") as pool:
            for done in [pool.submit(_drop_database, admin_url, name) for name in names]:
                with suppress(psycopg.Error):
                    done.result()


def _result(future: Future[tuple[str, int] | None]) -> tuple[str, int] | None:
    try:
        return future.result()
    except Exception:
        return None


def _end_connections_and_rename(admin: psycopg.Connection[Any], name: str, renamed: str) -> bool:
    """End every session on ``name`` and rename it; False if sessions kept coming back for 10 s."""
    deadline = time.monotonic() + 10
    while True:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        try:
            admin.execute(
                sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                    sql.Identifier(name), sql.Identifier(renamed)
                )
            )
            return True
        except psycopg.errors.ObjectInUse:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)


def _reset(conn: psycopg.Connection[Any], pristine: _Pristine) -> None:
    """Empty every table and put back what a fresh copy holds (``_DatabaseMill`` step 3), in one transaction."""
    large = [
        str(r[0])
        for r in conn.execute(
            "SELECT t FROM unnest(%s::text[]) AS t WHERE pg_relation_size(t::regclass) > %s",
            (list(pristine.tables), _TRUNCATE_BYTES),
        ).fetchall()
    ]
    with conn.transaction():
        conn.execute("SET LOCAL lock_timeout = '10s'")
        # Foreign keys and the append-only tables' triggers are triggers: off while the rows go and come back.
        conn.execute("SET LOCAL session_replication_role = replica")
        if large:
            conn.execute(sql.SQL("TRUNCATE {} CASCADE").format(sql.SQL(", ").join(sql.SQL(t) for t in large)))
        for table in pristine.tables:
            conn.execute(sql.SQL("DELETE FROM {}").format(sql.SQL(table)))
        for table, data in pristine.seeds:
            with conn.cursor().copy(
                sql.SQL("COPY {} FROM STDIN (FORMAT binary)").format(sql.SQL(table))
            ) as cp:
                cp.write(data)
        for sequence, position, called in pristine.sequences:
            conn.execute("SELECT setval(%s::regclass, %s, %s)", (sequence, position, called))


_MILL = _DatabaseMill()


@contextmanager
def fresh_database(admin_url: str, template: str, prefix: str) -> Iterator[str]:
    """A database as a fresh copy of ``template`` holds it, named ``<prefix>_<hex>``; recycled or dropped after use
    (``_DatabaseMill``)."""
    name = _MILL.take(admin_url, template, prefix)
    try:
        yield with_database(admin_url, name)
    finally:
        _MILL.give_back(admin_url, name)


def release_databases(admin_url: str) -> None:
    """At the end of a session: every test database of this process dropped (before the server stops)."""
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

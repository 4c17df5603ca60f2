"""Managed catalog files (seed 004) on real parts: PostgreSQL with the migrations, the filesystem object store, a
loopback HTTP server as the "URL the platform is allowed to read", and a simulated clock."""

from __future__ import annotations

import http.server
import itertools
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.catalogs import current_stream
from prw_platform.resolver.files.publication import StreamLocator
from prw_platform.resolver.files.service import CatalogFiles, FileSettings
from prw_platform.storage import FilesystemObjectStore
from tests.integration.resolution.conftest import catalogs  # noqa: F401  (fixture)
from tests.integration.resolution.pipeline import CATALOG, TENANT

ACTOR = "operator:ada"
_COUNTER = itertools.count()


def png(tag: str | None = None) -> bytes:
    """Distinct bytes that read as a PNG picture (its signature, then a unique body)."""
    body = (tag or f"picture-{next(_COUNTER)}").encode()
    return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + body


class SimClock:
    """The simulated clock (``prw_platform.clock.Clock``): moves only when the test says so; thread-safe."""

    def __init__(self) -> None:
        self._now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta) -> None:
        with self._lock:
            self._now += delta


class PictureServer:
    """A loopback HTTP server: ``/ok/<name>`` answers a PNG, ``/text`` a text body, anything else 404."""

    def __init__(self) -> None:
        pictures = self.pictures = {"anvil.png": png("served-anvil")}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                name = self.path.removeprefix("/ok/")
                if self.path.startswith("/ok/") and name in pictures:
                    body, kind = pictures[name], "image/png"
                elif self.path == "/text":
                    body, kind = b"just some words", "text/plain"
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def picture_server() -> Iterator[PictureServer]:
    server = PictureServer()
    yield server
    server.close()


@pytest.fixture
def sim_clock() -> SimClock:
    return SimClock()


@pytest.fixture
def object_store(tmp_path: Path) -> FilesystemObjectStore:
    return FilesystemObjectStore(tmp_path / "objects", protected_buckets=frozenset({"evidence-private"}))


@pytest.fixture
def file_settings(picture_server: PictureServer) -> FileSettings:
    return FileSettings(url_allow=(f"{picture_server.url}/ok/", f"{picture_server.url}/text"))


@pytest.fixture
def files(
    resolver_db: Database,
    object_store: FilesystemObjectStore,
    sim_clock: SimClock,
    file_settings: FileSettings,
    control_db: Database,
    catalogs: None,  # noqa: F811
) -> CatalogFiles:
    return CatalogFiles(
        resolver_db, object_store, sim_clock, file_settings, streams=stream_locator(control_db)
    )


def stream_locator(control_db: Database) -> StreamLocator:
    """The streams saves publish to, as the composition root locates them (``Platform.streams``)."""
    return lambda tenant_id, catalog_id: current_stream(control_db, tenant_id, catalog_id)


class Items:
    """Catalog items written straight into ``resolver.catalog_item`` as test setup (their decisions are not what
    these tests are about)."""

    def __init__(self, owner: Database) -> None:
        self.owner = owner

    def add(self, item_id: str, *, tenant_id: str = TENANT, catalog_id: str = CATALOG) -> str:
        now = datetime(2026, 1, 1, tzinfo=UTC)
        self.owner.run(
            lambda c: c.execute(
                """INSERT INTO resolver.catalog_item (tenant_id, catalog_id, item_id, revision, profile, title,
                       identifiers, attributes, created_at, updated_at)
                   VALUES (%s, %s, %s, 1, 'np_core@1', %s, %s, '{}', %s, %s)""",
                (tenant_id, catalog_id, item_id, item_id, json.dumps({"gtin": None, "mpn": None}), now, now),
            )
        )
        return item_id


@pytest.fixture
def items(owner_db: Database, catalogs: None) -> Items:  # noqa: F811
    return Items(owner_db)


class Rows:
    """Assertions on the tables, as their owner (the database superuser of the test)."""

    def __init__(self, owner: Database) -> None:
        self.owner = owner

    def all(self, query: str, *params: object) -> list[dict[str, Any]]:
        return self.owner.run(lambda c: c.execute(query, params).fetchall())  # type: ignore[arg-type,return-value]

    def count(self, table: str) -> int:
        query = f"SELECT count(*) AS n FROM {table}"  # noqa: S608  (test tables)
        return int(self.all(query)[0]["n"])

    def state(self, file_id: str) -> str:
        return str(
            self.all("SELECT state FROM resolver.catalog_file WHERE file_id = %s", file_id)[0]["state"]
        )

    def states(self) -> dict[str, str]:
        return {
            r["file_id"]: r["state"] for r in self.all("SELECT file_id, state FROM resolver.catalog_file")
        }

    def written(self) -> dict[str, int]:
        tables = (
            "catalog_file",
            "catalog_file_history",
            "item_picture",
            "product_class",
            "product_class_member",
            # A save is an accepted change: its decision, revision and events.
            "catalog_file_aggregate",
            "decision",
            "outbox",
        )
        return {t: self.count(f"resolver.{t}") for t in tables}


@pytest.fixture
def rows(owner_db: Database) -> Rows:
    return Rows(owner_db)


class FlakyStore:
    """The object store (an outside system) whose deletes fail while ``failing`` is set: a fake for the
    consumer's failure path; everything else goes to the real filesystem store."""

    def __init__(self, inner: FilesystemObjectStore) -> None:
        self.inner = inner
        self.failing = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def delete(self, key: Any) -> None:
        if self.failing:
            from prw_platform.storage.errors import StorageUnavailable

            raise StorageUnavailable(f"the object store did not answer deleting {key}")
        self.inner.delete(key)


@pytest.fixture
def flaky_store(object_store: FilesystemObjectStore) -> FlakyStore:
    return FlakyStore(object_store)


@pytest.fixture
def sweeper_db(db_url: str) -> Iterator[Database]:
    from prw_platform.db import roles

    db = Database(db_url, role=roles.RESOLVER_SWEEPER, max_size=4, application_name="prw-test-sweeper").open()
    yield db
    db.close()


class Cleanup:
    """The sweep (resolver_sweeper) and the cleanup consumer (resolver_app) over the real PostgreSQL queue, with
    redeliveries at once (retry backoff 0) so a test can run all five receives."""

    def __init__(self, sweeper_db: Database, resolver_db: Database, store: Any, clock: SimClock) -> None:
        from prw_platform.queues import CATALOG_FILE_CLEANUP, PostgresQueue
        from prw_platform.resolver.files.cleanup import FileCleanup, FileSweep
        from prw_platform.retry import RetryPolicy

        self.sweep_queue = PostgresQueue(sweeper_db, CATALOG_FILE_CLEANUP.name)
        self.queue = PostgresQueue(resolver_db, CATALOG_FILE_CLEANUP.name)
        self.sweep = FileSweep(sweeper_db, self.sweep_queue, store, clock)
        self.consumer = FileCleanup(resolver_db, self.queue, store, clock, RetryPolicy(0, 0))

    def deliver(self, n: int = 10) -> dict[str, int]:
        return dict(self.consumer.run_batch(n).outcomes)

    def drain(self) -> None:
        while self.consumer.run_batch(10).received:
            pass


@pytest.fixture
def cleanup(
    sweeper_db: Database, resolver_db: Database, flaky_store: FlakyStore, sim_clock: SimClock
) -> Cleanup:
    return Cleanup(sweeper_db, resolver_db, flaky_store, sim_clock)

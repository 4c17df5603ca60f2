"""Shared fixtures. Integration tests get a real PostgreSQL (see tests/support/postgres.py)."""

from __future__ import annotations

import os
import shutil
import ssl
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from prw_platform.db import roles
from prw_platform.db.database import Database
from tests.support.postgres import (
    CONTROL,
    MAIN,
    TestDatabases,
    ensure_template,
    fresh_database,
    release_databases,
    server_url,
    stop_embedded,
)

# pytest-xdist workers start with COLUMNS=80 and LINES=24 in their environment. rich reads them once, when a CLI
# module builds its Console, so a test asking for a wide terminal (``env={"COLUMNS": "200"}``) would get 80 columns
# or not depending on which test imported the module first. Without them rich asks the environment at print time.
for _inherited in ("COLUMNS", "LINES"):
    os.environ.pop(_inherited, None)

# Every connection the tests open, here and in the processes they start (libpq reads PGOPTIONS), commits without
# waiting for its WAL to reach the disk: a commit is visible to every other session at once all the same, and only
# a crash of the PostgreSQL server itself could lose one, which no test does (they end backends, never the
# server). A flushed commit cost 2.5-4 ms on the CI machine's disk; one INV-08 property test took 15-18 s with
# them, 11-12 s without.
os.environ["PGOPTIONS"] = f"{os.environ.get('PGOPTIONS', '')} -c synchronous_commit=off".strip()

# httpx builds a TLS context for every client, even one that only ever speaks http:// to loopback as every client
# in the tests does: with SSL_CERT_FILE set (or certifi's bundle) that parses the whole CA bundle, 20-26 ms of CPU
# per client, and an admin end-to-end test makes about three (its own, the OIDC client's, the file fetcher's).
# From a directory (SSL_CERT_DIR) OpenSSL reads a certificate only when a TLS peer needs verifying: no test has one.
os.environ.pop("SSL_CERT_FILE", None)
os.environ["SSL_CERT_DIR"] = os.environ.get("SSL_CERT_DIR") or ssl.get_default_verify_paths().openssl_capath

# One thread per native thread pool (OpenMP, OpenBLAS: scikit-learn's boosted trees in prw-identity-scored): the
# suite already runs a test per xdist worker on every core, and a pool of its own per worker spun its threads
# against the others' (a calibration test took 25 s of CPU with two OpenMP threads, 3.3 s with one).
for _pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_pool, "1")

# No example may fail for taking long: on a busy machine (CI shares its two cores) an example's wall time says
# nothing about the code. Without a deadline Hypothesis also allows 30 s, not 1 s, for generating the first
# examples before its too_slow health check fails a test. Settings a test gives itself still win.
settings.register_profile("prw", deadline=None)
settings.load_profile("prw")


def _weight(item: pytest.Item) -> int:
    """0 for the end-to-end and integration tests (servers, processes, databases: the long ones), 1 for the
    plugins' own tests, 2 for the unit tests (thousands, most of them milliseconds)."""
    path = item.path.as_posix()
    if "/tests/e2e/" in path or "/tests/integration/" in path:
        return 0
    return 2 if "/tests/unit/" in path else 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long tests first, the many short ones last (a stable sort: the order within each kind stays).

    pytest-xdist hands tests to its workers in this order, so the run ends on short tests that keep every worker
    busy to the end, not on one worker still in a long test while the others are done."""
    items.sort(key=_weight)


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    """A conninfo for the ``postgres`` database of the test server (as the owning superuser).

    An embedded server keeps its data in a directory of its own, outside pytest's rotating temp directories: a
    concurrent pytest session would otherwise delete a running server's data."""
    root = Path(tempfile.mkdtemp(prefix="prw-test-pg-"))
    url: str | None = None
    try:
        url = server_url(root)
        yield url
    finally:
        if url is not None:
            release_databases(url)
        stop_embedded(root)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_templates(pg_admin_url: str) -> dict[str, str]:
    return {MAIN: ensure_template(pg_admin_url, MAIN), CONTROL: ensure_template(pg_admin_url, CONTROL)}


@pytest.fixture
def databases(pg_admin_url: str, pg_templates: dict[str, str]) -> Iterator[TestDatabases]:
    """A fresh, migrated main database and control database for this test."""
    with (
        fresh_database(pg_admin_url, pg_templates[MAIN], "prw_t") as main,
        fresh_database(pg_admin_url, pg_templates[CONTROL], "prw_tc") as control,
    ):
        yield TestDatabases(main=main, control=control)


@pytest.fixture
def db_url(databases: TestDatabases) -> str:
    """The main test database, as its owner (for setup and assertions)."""
    return databases.main


def _open(url: str, role: str | None) -> Database:
    return Database(url, role=role, max_size=4, application_name=f"prw-test-{role or 'owner'}").open()


@pytest.fixture
def owner_db(db_url: str) -> Iterator[Database]:
    db = _open(db_url, None)
    yield db
    db.close()


@pytest.fixture
def resolver_db(db_url: str) -> Iterator[Database]:
    db = _open(db_url, roles.RESOLVER_APP)
    yield db
    db.close()


@pytest.fixture
def relay_db(db_url: str) -> Iterator[Database]:
    db = _open(db_url, roles.RESOLVER_RELAY)
    yield db
    db.close()


@pytest.fixture
def product_db(db_url: str) -> Iterator[Database]:
    db = _open(db_url, roles.PRODUCT_APP)
    yield db
    db.close()


@pytest.fixture
def control_db(databases: TestDatabases) -> Iterator[Database]:
    """The control database (history epochs), as its owner: issuing epochs is a control-plane operation."""
    db = _open(databases.control, None)
    yield db
    db.close()

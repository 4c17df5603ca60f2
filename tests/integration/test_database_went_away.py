"""A server that went away is ``DatabaseUnavailable`` (503, retryable at every origin) on every path to a
connection, never a raw psycopg error (a 500); and a pool hands out a live connection after its server ended the
idle ones, as a restart does (if_db)."""

from __future__ import annotations

import asyncio
import time
from typing import LiteralString

import psycopg
import pytest
from psycopg import errors as pgerrors

from prw_platform.db.database import MAX_RETRIES, Connection, Database, ready_all
from prw_platform.db.errors import DatabaseUnavailable

#: The errors of a server that went away: a restart (57P01), a crash (57P02), a server still starting (57P03), a
#: connection failure (class 08), and psycopg's own for a connection that broke or was closed.
WENT_AWAY = [
    pgerrors.AdminShutdown("terminating connection due to administrator command"),
    pgerrors.CrashShutdown("terminating connection because of crash of another server process"),
    pgerrors.CannotConnectNow("the database system is starting up"),
    pgerrors.ConnectionFailure("connection failure"),
    pgerrors.SqlclientUnableToEstablishSqlconnection("could not connect"),
    psycopg.OperationalError("the connection is closed"),
    psycopg.OperationalError("server closed the connection unexpectedly"),
]
#: Ends the backend the statement runs on, with the AdminShutdown every backend gets when the server restarts.
END_MY_BACKEND = "SELECT pg_terminate_backend(pg_backend_pid())"


@pytest.fixture
def db(db_url: str) -> Database:
    opened = Database(db_url, role=None, max_size=4).open()
    yield opened  # type: ignore[misc]
    opened.close()


def _ids(error: Exception) -> str:
    return f"{type(error).__name__}:{error}"


def _in_a_transaction(db: Database, step: Exception | LiteralString) -> None:
    """A ``transaction`` block that runs a statement, or raises an error after a first statement."""
    with db.transaction() as conn:
        if isinstance(step, Exception):
            conn.execute("SELECT 1")
            raise step
        conn.execute(step)


@pytest.mark.parametrize("error", WENT_AWAY, ids=_ids)
def test_each_went_away_error_in_a_transaction_block_is_database_unavailable(
    db: Database, error: Exception
) -> None:
    with pytest.raises(DatabaseUnavailable) as raised:
        _in_a_transaction(db, error)
    assert raised.value.__cause__ is error
    assert (raised.value.status, raised.value.retryable) == (503, True)


@pytest.mark.parametrize("error", WENT_AWAY, ids=_ids)
def test_each_went_away_error_in_run_is_retried_then_database_unavailable(
    db: Database, error: Exception
) -> None:
    attempts: list[int] = []

    def work(conn: Connection) -> None:
        attempts.append(1)
        raise error

    with pytest.raises(DatabaseUnavailable):
        db.run(work, read_only=True)
    assert len(attempts) == MAX_RETRIES + 1


def test_a_backend_ended_inside_a_transaction_block_is_database_unavailable(db: Database) -> None:
    with pytest.raises(DatabaseUnavailable) as raised:
        _in_a_transaction(db, END_MY_BACKEND)
    assert isinstance(raised.value.__cause__, pgerrors.AdminShutdown)
    assert db.run(lambda conn: conn.execute("SELECT 1 AS one").fetchone()) == {"one": 1}


def test_a_backend_ended_under_every_read_is_database_unavailable(db: Database) -> None:
    with pytest.raises(DatabaseUnavailable):
        db.run(lambda conn: conn.execute(END_MY_BACKEND).fetchone())
    with pytest.raises(DatabaseUnavailable):
        db.read_row(END_MY_BACKEND, {}, tenant_id=None)

    async def read_async() -> object:
        try:
            return await db.read_row_async(END_MY_BACKEND, {}, tenant_id=None)
        finally:
            await db.close_async_reads()

    with pytest.raises(DatabaseUnavailable):
        asyncio.run(read_async())


def _end_idle_connections(owner_db: Database, db: Database, held: int) -> None:
    """Make ``db``'s pool hold ``held`` idle connections, then end each one's backend as a restart does."""
    pids: list[int] = []
    with db.transaction() as first:
        pids.append(_pid(first))
        with db.transaction() as second:
            pids.append(_pid(second))
            if held > 2:
                with db.transaction() as third:
                    pids.append(_pid(third))
    assert len(pids) == held
    with owner_db.transaction() as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (pids,))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with owner_db.transaction() as admin:
            if not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchone():
                return
        time.sleep(0.02)
    raise AssertionError("the backends did not end")


def _pid(conn: Connection) -> int:
    row = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
    assert row is not None
    return int(str(row["pid"]))


def test_after_its_server_ended_the_idle_connections_the_pool_hands_out_a_live_one(
    owner_db: Database, db: Database
) -> None:
    _end_idle_connections(owner_db, db, held=3)
    # ``transaction`` runs its block once: it gets a live connection, not one of the three dead ones.
    with db.transaction(read_only=True) as conn:
        assert conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}
    _end_idle_connections(owner_db, db, held=3)
    db.ready(5.0)


def test_without_the_checkout_check_a_dead_idle_connection_is_database_unavailable_in_a_transaction(
    db_url: str, owner_db: Database
) -> None:
    db = Database(db_url, role=None, max_size=4, check_on_checkout=False).open()
    try:
        _end_idle_connections(owner_db, db, held=2)
        with pytest.raises(DatabaseUnavailable):
            _in_a_transaction(db, "SELECT 1")
    finally:
        db.close()


def test_readiness_of_several_pools_is_database_unavailable_when_one_cannot_connect(db: Database) -> None:
    nowhere = Database("postgresql://postgres@127.0.0.1:9/prw_nowhere", role=None, pool_timeout_s=0.5)
    nowhere.open(wait=False)
    try:
        ready_all([db], 5.0)
        with pytest.raises(DatabaseUnavailable):
            ready_all([db, nowhere], 1.0)
    finally:
        nowhere.close()

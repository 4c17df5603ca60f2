"""``Database.read_row_async`` (prw_platform.db.async_reads): the public API's one-statement reads on the event
loop keep ``read_row``'s contract: INV-06 tenant per read on a pooled session, read-only, the same error mapping
and retries (if_db), and a pool per event loop that the server's lifespan closes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import psycopg
import pytest

from prw_platform.db.database import Database
from prw_platform.db.errors import DatabaseUnavailable, InvalidData

T = TypeVar("T")

TENANT = "SELECT current_setting('app.tenant_id', true) AS tenant"


def _on_a_loop(db: Database, work: Callable[[], Awaitable[T]]) -> T:
    """``work`` on a fresh event loop, the loop's pool closed at the end as a server's lifespan closes it."""

    async def served() -> T:
        try:
            return await work()
        finally:
            await db.close_async_reads()

    return asyncio.run(served())


@pytest.fixture
def one_connection(db_url: str) -> Database:
    db = Database(db_url, role=None, max_size=1)
    yield db  # type: ignore[misc]
    db.close()


def test_inv06_each_read_sees_its_own_tenant_on_one_pooled_connection(one_connection: Database) -> None:
    db = one_connection

    async def reads() -> list[object]:
        return [
            await db.read_row_async(TENANT, {}, tenant_id=tenant)
            for tenant in ("ten_a", "ten_b", None, "ten_b")
        ]

    assert _on_a_loop(db, reads) == [
        {"tenant": "ten_a"},
        {"tenant": "ten_b"},
        {"tenant": ""},
        {"tenant": "ten_b"},
    ]


def test_inv06_concurrent_reads_of_two_tenants_never_see_each_other(db_url: str) -> None:
    db = Database(db_url, role=None, max_size=3)
    echo = (
        "SELECT current_setting('app.tenant_id', true) AS tenant, %(asked)s::text AS asked, pg_sleep(0.001)"
    )

    async def reads() -> list[dict[str, object] | None]:
        asked = [f"ten_{n % 4}" for n in range(60)]
        return list(
            await asyncio.gather(*(db.read_row_async(echo, {"asked": t}, tenant_id=t) for t in asked))
        )

    try:
        rows = _on_a_loop(db, reads)
    finally:
        db.close()
    assert len(rows) == 60
    assert all(row is not None and row["tenant"] == row["asked"] for row in rows)


def test_a_read_cannot_write_and_bad_data_is_invalid_data(owner_db: Database) -> None:
    owner_db.run(lambda conn: conn.execute("CREATE TABLE public.async_counter (n int)"))
    owner_db.run(lambda conn: conn.execute("INSERT INTO public.async_counter VALUES (0)"))

    async def reads() -> object:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            await owner_db.read_row_async(
                "UPDATE public.async_counter SET n = 5 RETURNING n", {}, tenant_id=None
            )
        with pytest.raises(InvalidData):
            await owner_db.read_row_async("SELECT %(n)s::int AS n", {"n": 2**40}, tenant_id=None)
        return await owner_db.read_row_async("SELECT n FROM public.async_counter", {}, tenant_id=None)

    assert _on_a_loop(owner_db, reads) == {"n": 0}


def test_a_statement_timeout_is_retried_once_then_unavailable(db_url: str) -> None:
    db = Database(db_url, role=None, max_size=1, statement_timeout_ms=50)
    slow = "SELECT pg_sleep(0.2)"

    async def read() -> object:
        return await db.read_row_async(slow, {}, tenant_id=None)

    try:
        with pytest.raises(DatabaseUnavailable, match="statement timeout, 2 times"):
            _on_a_loop(db, read)
    finally:
        db.close()


def test_a_broken_connection_is_replaced_and_the_read_retried(
    one_connection: Database, owner_db: Database
) -> None:
    db = one_connection

    async def reads() -> tuple[object, object, object]:
        first = await db.read_row_async("SELECT pg_backend_pid() AS pid", {}, tenant_id="ten_a")
        assert first is not None
        owner_db.run(lambda conn: conn.execute("SELECT pg_terminate_backend(%s)", (first["pid"],)))
        gone = "SELECT count(*) AS n FROM pg_stat_activity WHERE pid = %(pid)s"
        while await owner_db.read_row_async(gone, {"pid": first["pid"]}, tenant_id=None) != {"n": 0}:
            await asyncio.sleep(0.01)
        second = await db.read_row_async("SELECT pg_backend_pid() AS pid", {}, tenant_id="ten_a")
        tenant = await db.read_row_async(TENANT, {}, tenant_id="ten_a")
        return first, second, tenant

    async def reads_then_close_the_owners_pool() -> tuple[object, object, object]:
        try:
            return await reads()
        finally:
            await owner_db.close_async_reads()

    first, second, tenant = _on_a_loop(db, reads_then_close_the_owners_pool)
    assert first != second  # a new connection answered
    assert tenant == {"tenant": "ten_a"}  # and the new session was given the tenant


def test_each_event_loop_gets_a_pool_of_its_own(one_connection: Database) -> None:
    """A server's loop ends (its lifespan closed the pool) and the next server's loop reads on a new pool."""
    db = one_connection
    pid = "SELECT pg_backend_pid() AS pid"

    async def read() -> object:
        return await db.read_row_async(pid, {}, tenant_id=None)

    first = _on_a_loop(db, read)
    second = _on_a_loop(db, read)
    assert first is not None
    assert second is not None
    assert first != second
    # And a loop whose pool was never closed (a server stopped without its lifespan) does not stop the next one.
    assert asyncio.run(read()) is not None
    assert _on_a_loop(db, read) is not None

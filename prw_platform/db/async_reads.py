"""One-statement reads on the caller's event loop: ``Database.read_row_async`` (if_db, INV-06).

The public API's hottest routes (``GET /v1/items``, ``GET /v1/items/{id}``) are ``async``: a sync route costs a
hop to a worker thread and back per request, several times the CPU of the same trivial route served on the loop
and a large share of a whole item detail (bench/README.md, "Public reads over HTTP"). Their one statement runs on
a psycopg ``AsyncConnectionPool``, which costs a little more CPU per statement than a sync connection: far less
than the hop saves.

Same contract as ``Database.read_row``: one SELECT in autocommit, its own read-only snapshot; the connections act
as the database's role, their sessions read-only by default, and the session's ``app.tenant_id`` is the tenant of
the read (set when a connection last served another one); retried as ``read_row`` is (a broken connection, a
serialization failure, once a statement timeout), never anything that writes.

A pool belongs to the event loop that opened it: each server's loop gets its own, opened on its first read and
closed by the app's lifespan (``close``); a pool left on a loop that has ended is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import LiteralString

import psycopg
from psycopg import errors as pgerrors
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from pydantic_core import from_json

from prw_platform.db.errors import DatabaseUnavailable, InsufficientPrivilege, InvalidData

log = logging.getLogger(__name__)

AsyncConnection = psycopg.AsyncConnection[dict[str, object]]
#: As ``database.Query``: literal SQL, composed SQL or its rendered bytes.
Query = LiteralString | bytes | psycopg.sql.Composed | psycopg.sql.SQL

_RETRYABLE = (pgerrors.SerializationFailure, pgerrors.DeadlockDetected, psycopg.OperationalError)


@dataclass(frozen=True, slots=True)
class _LoopPool:
    loop: asyncio.AbstractEventLoop
    pool: AsyncConnectionPool[AsyncConnection]


class AsyncReads:
    """``Database.read_row`` on an asyncio loop, for the connections of one role."""

    def __init__(
        self,
        conninfo: str,
        *,
        role: str | None,
        statement_timeout_ms: int,
        max_size: int,
        application_name: str,
        pool_timeout_s: float,
        max_retries: int,
        max_timeout_retries: int,
    ) -> None:
        self._conninfo = conninfo
        self._role = role
        self._statement_timeout_ms = statement_timeout_ms
        self._max_size = max_size
        self._application_name = application_name
        self._pool_timeout_s = pool_timeout_s
        self._max_retries = max_retries
        self._max_timeout_retries = max_timeout_retries
        self._current: _LoopPool | None = None
        #: Per connection, the session's ``app.tenant_id``.
        self._session_tenants: weakref.WeakKeyDictionary[AsyncConnection, str] = weakref.WeakKeyDictionary()

    async def read_row(
        self, statement: Query, params: Mapping[str, object], *, tenant_id: str | None
    ) -> dict[str, object] | None:
        pool = await self._pool()
        attempts = timeouts = 0
        while True:
            attempts += 1
            try:
                async with pool.connection() as conn:
                    await self._pin_tenant(conn, tenant_id)
                    cursor = await conn.execute(statement, params)
                    return await cursor.fetchone()
            except PoolTimeout as exc:
                raise DatabaseUnavailable(f"no database connection available: {exc}") from exc
            except pgerrors.QueryCanceled as exc:
                timeouts += 1
                if timeouts > self._max_timeout_retries:
                    raise DatabaseUnavailable(f"statement timeout, {timeouts} times: {exc}") from exc
                log.info("retrying a read once after statement timeout")
            except pgerrors.InsufficientPrivilege as exc:
                raise InsufficientPrivilege(str(exc)) from exc
            except psycopg.DataError as exc:
                raise InvalidData(f"{exc.sqlstate or 'client'}: {exc}") from exc
            except _RETRYABLE as exc:
                # A read: whatever broke, running it again is safe. A broken connection was discarded by the
                # pool; its idle siblings are checked as the sync pool checks them (a server restart).
                if attempts > self._max_retries:
                    raise DatabaseUnavailable(f"gave up after {attempts} attempts: {exc}") from exc
                if isinstance(exc, psycopg.OperationalError) and not isinstance(exc, pgerrors.QueryCanceled):
                    await pool.check()
                log.info("retrying a read after %s (attempt %d)", type(exc).__name__, attempts)

    async def close(self) -> None:
        """Close the pool of the running loop (the app's lifespan, at shutdown)."""
        current = self._current
        if current is not None and current.loop is asyncio.get_running_loop():
            self._current = None
            await current.pool.close()

    async def _pool(self) -> AsyncConnectionPool[AsyncConnection]:
        loop = asyncio.get_running_loop()
        current = self._current
        if current is not None and current.loop is loop:
            return current.pool
        pool: AsyncConnectionPool[AsyncConnection] = AsyncConnectionPool(
            self._conninfo,
            min_size=1,
            max_size=self._max_size,
            timeout=self._pool_timeout_s,
            open=False,
            configure=self._configure,
            # Told apart from the sync pool's connections in pg_stat_activity.
            kwargs={
                "application_name": f"{self._application_name}-async",
                "row_factory": dict_row,
                "autocommit": True,
            },
            name=f"prw-{self._role or 'owner'}-async",
        )
        # Without waiting: a server starts while its database is unreachable, and a read waits for a connection
        # up to the pool timeout (then DatabaseUnavailable, 503 at the edge).
        await pool.open(wait=False)
        current = self._current
        if current is not None and current.loop is loop:  # another read of this loop opened one meanwhile
            await pool.close()
            return current.pool
        # A pool of a loop that has ended cannot be closed from this one: dropped, its sockets with it.
        self._current = _LoopPool(loop, pool)
        return pool

    async def _configure(self, conn: AsyncConnection) -> None:
        if self._role:
            await conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(self._role)))
        await conn.execute(
            "SELECT set_config('statement_timeout', %s, false), "
            "set_config('default_transaction_read_only', 'on', false)",
            (str(self._statement_timeout_ms),),
        )
        set_json_loads(from_json, conn)

    async def _pin_tenant(self, conn: AsyncConnection, tenant_id: str | None) -> None:
        """INV-06: the session's ``app.tenant_id`` is the read's tenant (or none), set when it changes."""
        tenant = tenant_id or ""
        if self._session_tenants.get(conn) != tenant:
            await conn.execute("SELECT set_config('app.tenant_id', %s, false)", (tenant,))
            self._session_tenants[conn] = tenant

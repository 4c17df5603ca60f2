"""Connection pool and the transaction helper (if_db).

One ``Database`` per service role. Each pooled connection runs ``SET ROLE <role>`` once, so privileges and
row-level security are those of ``resolver_app``, ``resolver_relay`` or ``product_app`` even when the login user
owns the schema. Each transaction sets ``app.tenant_id`` locally, which the RLS policies read (INV-06).

``Database.run`` retries serialization failures, deadlocks and connection resets up to 3 times, a statement
timeout once, and never re-runs a transaction whose COMMIT was in flight when the connection broke unless the
caller supplies an idempotency check (if_db: "Never retry after an ambiguous commit without an idempotency
check"). A data exception (SQLSTATE class 22, or a value psycopg cannot send, such as a NUL in text) is the
caller's ``InvalidData``; a statement timeout that outlives its retry is ``DatabaseUnavailable``.

A server that went away (a restart's AdminShutdown, a crash, "cannot connect now", a broken or closed connection)
is ``DatabaseUnavailable`` on every path to a connection (``run``, ``read_row``, ``transaction``, ``ready``), never
a raw psycopg error: the edges answer it 503, retryable. A pool looks at each connection before handing it out
(``_check_on_checkout``), so after a restart the first transaction gets a live connection.
"""

from __future__ import annotations

import contextlib
import logging
import select
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import LiteralString, TypeVar

import psycopg
from psycopg import errors as pgerrors
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool, PoolTimeout
from pydantic_core import from_json

from prw_platform.db.async_reads import AsyncReads
from prw_platform.db.errors import AmbiguousCommit, DatabaseUnavailable, InsufficientPrivilege, InvalidData

log = logging.getLogger(__name__)

T = TypeVar("T")
Connection = psycopg.Connection[dict[str, object]]
#: A statement: literal SQL, composed SQL or the bytes of composed SQL rendered once (``sql.Composed.as_bytes``).
Query = LiteralString | bytes | psycopg.sql.Composed | psycopg.sql.SQL

#: if_db: retry serialization failures and connection resets up to 3 times.
MAX_RETRIES = 3
#: if_db: 57014 statement_timeout, retry once.
MAX_TIMEOUT_RETRIES = 1

READ_COMMITTED = psycopg.IsolationLevel.READ_COMMITTED
INERROR = psycopg.pq.TransactionStatus.INERROR
IDLE = psycopg.pq.TransactionStatus.IDLE
REPEATABLE_READ = psycopg.IsolationLevel.REPEATABLE_READ
SERIALIZABLE = psycopg.IsolationLevel.SERIALIZABLE

_RETRYABLE_SQLSTATE = (pgerrors.SerializationFailure, pgerrors.DeadlockDetected)


class Database:
    """A pool of connections acting as one database role."""

    def __init__(
        self,
        conninfo: str,
        *,
        role: str | None,
        statement_timeout_ms: int = 30_000,
        max_size: int = 10,
        application_name: str = "prw",
        pool_timeout_s: float = 10.0,
        check_on_checkout: bool = True,
    ) -> None:
        """``check_on_checkout``: look at each connection before handing it out, without a round trip
        (``_check_on_checkout``), so that after a server restart the first transaction gets a live connection.
        ``False`` (tests of the retries): a broken connection fails its transaction, which ``run`` and
        ``read_row`` retry on a fresh one, and ``transaction`` reports as ``DatabaseUnavailable`` (if_db)."""
        self.conninfo = conninfo
        self.role = role
        self._statement_timeout_ms = statement_timeout_ms
        #: Per pooled connection, the session's ``app.tenant_id`` (``_pin_tenant``); a replaced connection is a
        #: new key, and a dropped one leaves.
        self._session_tenants: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()
        self._pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=max_size,
            timeout=pool_timeout_s,
            open=False,
            configure=self._configure,
            # No reset function: with one, the pool hands every returned connection to its worker thread (a queue
            # put, a wake-up and a GIL hand-off per transaction); ``_connection`` restores autocommit instead.
            # Not ``ConnectionPool.check_connection`` (a round trip on every transaction, and after a restart the
            # pool sleeps 1, 2, 4 s between the dead connections it finds one by one): a poll of the socket, and
            # all the idle connections checked at once when one is dead.
            check=self._check_on_checkout if check_on_checkout else None,
            kwargs={"application_name": application_name, "row_factory": dict_row},
            name=f"prw-{role or 'owner'}",
        )
        self._async_reads = AsyncReads(
            conninfo,
            role=role,
            statement_timeout_ms=statement_timeout_ms,
            max_size=max_size,
            application_name=application_name,
            pool_timeout_s=pool_timeout_s,
            max_retries=MAX_RETRIES,
            max_timeout_retries=MAX_TIMEOUT_RETRIES,
        )

    def _configure(self, conn: psycopg.Connection[object]) -> None:
        conn.autocommit = True
        if self.role:
            conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(self.role)))
        conn.execute("SELECT set_config('statement_timeout', %s, false)", (str(self._statement_timeout_ms),))
        conn.autocommit = False
        # json/jsonb columns are parsed by pydantic-core (faster than ``json.loads``, the same Python
        # values): product apply reads a queue body and parked messages per delivery.
        set_json_loads(from_json, conn)

    def open(self, wait: bool = True) -> Database:
        """Open the pool; with ``wait=False`` connections are made in the background and a request waits for
        one (up to the pool timeout), so a server can start while its database is still unreachable."""
        try:
            self._pool.open(wait=wait, timeout=self._pool.timeout)
        except PoolTimeout as exc:
            raise DatabaseUnavailable(f"cannot connect to the database: {exc}") from exc
        return self

    def close(self) -> None:
        self._pool.close()

    def ready(self, timeout_s: float) -> None:
        """Readiness: a ``SELECT 1`` answered within ``timeout_s`` (a connection from the pool, then the answer
        under a statement timeout of the same length); ``DatabaseUnavailable`` otherwise. Never retried: a
        load balancer asks again."""
        try:
            with self._pool.connection(timeout=timeout_s) as conn:
                if conn.autocommit:
                    # Left by ``read_row``: the timeout below is transaction-local, so it needs a transaction.
                    conn.autocommit = False
                try:
                    conn.execute(
                        "SELECT set_config('statement_timeout', %s, true)",
                        (str(max(1, int(timeout_s * 1000))),),
                    )
                    conn.execute("SELECT 1")
                finally:
                    if not conn.closed:
                        conn.rollback()
        except PoolTimeout as exc:
            raise DatabaseUnavailable(f"no database connection within {timeout_s:g} s: {exc}") from exc
        except psycopg.Error as exc:
            raise DatabaseUnavailable(f"the database did not answer: {exc}") from exc

    def __enter__(self) -> Database:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(
        self,
        *,
        tenant_id: str | None = None,
        isolation: psycopg.IsolationLevel = READ_COMMITTED,
        read_only: bool = False,
    ) -> Iterator[Connection]:
        """One transaction, no retries: commits when the block ends normally, rolls back otherwise. A server that
        went away is ``DatabaseUnavailable`` (``AmbiguousCommit`` if it went during the COMMIT); the caller's block
        runs once, so it is the caller's to retry."""
        committing = False
        try:
            with self._connection() as conn:
                conn.isolation_level = isolation
                conn.read_only = read_only
                try:
                    _set_tenant(conn, tenant_id)
                    yield conn
                except psycopg.DataError as exc:
                    if not conn.closed:
                        conn.rollback()
                    raise InvalidData(str(exc)) from exc
                except BaseException:
                    if not conn.closed:
                        conn.rollback()
                    raise
                committing = True
                conn.commit()
        except psycopg.OperationalError as exc:
            if committing:
                raise AmbiguousCommit("the connection broke during COMMIT; the outcome is unknown") from exc
            raise unavailable(exc) from exc

    def run(
        self,
        work: Callable[[Connection], T],
        *,
        tenant_id: str | None = None,
        isolation: psycopg.IsolationLevel = READ_COMMITTED,
        read_only: bool = False,
        verify_commit: Callable[[Connection], T | None] | None = None,
        pipeline: bool = False,
    ) -> T:
        """Run ``work(conn)`` in a transaction and commit, retrying what is safe to retry.

        ``pipeline``: send BEGIN, the tenant setting and ``work``'s statements together (psycopg pipeline mode,
        ``_pipeline``), so a read of one statement costs one round trip to the server and the COMMIT another,
        instead of four; reads sent before the first fetch share its round trip.

        ``work`` must be a pure function of the database state (it may run several times).
        ``verify_commit``, if given, is called on a fresh connection (same tenant) after an ambiguous commit: it
        returns the committed result when the first attempt did commit (found by its idempotency key), or None
        when it did not, in which case ``work`` is retried. Without it an ambiguous commit raises
        ``AmbiguousCommit``."""
        return self._run(
            lambda conn: _done(work(conn)),
            tenant_id=tenant_id,
            isolation=isolation,
            read_only=read_only,
            verify_commit=verify_commit,
            pipeline=pipeline,
        )

    def read_row(
        self, statement: Query, params: Mapping[str, object], *, tenant_id: str | None
    ) -> dict[str, object] | None:
        """One SELECT, alone, outside any explicit transaction: the statement is its own read-only transaction
        and reads one snapshot; one round trip and none of a transaction's extra statements (the public reads:
        bench ``bench_product_api.py``). Retried as ``run`` retries; it writes nothing, so a broken connection is
        always safe to retry.

        INV-06: the tenant is the connection's *session* setting of ``app.tenant_id``, set the first time the
        connection serves this tenant (``_pin_tenant``); every transaction (``run``, ``transaction``) still sets
        its own with ``is_local``, which overrides the session's until it ends. Cheaper in client and backend
        CPU than the previous form, a BEGIN READ ONLY / tenant / statement / COMMIT pipeline (bench/README.md,
        "Statistics, and one statement per read")."""
        return self._run(
            lambda conn: conn.execute(statement, params).fetchone, tenant_id=tenant_id, alone=True
        )

    async def read_row_async(
        self, statement: Query, params: Mapping[str, object], *, tenant_id: str | None
    ) -> dict[str, object] | None:
        """``read_row`` on the running event loop, for ``async`` routes (``prw_platform.db.async_reads``): the
        same statement, snapshot, tenant (INV-06) and retries, on a pool of this loop's own."""
        return await self._async_reads.read_row(statement, params, tenant_id=tenant_id)

    async def close_async_reads(self) -> None:
        """Close the running loop's pool of ``read_row_async`` (a server's lifespan, at shutdown)."""
        await self._async_reads.close()

    def _run(
        self,
        work: Callable[[Connection], Callable[[], T]],
        *,
        tenant_id: str | None,
        isolation: psycopg.IsolationLevel = READ_COMMITTED,
        read_only: bool = False,
        verify_commit: Callable[[Connection], T | None] | None = None,
        pipeline: bool = False,
        alone: bool = False,
    ) -> T:
        """``run``'s transaction and retries; ``work`` returns what to read once the transaction committed (with
        the connection still held: in pipeline mode, the results of statements it did not read). ``alone``:
        ``work`` is one read-only statement, run in autocommit under the connection's session tenant
        (``read_row``)."""
        attempts = 0
        timeouts = 0
        while True:
            attempts += 1
            committing = False
            try:
                with self._connection() as conn:
                    if alone:
                        conn.autocommit = True  # the next checkout restores it (``_connection``)
                        self._pin_tenant(conn, tenant_id)
                        return work(conn)()
                    conn.isolation_level = isolation
                    conn.read_only = read_only
                    # psycopg waits for the BEGIN it sends by itself in pipeline mode (a round trip of its own):
                    # in autocommit for this transaction, the BEGIN is one more statement of the pipeline (set
                    # before the pipeline opens, which would sync to check the mode change; the next checkout
                    # restores it whatever happens).
                    conn.autocommit = pipeline
                    try:
                        with conn.pipeline() if pipeline else contextlib.nullcontext():
                            if pipeline:
                                conn.execute(_begin(isolation, read_only))
                            _set_tenant(conn, tenant_id)
                            finish = work(conn)
                            committing = True
                            if pipeline:
                                # The COMMIT rides the pipeline's closing Sync, so the statements ``work``
                                # left unread and the COMMIT cost one round trip (``commit()`` would sync
                                # once more). Their errors surface when the pipeline ends.
                                conn.execute("COMMIT")
                            else:
                                conn.commit()
                        return finish()
                    except BaseException:
                        # A statement that failed in the pipeline leaves the transaction aborted (its COMMIT
                        # was skipped): roll it back like any failure before the COMMIT.
                        if not conn.closed and (not committing or conn.info.transaction_status == INERROR):
                            conn.rollback()
                        raise
                    finally:
                        if pipeline and not conn.closed and conn.info.transaction_status == IDLE:
                            conn.autocommit = False
            except _RETRYABLE_SQLSTATE as exc:
                # A serialization failure or deadlock reported by the server, even at COMMIT, is definite: the
                # transaction rolled back, so re-running it is safe.
                if attempts > MAX_RETRIES:
                    raise DatabaseUnavailable(f"gave up after {attempts} attempts: {exc.sqlstate}") from exc
                log.info("retrying transaction after %s (attempt %d)", exc.sqlstate, attempts)
            except pgerrors.QueryCanceled as exc:
                timeouts += 1
                if timeouts > MAX_TIMEOUT_RETRIES:
                    raise DatabaseUnavailable(f"statement timeout, {timeouts} times: {exc}") from exc
                log.info("retrying transaction once after statement timeout")
            except pgerrors.InsufficientPrivilege as exc:
                raise InsufficientPrivilege(str(exc)) from exc
            except psycopg.DataError as exc:
                # Definite (the transaction rolled back) and not transient: the same values fail again.
                raise InvalidData(f"{exc.sqlstate or 'client'}: {exc}") from exc
            except psycopg.OperationalError as exc:
                if committing:
                    if verify_commit is None:
                        raise AmbiguousCommit(
                            "the connection broke during COMMIT; the outcome is unknown"
                        ) from exc
                    found = self._verify(verify_commit, tenant_id)
                    if found is not None:
                        return found
                if attempts > MAX_RETRIES:
                    raise DatabaseUnavailable(f"gave up after {attempts} attempts: {exc}") from exc
                log.info("retrying transaction after connection error (attempt %d): %s", attempts, exc)

    def _pin_tenant(self, conn: Connection, tenant_id: str | None) -> None:
        """INV-06 for statements outside a transaction: the session's ``app.tenant_id`` is this tenant (or none),
        set when the connection last served another one, and the session's transactions are read-only unless
        they say otherwise, so that a ``read_row`` statement cannot write. Every transaction of this class says
        which it is (``BEGIN ... READ WRITE`` / ``READ ONLY``) and sets its tenant locally. Only ``read_row`` runs
        statements outside a transaction."""
        tenant = tenant_id or ""
        if self._session_tenants.get(conn) != tenant:
            conn.execute(
                "SELECT set_config('app.tenant_id', %s, false), "
                "set_config('default_transaction_read_only', 'on', false)",
                (tenant,),
            )
            self._session_tenants[conn] = tenant

    def _verify(self, verify_commit: Callable[[Connection], T | None], tenant_id: str | None) -> T | None:
        with self.transaction(tenant_id=tenant_id, read_only=True) as conn:
            return verify_commit(conn)

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        try:
            with self._pool.connection() as conn:
                if conn.autocommit:
                    # A pipelined transaction that failed before it could restore it (the pool has rolled it
                    # back): every transaction starts out of autocommit.
                    conn.autocommit = False
                yield conn  # type: ignore[misc]  # the pool hands out dict_row connections (kwargs above)
        except PoolTimeout as exc:
            raise DatabaseUnavailable(f"no database connection available: {exc}") from exc
        except pgerrors.QueryCanceled:
            raise
        except psycopg.OperationalError:
            # The connection broke (the pool discards it): its idle siblings may be broken too (a server
            # restart), so check them now rather than on every checkout.
            self._check_idle()
            raise

    def _check_idle(self) -> None:
        try:
            self._pool.check()
        except Exception:
            log.warning("checking the idle connections of %s failed", self._pool.name, exc_info=True)

    def _check_on_checkout(self, conn: psycopg.Connection[object]) -> None:
        """The pool's check of a connection it is about to hand out: raising makes the pool discard it and hand
        out another. A dead one means the server ended its siblings too (a restart ends them all), so the idle
        ones are checked now, at one round trip each, and the next one the pool hands out is live."""
        if _went_away(conn):
            self._check_idle()
            raise psycopg.OperationalError("the server ended this idle connection")


def unavailable(exc: psycopg.OperationalError) -> DatabaseUnavailable:
    """The ``DatabaseUnavailable`` of an error a retry may cure: the server went away (AdminShutdown on a restart,
    CrashShutdown, CannotConnectNow, a connection failure of class 08, a broken or closed connection) or did not
    answer in time (a statement timeout, a lock not available)."""
    if isinstance(exc, pgerrors.QueryCanceled):
        return DatabaseUnavailable(f"statement timeout: {exc}")
    return DatabaseUnavailable(f"the database went away: {exc.sqlstate or 'client'}: {exc}")


def ready_all(databases: Iterable[Database], timeout_s: float) -> None:
    """Readiness of several pools (``Database.ready``), all within ``timeout_s``: ``DatabaseUnavailable`` for the
    first that does not answer in the time left."""
    deadline = time.monotonic() + timeout_s
    for database in databases:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DatabaseUnavailable(f"the databases did not all answer within {timeout_s:g} s")
        database.ready(left)


def _went_away(conn: psycopg.Connection[object]) -> bool:
    """Whether the server ended this idle connection, found without a round trip: an idle session that listens to
    no channel receives nothing unasked but its end (a terminated backend's FATAL, such as the 57P01 every backend
    sends when the server restarts, then end of file) and, rarely, a notice or a parameter change. So only a
    connection with input waiting on its socket pays the pool's round-trip check."""
    if conn.closed:
        return True
    try:
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN)
        if not poller.poll(0):
            return False
        ConnectionPool.check_connection(conn)
    except (OSError, psycopg.Error):
        return True
    return False


def affected_rows(
    conn: Connection, query: LiteralString, params: Sequence[object] | Mapping[str, object]
) -> int:
    """Run a write and return how many rows it changed, in or out of pipeline mode: in pipeline mode a count is
    known only after a Sync, which the nested pipeline block ends with (one round trip, as outside it)."""
    with conn.pipeline():
        cursor = conn.execute(query, params)
    return cursor.rowcount


def returned_rows(
    conn: Connection, query: LiteralString, params: Sequence[object] | Mapping[str, object]
) -> int:
    """Run a write whose ``RETURNING`` clause returns one row per row it changed and return how many it
    changed: one round trip in pipeline mode too, where a fetch asks the server to flush the results sent so far
    (``affected_rows`` nests a pipeline, which syncs on the way in when statements are queued and on the way
    out: two)."""
    with conn.execute(query, params) as cur:
        return len(cur.fetchall())


#: The BEGIN of a pipelined transaction, sent as a statement (``Database._run``).
_BEGIN: dict[tuple[psycopg.IsolationLevel, bool], LiteralString] = {
    (READ_COMMITTED, False): "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE",
    (READ_COMMITTED, True): "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
    (REPEATABLE_READ, False): "BEGIN ISOLATION LEVEL REPEATABLE READ READ WRITE",
    (REPEATABLE_READ, True): "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    (SERIALIZABLE, False): "BEGIN ISOLATION LEVEL SERIALIZABLE READ WRITE",
    (SERIALIZABLE, True): "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY",
}


def _begin(isolation: psycopg.IsolationLevel, read_only: bool) -> LiteralString:
    return _BEGIN[(isolation, read_only)]


def _done(result: T) -> Callable[[], T]:
    return lambda: result


def _set_tenant(conn: Connection, tenant_id: str | None) -> None:
    # INV-06: RLS policies compare tenant_id with app.tenant_id; is_local=true scopes it to this transaction.
    conn.execute("SELECT set_config('app.tenant_id', %s, true)", (tenant_id or "",))

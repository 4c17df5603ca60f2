"""if_db retries: serialization failures and connection resets up to 3 times, statement timeout once, and never a
blind retry after an ambiguous commit."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from prw_platform.db.database import SERIALIZABLE, Connection, Database
from prw_platform.db.errors import AmbiguousCommit, DatabaseUnavailable, InvalidData


@pytest.fixture
def counter_table(owner_db: Database) -> None:
    with owner_db.transaction() as conn:
        conn.execute("CREATE TABLE public.counter (id int PRIMARY KEY, n int NOT NULL)")
        conn.execute("INSERT INTO public.counter VALUES (1, 0)")
        conn.execute("CREATE TABLE public.marks (key text PRIMARY KEY)")


def _terminate(owner_db: Database, pid: int) -> None:
    with owner_db.transaction() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    deadline = time.monotonic() + 60  # a bound for a loaded machine: the loop ends once the backend is gone
    while time.monotonic() < deadline:
        with owner_db.transaction() as admin:
            alive = admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        if not alive:
            return
    raise AssertionError("backend did not terminate")


def test_serialization_failure_is_retried_and_succeeds(owner_db: Database, counter_table: None) -> None:
    # Two SERIALIZABLE transactions that read then write the same row: the second to commit fails with 40001 and
    # the helper re-runs it.
    first_read = threading.Event()
    other_done = threading.Event()
    attempts: list[int] = []

    def increment(conn: Connection) -> int:
        attempts.append(1)
        row = conn.execute("SELECT n FROM public.counter WHERE id = 1").fetchone()
        assert row is not None
        if len(attempts) == 1:
            first_read.set()
            other_done.wait(60)
        conn.execute("UPDATE public.counter SET n = %s WHERE id = 1", (int(str(row["n"])) + 1,))
        return len(attempts)

    def concurrent_increment() -> None:
        first_read.wait(60)
        owner_db.run(
            lambda c: c.execute("UPDATE public.counter SET n = n + 1 WHERE id = 1"), isolation=SERIALIZABLE
        )
        other_done.set()

    other = threading.Thread(target=concurrent_increment)
    other.start()
    result = owner_db.run(increment, isolation=SERIALIZABLE)
    other.join()
    assert result == 2  # ran twice: the first attempt hit 40001
    with owner_db.transaction() as conn:
        assert conn.execute("SELECT n FROM public.counter").fetchone() == {"n": 2}  # no lost update


def test_connection_reset_before_commit_is_retried(owner_db: Database, counter_table: None) -> None:
    attempts: list[int] = []

    def work(conn: Connection) -> str:
        attempts.append(1)
        conn.execute("INSERT INTO public.marks VALUES ('reset')")
        if len(attempts) == 1:
            pid = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
            assert pid is not None
            _terminate(owner_db, int(str(pid["pid"])))
            conn.execute("SELECT 1")  # the broken connection raises here, before COMMIT
        return "done"

    assert owner_db.run(work) == "done"
    assert len(attempts) == 2
    with owner_db.transaction() as conn:
        assert conn.execute("SELECT count(*) AS n FROM public.marks").fetchone() == {"n": 1}


def test_retries_are_bounded(owner_db: Database) -> None:
    attempts: list[int] = []

    def always_conflicts(conn: Connection) -> None:
        attempts.append(1)
        raise psycopg.errors.SerializationFailure("simulated 40001")

    with pytest.raises(DatabaseUnavailable, match="gave up"):
        owner_db.run(always_conflicts)
    assert len(attempts) == 4  # the first try and 3 retries


def _kill_during_commit(owner_db: Database, conn: Connection) -> None:
    """Make the COMMIT itself fail on a dead connection: the client cannot know the outcome."""
    pid = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
    assert pid is not None
    _terminate(owner_db, int(str(pid["pid"])))


def test_ambiguous_commit_is_never_retried_blindly(owner_db: Database, counter_table: None) -> None:
    attempts: list[int] = []

    def work(conn: Connection) -> None:
        attempts.append(1)
        conn.execute("INSERT INTO public.marks VALUES ('ambiguous')")
        _kill_during_commit(owner_db, conn)

    with pytest.raises(AmbiguousCommit):
        owner_db.run(work)
    assert len(attempts) == 1


def test_ambiguous_commit_with_idempotency_check_retries_only_when_not_committed(
    owner_db: Database, counter_table: None
) -> None:
    attempts: list[int] = []
    verified: list[int] = []

    def work(conn: Connection) -> str:
        attempts.append(1)
        conn.execute("INSERT INTO public.marks VALUES ('checked')")
        if len(attempts) == 1:
            _kill_during_commit(owner_db, conn)
        return "inserted"

    def already_committed(conn: Connection) -> str | None:
        verified.append(1)
        found = conn.execute("SELECT 1 FROM public.marks WHERE key = 'checked'").fetchone()
        return "inserted" if found else None

    assert owner_db.run(work, verify_commit=already_committed) == "inserted"
    assert (len(attempts), len(verified)) == (2, 1)
    with owner_db.transaction() as conn:
        assert conn.execute("SELECT count(*) AS n FROM public.marks").fetchone() == {"n": 1}


def test_statement_timeout_is_retried_once_then_db_unavailable(db_url: str) -> None:
    db = Database(db_url, role=None, statement_timeout_ms=50, max_size=1).open()
    attempts: list[int] = []

    def slow(conn: Connection) -> None:
        attempts.append(1)
        conn.execute("SELECT pg_sleep(1)")

    try:
        with pytest.raises(DatabaseUnavailable) as raised:
            db.run(slow)
    finally:
        db.close()
    assert len(attempts) == 2
    assert isinstance(raised.value.__cause__, psycopg.errors.QueryCanceled)


@pytest.mark.parametrize(
    ("statement", "parameters"),
    [
        ("SELECT %s::text", ("a\x00b",)),  # psycopg refuses a NUL before sending it
        ("SELECT %s::int", (2**40,)),  # 22003 numeric_value_out_of_range
        ("SELECT %s::text::int", ("ten",)),  # 22P02 invalid_text_representation
        ("SELECT %s::text::date", ("2026-02-30",)),  # 22008 datetime_field_overflow
    ],
)
def test_a_data_exception_is_invalid_data_tried_once(
    owner_db: Database, statement: str, parameters: tuple[object, ...]
) -> None:
    attempts: list[int] = []

    def work(conn: Connection) -> None:
        attempts.append(1)
        conn.execute(statement, parameters)

    with pytest.raises(InvalidData) as raised:
        owner_db.run(work)
    with pytest.raises(InvalidData), owner_db.transaction() as conn:
        conn.execute(statement, parameters)
    assert len(attempts) == 1
    assert isinstance(raised.value.__cause__, psycopg.DataError)
    assert not raised.value.retryable


def test_unreachable_server_is_db_unavailable() -> None:
    db = Database("postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=1", role=None, pool_timeout_s=1)
    with pytest.raises(DatabaseUnavailable):
        db.open()
    db.close()


def test_pipeline_mode_answers_a_read_in_one_round_trip_and_sets_the_tenant(
    owner_db: Database, counter_table: None
) -> None:
    def work(conn: Connection) -> dict[str, object] | None:
        return conn.execute(
            "SELECT n, current_setting('app.tenant_id', true) AS tenant FROM public.counter WHERE id = 1"
        ).fetchone()

    assert owner_db.run(work, tenant_id="ten_synth_a", read_only=True, pipeline=True) == {
        "n": 0,
        "tenant": "ten_synth_a",
    }


@pytest.mark.parametrize(
    ("statement", "parameters"), [("SELECT %s::int", (2**40,)), ("SELECT %s::text", ("\x00",))]
)
def test_pipeline_mode_reports_a_data_exception_as_invalid_data(
    owner_db: Database, statement: str, parameters: tuple[object, ...]
) -> None:
    with pytest.raises(InvalidData):
        owner_db.run(
            lambda conn: conn.execute(statement, parameters).fetchone(), read_only=True, pipeline=True
        )
    # The pooled connection is clean afterwards.
    assert owner_db.run(lambda conn: conn.execute("SELECT 1 AS one").fetchone(), pipeline=True) == {"one": 1}


def test_pipeline_mode_commits_unread_writes_with_the_commit_and_rolls_back_all_when_one_fails(
    owner_db: Database, counter_table: None
) -> None:
    # The writes are left unread: they travel with the COMMIT, and an error among them surfaces when the
    # pipeline ends; the COMMIT was skipped, so nothing of the transaction stays.
    def failing(conn: Connection) -> None:
        conn.execute("INSERT INTO public.marks VALUES ('first')")
        conn.execute("UPDATE public.counter SET n = n + 1 WHERE id = 1")
        conn.execute("INSERT INTO public.counter VALUES (1, 7)")  # duplicate key

    with pytest.raises(psycopg.errors.UniqueViolation):
        owner_db.run(failing, pipeline=True)

    def state(conn: Connection) -> tuple[object, object]:
        marks = conn.execute("SELECT count(*) AS n FROM public.marks").fetchone()
        counter = conn.execute("SELECT n FROM public.counter WHERE id = 1").fetchone()
        return (marks or {}).get("n"), (counter or {}).get("n")

    assert owner_db.run(state) == (0, 0)

    owner_db.run(lambda conn: conn.execute("INSERT INTO public.marks VALUES ('second')"), pipeline=True)
    assert owner_db.run(state) == (1, 0)


def test_a_pool_without_checkout_checks_retries_a_read_on_a_broken_connection(
    db_url: str, owner_db: Database
) -> None:
    db = Database(db_url, role=None, max_size=1, check_on_checkout=False).open()
    try:
        pid = db.run(lambda conn: conn.execute("SELECT pg_backend_pid() AS pid").fetchone())
        assert pid is not None
        _terminate(owner_db, int(str(pid["pid"])))  # the pool's one connection is now dead, unchecked

        again = db.run(lambda conn: conn.execute("SELECT 1 AS one").fetchone(), read_only=True, pipeline=True)

        assert again == {"one": 1}
    finally:
        db.close()


def _syncs_of(db: Database, trace: Path, read: Callable[[], object]) -> tuple[object, int]:
    """What ``read`` answers on ``db``'s one pooled connection, and how many round trips it cost: the times the
    client sent something (a Sync, a Flush, a simple Query) and then read the server's answer, in libpq's trace
    between the COMMIT of the transaction that turned the trace on and the BEGIN of the one that turns it off."""
    with trace.open("w") as out:
        db.run(lambda conn: conn.pgconn.trace(out.fileno()))
        try:
            answer = read()
        finally:
            db.run(lambda conn: conn.pgconn.untrace())
    lines = [line.split("\t") for line in trace.read_text().splitlines() if line.count("\t") >= 3]
    assert lines[0][3] == "Query"
    assert "COMMIT" in lines[0][4]
    last_begin = max(
        i for i, line in enumerate(lines) if line[1] == "F" and line[3] == "Query" and "BEGIN" in line[4]
    )
    directions = [line[1] for line in lines[1:last_begin]]
    return answer, sum(1 for a, b in itertools.pairwise(["B", *directions, "B"]) if (a, b) == ("F", "B"))


def test_read_row_answers_one_statement_in_one_round_trip_in_a_read_only_transaction_of_the_tenant(
    db_url: str, tmp_path: Path
) -> None:
    db = Database(db_url, role=None, max_size=1, check_on_checkout=False).open()
    try:
        statement = (
            "SELECT current_setting('app.tenant_id', true) AS tenant, "
            "current_setting('transaction_read_only') AS read_only"
        )
        # The connection's first read for a tenant sets the session's tenant first: two round trips.
        row, syncs = _syncs_of(
            db, tmp_path / "first.trace", lambda: db.read_row(statement, {}, tenant_id="ten_a")
        )
        assert row == {"tenant": "ten_a", "read_only": "on"}
        assert syncs == 2
        # Every read after it is the statement alone: one round trip.
        row, syncs = _syncs_of(
            db, tmp_path / "read_row.trace", lambda: db.read_row(statement, {}, tenant_id="ten_a")
        )
        assert row == {"tenant": "ten_a", "read_only": "on"}
        assert syncs == 1
        # run(pipeline=True) reads its row before the COMMIT: two round trips.
        _, syncs = _syncs_of(
            db,
            tmp_path / "run.trace",
            lambda: db.run(lambda conn: conn.execute(statement).fetchone(), read_only=True, pipeline=True),
        )
        assert syncs == 2
        assert db.read_row("SELECT 1 AS one WHERE false", {}, tenant_id="ten_a") is None
    finally:
        db.close()


def test_inv06_read_row_switches_the_session_tenant_and_transactions_keep_their_own(db_url: str) -> None:
    """INV-06: a read outside a transaction sees the tenant it asked for on a connection that last served another
    (or none), and a transaction on that connection sees only its own tenant, whatever the session's is."""
    db = Database(db_url, role=None, max_size=1, check_on_checkout=False).open()
    tenant = "SELECT current_setting('app.tenant_id', true) AS tenant"
    try:
        assert db.read_row(tenant, {}, tenant_id="ten_a") == {"tenant": "ten_a"}
        assert db.read_row(tenant, {}, tenant_id="ten_b") == {"tenant": "ten_b"}
        assert db.read_row(tenant, {}, tenant_id=None) == {"tenant": ""}
        assert db.read_row(tenant, {}, tenant_id="ten_b") == {"tenant": "ten_b"}
        # The one pooled connection's session says ten_b; each transaction still sets its own tenant.
        assert db.run(lambda conn: conn.execute(tenant).fetchone(), tenant_id=None) == {"tenant": ""}
        assert db.run(lambda conn: conn.execute(tenant).fetchone(), tenant_id="ten_a") == {"tenant": "ten_a"}
        with db.transaction(tenant_id=None) as conn:
            assert conn.execute(tenant).fetchone() == {"tenant": ""}
        assert db.run(
            lambda conn: conn.execute(tenant).fetchone(), tenant_id="ten_a", read_only=True, pipeline=True
        ) == {"tenant": "ten_a"}
    finally:
        db.close()


def test_readiness_after_read_row_runs_its_check_in_a_transaction(db_url: str) -> None:
    """``ready`` bounds its SELECT 1 with a transaction-local statement timeout: on a connection ``read_row`` left
    in autocommit it first leaves autocommit, so the timeout holds for the check (and not only for itself)."""
    db = Database(db_url, role=None, max_size=1, check_on_checkout=False).open()
    seen: list[tuple[bool, str]] = []
    try:
        assert db.read_row("SELECT 1 AS one", {}, tenant_id="ten_a") == {"one": 1}
        original = psycopg.Connection.execute

        def spy(conn: Connection, query: object, *args: object, **kwargs: object) -> object:
            cursor = original(conn, query, *args, **kwargs)  # type: ignore[call-overload]
            if query == "SELECT 1":
                seen.append((conn.autocommit, str(original(conn, "SHOW statement_timeout").fetchone())))
            return cursor

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(psycopg.Connection, "execute", spy)
            db.ready(1.5)
        assert seen == [(False, "{'statement_timeout': '1500ms'}")]
    finally:
        db.close()


def test_transactions_on_a_connection_read_row_used_still_write(db_url: str, counter_table: None) -> None:
    """``read_row`` makes the session read-only by default; every transaction says READ WRITE itself."""
    db = Database(db_url, role=None, max_size=1, check_on_checkout=False).open()
    count = "SELECT n FROM public.counter WHERE id = 1"
    try:
        assert db.read_row(count, {}, tenant_id=None) == {"n": 0}
        db.run(lambda conn: conn.execute("UPDATE public.counter SET n = 1 WHERE id = 1"))
        db.run(lambda conn: conn.execute("UPDATE public.counter SET n = n + 1 WHERE id = 1"), pipeline=True)
        with db.transaction() as conn:
            conn.execute("UPDATE public.counter SET n = n + 1 WHERE id = 1")
        assert db.read_row(count, {}, tenant_id=None) == {"n": 3}
    finally:
        db.close()


def test_read_row_refuses_a_write_and_reports_bad_data_leaving_the_connection_clean(
    owner_db: Database, counter_table: None
) -> None:
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        owner_db.read_row("UPDATE public.counter SET n = 5 WHERE id = 1 RETURNING n", {}, tenant_id=None)
    with pytest.raises(InvalidData):
        owner_db.read_row("SELECT %(n)s::int AS n", {"n": 2**40}, tenant_id=None)
    assert owner_db.read_row("SELECT n FROM public.counter WHERE id = 1", {}, tenant_id=None) == {"n": 0}

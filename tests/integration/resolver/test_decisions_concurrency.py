"""INV-03 under concurrency: writers of one stream serialize on the cursor row lock (AW-01), so committed
positions are exactly 1..M, and a decision that rolls back consumes no position."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest

from prw_platform.db.database import Connection, Database
from prw_platform.resolver.decisions import (
    DecisionResult,
    IdentifierConflict,
    InvariantViolation,
    apply_decision,
    decide,
)
from tests.integration.resolver.decision_builders import Catalog, gtin_for, wait_until

WRITERS = 8
DECISIONS_PER_WRITER = 4


class InjectedFailure(Exception):
    """Raised after the decision's outbox rows and cursor update, before COMMIT."""


def _decide_then_fail(db: Database, catalog: Catalog, cmd: Any) -> None:
    def work(conn: Connection) -> None:
        result = apply_decision(conn, cmd, catalog.stream, clock=catalog.clock)
        assert result.events  # the outbox rows exist in this transaction
        raise InjectedFailure

    db.run(work, tenant_id=catalog.tenant_id)


def test_concurrent_writers_commit_positions_1_to_m_without_gap_or_duplicate(
    catalog: Catalog, wide_resolver_db: Database
) -> None:
    commands = [
        [catalog.create(w * DECISIONS_PER_WRITER + d + 1) for d in range(DECISIONS_PER_WRITER)]
        for w in range(WRITERS)
    ]
    start = threading.Barrier(WRITERS)

    def writer(batch: list[Any]) -> list[DecisionResult]:
        start.wait(30)
        return [decide(cmd, wide_resolver_db, catalog.stream, clock=catalog.clock) for cmd in batch]

    with ThreadPoolExecutor(WRITERS) as pool:
        results = [r for batch in pool.map(writer, commands) for r in batch]

    positions = sorted(p for r in results for p in r.positions)
    total = WRITERS * DECISIONS_PER_WRITER * 4  # item, listing, mapping, release per decision
    assert positions == list(range(1, total + 1))
    assert [r["position"] for r in catalog.outbox()] == list(range(1, total + 1))
    assert catalog.committed_position() == total
    # Each decision's own events are consecutive: no other writer interleaves inside a locked transaction.
    for r in results:
        assert list(r.positions) == list(range(r.positions[0], r.positions[0] + len(r.positions)))
    # Release revisions follow the stream order too.
    releases = [
        row["body"]["aggregate"]["revision"] for row in catalog.outbox() if row["aggregate_type"] == "release"
    ]
    assert releases == list(range(1, WRITERS * DECISIONS_PER_WRITER + 1))


def test_failed_decisions_among_concurrent_writers_consume_no_position(
    catalog: Catalog, wide_resolver_db: Database
) -> None:
    good = [catalog.create(n) for n in range(1, 13)]
    injected = [catalog.create(n) for n in range(100, 104)]
    invalid = [catalog.map(f"rec_bad_{n}", "itm_missing") for n in range(4)]
    failures: list[BaseException] = []
    lock = threading.Lock()

    def run(cmd: Any) -> None:
        try:
            if cmd in injected:
                _decide_then_fail(wide_resolver_db, catalog, cmd)
            else:
                decide(cmd, wide_resolver_db, catalog.stream, clock=catalog.clock)
        except (InjectedFailure, InvariantViolation) as exc:
            with lock:
                failures.append(exc)

    mixed: list[Any] = []  # failing decisions interleaved with good ones
    for i, cmd in enumerate(good):
        mixed.append(cmd)
        if i < len(injected):
            mixed += [injected[i], invalid[i]]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(run, mixed))

    assert len(failures) == len(injected) + len(invalid)
    assert [r["position"] for r in catalog.outbox()] == list(range(1, len(good) * 4 + 1))
    assert catalog.committed_position() == len(good) * 4
    assert catalog.count("decision") == len(good)
    assert catalog.count("catalog_item") == len(good)


def test_an_exception_after_the_outbox_insert_rolls_back_and_the_next_decision_takes_the_next_position(
    catalog: Catalog,
) -> None:
    catalog.decide(catalog.create(1))
    with pytest.raises(InjectedFailure):
        _decide_then_fail(catalog.resolver_db, catalog, catalog.create(2))
    assert catalog.committed_position() == 4
    assert catalog.count("catalog_item") == 1
    assert catalog.decide(catalog.create(3)).positions == (5, 6, 7, 8)


def test_a_delayed_writer_blocks_later_commits_in_its_stream(
    catalog: Catalog, wide_resolver_db: Database
) -> None:
    holding = threading.Event()
    finish = threading.Event()
    results: dict[str, DecisionResult] = {}
    first_pid: list[int] = []

    def delayed_writer() -> None:
        def work(conn: Connection) -> DecisionResult:
            result = apply_decision(conn, catalog.create(1), catalog.stream, clock=catalog.clock)
            pid = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
            assert pid is not None
            first_pid.append(int(str(pid["pid"])))
            holding.set()
            assert finish.wait(30), "the test never released the delayed writer"
            return result

        results["delayed"] = wide_resolver_db.run(work, tenant_id=catalog.tenant_id)

    def later_writer() -> None:
        results["later"] = decide(catalog.create(2), wide_resolver_db, catalog.stream, clock=catalog.clock)

    delayed = threading.Thread(target=delayed_writer)
    delayed.start()
    assert holding.wait(30)
    later = threading.Thread(target=later_writer)
    later.start()

    try:
        wait_until(lambda: _waits_for(catalog, first_pid[0]), "the later writer to wait for the cursor lock")
        assert "later" not in results
        assert later.is_alive()
        assert catalog.committed_position() == 0  # nothing of either writer is visible yet
    finally:
        finish.set()
        delayed.join(30)
        later.join(30)

    assert results["delayed"].positions == (1, 2, 3, 4)
    assert results["later"].positions == (5, 6, 7, 8)


def test_reads_sent_with_the_cursor_lock_see_the_commit_of_the_writer_they_waited_for(
    catalog: Catalog, wide_resolver_db: Database
) -> None:
    """The identifier check (INV-01/07 via identity) travels in the same round trip as the cursor lock (pipeline
    mode). The server runs it once the lock is granted, so a writer that waited for another one still refuses
    the GTIN that writer committed, and writes nothing."""
    holding = threading.Event()
    finish = threading.Event()
    first_pid: list[int] = []
    outcome: dict[str, object] = {}

    def delayed_writer() -> None:
        def work(conn: Connection) -> DecisionResult:
            result = apply_decision(conn, catalog.create(1), catalog.stream, clock=catalog.clock)
            pid = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
            assert pid is not None
            first_pid.append(int(str(pid["pid"])))
            holding.set()
            assert finish.wait(30), "the test never released the delayed writer"
            return result

        outcome["delayed"] = wide_resolver_db.run(work, tenant_id=catalog.tenant_id)

    same_gtin = replace(catalog.create(2), item=catalog.item(2, gtin=gtin_for(1)))

    def later_writer() -> None:
        try:
            outcome["later"] = decide(same_gtin, wide_resolver_db, catalog.stream, clock=catalog.clock)
        except IdentifierConflict as conflict:
            outcome["later"] = conflict

    delayed = threading.Thread(target=delayed_writer)
    delayed.start()
    assert holding.wait(30)
    later = threading.Thread(target=later_writer)
    later.start()
    try:
        wait_until(lambda: _waits_for(catalog, first_pid[0]), "the later writer to wait for the cursor lock")
    finally:
        finish.set()
        delayed.join(30)
        later.join(30)

    assert isinstance(outcome["delayed"], DecisionResult)
    assert isinstance(outcome["later"], IdentifierConflict)
    assert catalog.committed_position() == 4
    assert catalog.count("decision") == 1
    assert catalog.count("catalog_item") == 1
    assert catalog.count("listing") == 1


def _waits_for(catalog: Catalog, pid: int) -> bool:
    with catalog.owner_db.transaction() as conn:
        row = conn.execute(
            """SELECT count(*) AS n FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'
                 AND query LIKE '%%stream_cursor%%FOR UPDATE%%' AND %s = ANY(pg_blocking_pids(pid))""",
            (pid,),
        ).fetchone()
    return row is not None and int(str(row["n"])) == 1

"""An automatic decision carries a deterministic key (from the resolution job id): a redelivered job does not
decide twice, it gets the existing result back. The same key with another command is IDEMPOTENCY_CONFLICT."""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta, timezone
from typing import Any

import pytest

from prw_platform.db.database import Connection, Database
from prw_platform.resolver.decisions import (
    DecideCase,
    DecisionResult,
    IdempotencyConflict,
    decide,
    writer,
)
from prw_platform.resolver.stream import cursor as stream
from tests.integration.resolver.decision_builders import Catalog, wait_until


def test_the_same_key_twice_decides_once_and_returns_the_existing_result(catalog: Catalog) -> None:
    cmd = catalog.create(1)
    first = catalog.decide(cmd)
    again = catalog.decide(cmd)

    assert not first.replayed
    assert again.replayed
    assert (again.decision_id, again.events, again.item_id, again.listing_id) == (
        first.decision_id,
        first.events,
        first.item_id,
        first.listing_id,
    )
    assert catalog.count("decision") == 1
    assert catalog.count("catalog_item") == 1
    assert catalog.committed_position() == 4


def test_a_replayed_review_case_decision_returns_the_case_it_opened(catalog: Catalog) -> None:
    cmd = catalog.review("rec_unknown")
    first = catalog.decide(cmd)
    again = catalog.decide(cmd)
    assert again.replayed
    assert (again.case_id, again.case_revision) == (first.case_id, 1)
    assert catalog.count("review_case") == 1


def test_a_redelivered_job_reading_its_timestamps_in_another_time_zone_is_a_replay(catalog: Catalog) -> None:
    cmd = catalog.create(1)
    first = catalog.decide(cmd)
    shifted = cmd.listing.observed_at.astimezone(timezone(timedelta(hours=2)))
    again = catalog.decide(
        dataclasses.replace(cmd, listing=dataclasses.replace(cmd.listing, observed_at=shifted))
    )
    assert again.replayed
    assert again.decision_id == first.decision_id


def test_the_same_key_for_another_command_is_an_idempotency_conflict(catalog: Catalog) -> None:
    cmd = catalog.create(1)
    catalog.decide(cmd)
    other = dataclasses.replace(cmd, item=catalog.item(2))
    with pytest.raises(IdempotencyConflict) as raised:
        catalog.decide(other)
    assert raised.value.code == "IDEMPOTENCY_CONFLICT"
    assert catalog.count("decision") == 1


def test_concurrent_redeliveries_of_one_job_decide_once(catalog: Catalog, wide_resolver_db: Database) -> None:
    cmd = catalog.create(1)
    start = threading.Barrier(6)

    def deliver(_: int) -> DecisionResult:
        start.wait(30)
        return decide(cmd, wide_resolver_db, catalog.stream, clock=catalog.clock)

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(deliver, range(6)))

    assert len({r.decision_id for r in results}) == 1
    assert sum(not r.replayed for r in results) == 1
    assert catalog.count("decision") == 1
    assert [r["position"] for r in catalog.outbox()] == [1, 2, 3, 4]


def test_a_reviewer_retry_with_the_same_idempotency_key_is_not_stale(catalog: Catalog) -> None:
    # if_review_decision: retry on network errors with the same Idempotency-Key; the case revision already moved.
    opened = catalog.decide(catalog.review("rec_unknown"))
    target = catalog.decide(catalog.create(1))
    assert opened.case_id
    cmd = DecideCase(
        case_id=opened.case_id,
        expected_revision=1,
        action="map",
        actor="reviewer:op_anna",
        rationale="same product",
        item_id=target.item_id,
        idempotency_key="idem_review_0001",
    )
    first = catalog.decide(cmd)
    again = catalog.decide(cmd)
    assert again.replayed
    assert (again.decision_id, again.case_revision) == (first.decision_id, 2)


def test_an_ambiguous_commit_is_resolved_by_the_idempotency_key_and_decides_once(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # if_db: "Never retry after an ambiguous commit without an idempotency check". The first attempt's connection
    # dies while COMMIT is in flight; decide() looks the key up on a fresh connection and, finding nothing,
    # runs the decision again. Without the check Database.run would raise AmbiguousCommit.
    calls: list[int] = []

    def append_then_lose_the_connection(conn: Connection, cursor: Any, events: Any) -> Any:
        advanced = stream.append_events(conn, cursor, events)
        calls.append(1)
        if len(calls) == 1:
            row = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()
            assert row is not None
            pid = int(str(row["pid"]))
            with catalog.owner_db.transaction() as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

            def gone() -> bool:
                with catalog.owner_db.transaction() as admin:
                    return (
                        admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
                        is None
                    )

            wait_until(gone, "the backend to terminate")
        return advanced

    monkeypatch.setattr(writer, "append_events", append_then_lose_the_connection)
    result = catalog.decide(catalog.create(1))

    assert len(calls) == 2
    assert not result.replayed
    assert catalog.count("decision") == 1
    assert [r["position"] for r in catalog.outbox()] == [1, 2, 3, 4]

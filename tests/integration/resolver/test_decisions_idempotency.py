"""An automatic decision carries a deterministic key (from the resolution job id): a redelivered job does not
decide twice, it gets the existing result back. The same key with another command is IDEMPOTENCY_CONFLICT."""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta, timezone

import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.decisions import DecideCase, DecisionResult, IdempotencyConflict, decide
from tests.integration.resolver.decision_builders import Catalog


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

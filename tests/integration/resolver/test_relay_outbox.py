"""AW-03 (pruning excluded): the relay publishes committed outbox rows in position order as resolver_relay,
marks exactly what it published, skips rows another relay holds, and re-publishes after a crash between publish
and mark (duplicates are expected; if_accepted_change)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from prw_platform.contracts import AcceptedChange, validate
from prw_platform.db.database import Database
from prw_platform.queues import ACCEPTED_CHANGES, PostgresQueue
from prw_platform.resolver.stream.relay import RelayMessage, RelayResult, publish_to_queue, relay_batch
from tests.integration.resolver.decision_builders import Catalog

SCHEMA = "product.accepted-change.v1.json"


class FakeQueue:
    """Records what was published, in order; thread-safe."""

    def __init__(self) -> None:
        self.messages: list[RelayMessage] = []
        self._lock = threading.Lock()

    def publish(self, messages: Sequence[RelayMessage]) -> None:
        with self._lock:
            self.messages.extend(messages)

    @property
    def ids(self) -> list[str]:
        return [m.message_id for m in self.messages]


class CrashBeforeMark(Exception):
    """The relay process dies after the queue accepted the batch and before the outbox rows are marked."""


def _unpublished(catalog: Catalog) -> list[int]:
    return [r["position"] for r in catalog.outbox() if r["published_at"] is None]


def _decide(catalog: Catalog, count: int) -> list[str]:
    for n in range(1, count + 1):
        catalog.decide(catalog.create(n))
    return [r["event_id"] for r in catalog.outbox()]


def test_the_relay_publishes_in_position_order_and_marks_published(
    catalog: Catalog, relay_db: Database
) -> None:
    event_ids = _decide(catalog, 2)
    queue = FakeQueue()

    first = relay_batch(relay_db, queue.publish, batch_size=5, clock=catalog.clock)
    second = relay_batch(relay_db, queue.publish, batch_size=5, clock=catalog.clock)
    drained = relay_batch(relay_db, queue.publish, batch_size=5, clock=catalog.clock)

    assert [m.position for m in queue.messages] == list(range(1, 9))
    assert queue.ids == event_ids
    assert (first.published, second.published, drained.published) == (5, 3, 0)
    assert drained.drained
    assert (first.streams[0].first_position, first.streams[0].last_position) == (1, 5)
    assert _unpublished(catalog) == []
    for message, row in zip(queue.messages, catalog.outbox(), strict=True):
        validate(SCHEMA, message.body)
        change = AcceptedChange.from_message(message.body)
        assert change.event_id == message.message_id == row["event_id"]
        assert change.published_at == row["published_at"]  # the message carries the marked published_at
        assert (message.tenant_id, message.catalog_id, message.history_epoch) == (
            row["body"]["tenant_id"],
            row["body"]["catalog_id"],
            row["body"]["history_epoch"],
        )
        assert {k: v for k, v in message.body.items() if k != "published_at"} == {
            k: v for k, v in row["body"].items() if k != "published_at"
        }


def test_the_relay_keeps_position_order_within_each_of_several_streams(
    provision_catalog_for: Callable[..., Catalog], relay_db: Database
) -> None:
    streams = [provision_catalog_for(tenant_id=t) for t in ("ten_synth_a", "ten_synth_b")]
    for catalog in streams:
        _decide(catalog, 2)
    queue = FakeQueue()
    drained = False
    while not drained:
        drained = relay_batch(relay_db, queue.publish, batch_size=3).drained
    for catalog in streams:
        published = [m.position for m in queue.messages if m.tenant_id == catalog.tenant_id]
        assert published == list(range(1, 9))
    # Lowest positions first across streams: neither stream waits for the other's backlog.
    assert [m.position for m in queue.messages[:4]] == [1, 1, 2, 2]


def test_two_relays_in_parallel_never_publish_the_same_row_in_one_round(
    catalog: Catalog, relay_db: Database
) -> None:
    event_ids = _decide(catalog, 3)  # 12 events
    first_holds_rows = threading.Event()
    second_done = threading.Event()
    first_queue, second_queue = FakeQueue(), FakeQueue()

    def slow_publish(messages: Sequence[RelayMessage]) -> None:
        first_queue.publish(messages)
        first_holds_rows.set()
        assert second_done.wait(30), "the second relay never finished"

    def first_relay() -> RelayResult:
        return relay_batch(relay_db, slow_publish, batch_size=5)

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(first_relay)
        assert first_holds_rows.wait(30)
        second = relay_batch(relay_db, second_queue.publish, batch_size=5)
        second_done.set()
        first.result(30)

    assert set(first_queue.ids).isdisjoint(second_queue.ids)
    assert [m.position for m in first_queue.messages] == [1, 2, 3, 4, 5]
    assert [m.position for m in second_queue.messages] == [6, 7, 8, 9, 10]  # SKIP LOCKED: the next rows
    assert second.published == 5
    rest = FakeQueue()
    relay_batch(relay_db, rest.publish, batch_size=5)
    assert sorted(first_queue.ids + second_queue.ids + rest.ids) == sorted(event_ids)
    assert _unpublished(catalog) == []


def test_a_crash_between_publish_and_mark_republishes_the_same_events_then_marks_them(
    catalog: Catalog, relay_db: Database
) -> None:
    event_ids = _decide(catalog, 1)
    queue = FakeQueue()

    def publish_then_crash(messages: Sequence[RelayMessage]) -> None:
        queue.publish(messages)  # the queue accepted the batch ...
        raise CrashBeforeMark  # ... and the relay died before marking

    with pytest.raises(CrashBeforeMark):
        relay_batch(relay_db, publish_then_crash, batch_size=10)
    assert queue.ids == event_ids
    assert _unpublished(catalog) == [1, 2, 3, 4]

    restarted = relay_batch(relay_db, queue.publish, batch_size=10)

    assert restarted.event_ids == tuple(event_ids)
    assert queue.ids == event_ids + event_ids  # duplicates, by event id
    assert _unpublished(catalog) == []
    assert relay_batch(relay_db, queue.publish, batch_size=10).drained


def test_a_failed_publish_marks_nothing(catalog: Catalog, relay_db: Database) -> None:
    _decide(catalog, 1)

    def unavailable(messages: Sequence[RelayMessage]) -> None:
        raise ConnectionError("queue unavailable")

    with pytest.raises(ConnectionError):
        relay_batch(relay_db, unavailable, batch_size=10)
    assert _unpublished(catalog) == [1, 2, 3, 4]


def test_publish_to_queue_sends_each_event_with_its_event_id_as_message_id(
    catalog: Catalog, relay_db: Database, product_db: Database
) -> None:
    event_ids = _decide(catalog, 1)
    producer = PostgresQueue(relay_db, ACCEPTED_CHANGES.name)  # resolver_relay produces (0002 grants)
    consumer = PostgresQueue(product_db, ACCEPTED_CHANGES.name)  # product_app consumes

    relay_batch(relay_db, publish_to_queue(producer), batch_size=10)

    received = consumer.receive(10)
    assert sorted(r.message_id for r in received) == sorted(event_ids)
    for delivery in received:
        change = AcceptedChange.from_message(delivery.json())
        assert change.event_id == delivery.message_id
        assert change.published_at is not None
    assert _unpublished(catalog) == []

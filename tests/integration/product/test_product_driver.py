"""The product queue driver (AW-04) over the real PostgreSQL accepted-change queue: the resolver relay's role
sends, ``product_app`` receives, applies, and acks only after commit; terminal errors go to the DLQ with the
seed's codes (if_accepted_change), an unavailable database puts messages back for a retry."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
import pytest

from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.product.consumer.driver import (
    BatchReport,
    process_accepted_changes,
)
from prw_platform.product.scopes import ProjectedScope
from prw_platform.queues import ACCEPTED_CHANGES, PostgresQueue, ReceiptHandle
from prw_platform.queues.body import Body
from prw_platform.retry import RetryPolicy
from tests.integration.product.tables import (
    contiguous_position,
    inbox_rows,
    item_projection,
    parked_event_ids,
)
from tests.unit.product.stream import StreamBuilder

QUEUE = ACCEPTED_CHANGES.name


@pytest.fixture
def empty_queue(db_url: str) -> None:
    # The module's tests share one database (conftest): start each with an empty accepted-change queue.
    with psycopg.connect(db_url) as conn:
        conn.execute("DELETE FROM queue.message WHERE queue_name = %s", (QUEUE,))
        conn.execute("DELETE FROM queue.dead_letter WHERE queue_name = %s", (QUEUE,))


@pytest.fixture
def relay_queue(relay_db: Database, empty_queue: None) -> PostgresQueue:
    """The producer's side (role resolver_relay, ACCEPTED_CHANGES.producers)."""
    return PostgresQueue(relay_db, QUEUE)


@pytest.fixture
def queue(product_db: Database, empty_queue: None) -> PostgresQueue:
    """The consumer's side (role product_app, ACCEPTED_CHANGES.consumer)."""
    return PostgresQueue(product_db, QUEUE)


def publish(relay_queue: PostgresQueue, *bodies: Body) -> None:
    """One send per message, so the queue hands them out in this order (the relay's message id is the event id)."""
    for body in bodies:
        message_id = body.get("event_id") if isinstance(body, dict) else None
        relay_queue.send(body, message_id=str(message_id) if message_id else None)


def expire_visibility(db_url: str) -> None:
    """Stands for the visibility timeout (and any retry delay) elapsing: every in-flight or put-back delivery
    becomes visible again. A message put back by retry_later is also due later (``due_at``, migration 0022)."""
    with psycopg.connect(db_url) as conn:
        conn.execute(
            "UPDATE queue.message SET visible_after = now(), due_at = least(due_at, now()) WHERE queue_name = %s",
            (QUEUE,),
        )


def test_aw04_each_committed_delivery_is_acknowledged_and_the_queue_is_empty(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
    owner_db: Database,
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    publish(relay_queue, item, stream.listing("lst_lum_p5"), stream.mapping("lst_lum_p5", "itm_ssd_p5_1t"))

    report = process_accepted_changes(queue, product_db, max_messages=10)

    assert report == BatchReport(received=3, applied=3)
    assert queue.depth().visible + queue.depth().not_visible == 0
    assert queue.dead_letters() == []
    assert [row["outcome"] for row in inbox_rows(owner_db, item["event_id"])] == ["applied"]
    assert contiguous_position(owner_db) == 3


def test_aw04_a_duplicate_delivery_is_acknowledged_and_changes_nothing(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
    owner_db: Database,
) -> None:
    item = stream.item("itm_ssd_p5_1t", title="Lumen P5")
    publish(relay_queue, item, item)

    report = process_accepted_changes(queue, product_db, max_messages=10)

    assert (report.applied, report.ignored_duplicate, report.acknowledged) == (1, 1, 2)
    assert len(inbox_rows(owner_db, item["event_id"])) == 1
    projected = item_projection(owner_db, "itm_ssd_p5_1t")
    assert projected is not None
    assert (projected["revision"], projected["fields"]["title"]) == (1, "Lumen P5")
    assert queue.depth().visible + queue.depth().not_visible == 0


def test_if_accepted_change_a_parked_event_is_stored_then_acked_and_released_by_a_later_batch(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
    owner_db: Database,
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    listing = stream.listing("lst_lum_p5")
    mapping = stream.mapping("lst_lum_p5", "itm_ssd_p5_1t")
    publish(relay_queue, mapping)

    parked = process_accepted_changes(queue, product_db, max_messages=10)

    assert parked == BatchReport(received=1, parked=1)
    assert parked_event_ids(owner_db) == [mapping["event_id"]]
    assert queue.depth().visible + queue.depth().not_visible == 0
    # if_accepted_change: "A DLQ entry or an ACK of a parked event does not close a gap."
    assert contiguous_position(owner_db) == 0

    publish(relay_queue, item, listing)
    releasing = process_accepted_changes(queue, product_db, max_messages=10)

    assert releasing == BatchReport(received=2, applied=2, released=1)
    assert parked_event_ids(owner_db) == []
    assert contiguous_position(owner_db) == 3


def test_aw04_a_stale_revision_and_an_old_epoch_are_acknowledged_as_ignored(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
) -> None:
    first = stream.item("itm_ssd_p5_1t", title="Lumen P5")
    second = stream.item("itm_ssd_p5_1t", title="Lumen P5 Plus")
    restored = StreamBuilder(history_epoch="hep_ten_synth_a_cat_primary_0").item("itm_old_history")
    publish(relay_queue, second, first, restored)

    report = process_accepted_changes(queue, product_db, max_messages=10)

    assert report == BatchReport(received=3, applied=1, ignored_stale_revision=1, ignored_old_epoch=1)
    assert queue.depth().visible + queue.depth().not_visible == 0


def _unprojected(stream: StreamBuilder) -> dict[str, Any]:
    return StreamBuilder(catalog_id="cat_unprojected").item("itm_elsewhere")


def _missing_accepted_at(stream: StreamBuilder) -> dict[str, Any]:
    message = stream.item("itm_ssd_p5_1t")
    del message["accepted_at"]
    return message


def _unknown_type(stream: StreamBuilder) -> dict[str, Any]:
    message = stream.listing("lst_lum_p5")
    message["type"] = "listing.vanished"
    return message


def _second_event_at_a_taken_position(stream: StreamBuilder) -> dict[str, Any]:
    impostor = StreamBuilder().item("itm_other")
    impostor["event_id"] = "evt_impostor"
    return impostor


@pytest.mark.parametrize(
    ("reason", "build"),
    [
        ("SCOPE_NOT_PROJECTED", _unprojected),
        ("SCHEMA_INVALID", _missing_accepted_at),
        ("UNSUPPORTED_EVENT_TYPE", _unknown_type),
        ("POSITION_CONFLICT", _second_event_at_a_taken_position),
    ],
)
def test_if_accepted_change_a_rejected_delivery_is_dead_lettered_with_the_seed_code_and_writes_nothing(
    reason: str,
    build: Any,
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
    owner_db: Database,
) -> None:
    settled = stream.item("itm_first")
    publish(relay_queue, settled)
    process_accepted_changes(queue, product_db)
    rejected = build(stream)
    publish(relay_queue, rejected)

    report = process_accepted_changes(queue, product_db, max_messages=10)

    assert report == BatchReport(received=1, dead_lettered={reason: 1})
    [dead] = queue.dead_letters()
    assert (dead.message_id, dead.reason, dead.receive_count) == (rejected["event_id"], reason, 1)
    assert dead.detail
    assert dead.body == rejected
    assert queue.depth().visible + queue.depth().not_visible == 0
    assert contiguous_position(owner_db) == 1
    assert item_projection(owner_db, "itm_other") is None
    assert item_projection(owner_db, "itm_elsewhere") is None


def test_if_accepted_change_scope_not_projected_raises_an_alert_line(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
    caplog: pytest.LogCaptureFixture,
) -> None:
    foreign = _unprojected(stream)
    publish(relay_queue, foreign, stream.item("itm_ssd_p5_1t"))

    with caplog.at_level(logging.WARNING, logger="prw_platform.product.consumer.driver"):
        process_accepted_changes(queue, product_db, max_messages=10)

    alerts = [r for r in caplog.records if r.levelno >= logging.ERROR and "ALERT" in r.getMessage()]
    assert len(alerts) == 1
    assert "SCOPE_NOT_PROJECTED" in alerts[0].getMessage()
    assert foreign["event_id"] in alerts[0].getMessage()


def test_a_body_that_is_not_json_is_dead_lettered_as_schema_invalid(
    scope: ProjectedScope, relay_queue: PostgresQueue, queue: PostgresQueue, product_db: Database
) -> None:
    relay_queue.send(b"\x00not json", message_id="evt_bytes")

    report = process_accepted_changes(queue, product_db)

    assert report == BatchReport(received=1, dead_lettered={"SCHEMA_INVALID": 1})
    assert [d.reason for d in queue.dead_letters()] == ["SCHEMA_INVALID"]


def test_one_batch_report_counts_every_outcome(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    stream.listing("lst_never_delivered")
    mapping = stream.mapping("lst_never_delivered", "itm_ssd_p5_1t")
    publish(relay_queue, item, item, mapping, _unknown_type(stream), _unprojected(stream))

    report = process_accepted_changes(queue, product_db, max_messages=10)

    assert report == BatchReport(
        received=5,
        applied=1,
        ignored_duplicate=1,
        parked=1,
        dead_lettered={"UNSUPPORTED_EVENT_TYPE": 1, "SCOPE_NOT_PROJECTED": 1},
    )
    assert (report.acknowledged, report.dead_letter_count, report.drained) == (3, 2, False)


def test_an_empty_queue_gives_an_empty_report(queue: PostgresQueue, product_db: Database) -> None:
    report = process_accepted_changes(queue, product_db)

    assert report == BatchReport()
    assert report.drained


class SimulatedCrash(Exception):
    """The consumer process dies after the product transaction committed and before the ack."""


class CrashBeforeAck(PostgresQueue):
    def ack(self, handle: ReceiptHandle) -> bool:
        raise SimulatedCrash(handle.message_id)

    def ack_batch(self, handles: Sequence[ReceiptHandle]) -> list[bool]:
        raise SimulatedCrash(", ".join(handle.message_id for handle in handles))


def test_aw04_crash_between_commit_and_ack_redelivers_after_the_visibility_timeout_as_a_duplicate(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
    owner_db: Database,
    db_url: str,
) -> None:
    item = stream.item("itm_ssd_p5_1t", title="Lumen P5")
    publish(relay_queue, item)
    crashing = CrashBeforeAck(product_db, QUEUE)

    with pytest.raises(SimulatedCrash):
        process_accepted_changes(crashing, product_db, visibility_timeout=30)

    committed = item_projection(owner_db, "itm_ssd_p5_1t")
    assert committed is not None
    # Not acked: still in the queue, invisible until the visibility timeout ends.
    assert process_accepted_changes(queue, product_db) == BatchReport()
    assert queue.depth().in_flight == 1

    expire_visibility(db_url)
    redelivered = process_accepted_changes(queue, product_db)

    assert redelivered == BatchReport(received=1, ignored_duplicate=1)
    assert item_projection(owner_db, "itm_ssd_p5_1t") == committed
    assert [row["outcome"] for row in inbox_rows(owner_db, item["event_id"])] == ["applied"]
    assert contiguous_position(owner_db) == 1
    assert queue.depth().visible + queue.depth().not_visible == 0


class OutlivedVisibility(PostgresQueue):
    """Before its ack, the visibility timeout ends and another consumer takes the message (a newer delivery)."""

    def __init__(self, db: Database, db_url: str, rival: PostgresQueue) -> None:
        super().__init__(db, QUEUE)
        self._db_url = db_url
        self._rival = rival
        self.rival_deliveries = 0

    def ack_batch(self, handles: Sequence[ReceiptHandle]) -> list[bool]:
        expire_visibility(self._db_url)
        self.rival_deliveries += len(self._rival.receive(10, visibility_timeout=0))
        return super().ack_batch(handles)


def test_an_ack_after_the_visibility_timeout_is_reported_and_the_redelivery_is_a_duplicate(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    product_db: Database,
    owner_db: Database,
    db_url: str,
) -> None:
    item = stream.item("itm_ssd_p5_1t")
    publish(relay_queue, item)
    slow = OutlivedVisibility(product_db, db_url, rival=queue)

    late = process_accepted_changes(slow, product_db)

    assert slow.rival_deliveries == 1
    assert late == BatchReport(received=1, ack_superseded=1)
    again = process_accepted_changes(queue, product_db)
    assert again == BatchReport(received=1, ignored_duplicate=1)
    assert len(inbox_rows(owner_db, item["event_id"])) == 1


@pytest.fixture
def unavailable_product_db() -> Iterator[Database]:
    """A product database whose server cannot be reached (a socket directory with no server in it)."""
    conninfo = f"host=/tmp/prw-no-server-{uuid.uuid4().hex} dbname=prw connect_timeout=1"
    db = Database(conninfo, role=roles.PRODUCT_APP, pool_timeout_s=0.2).open(wait=False)
    yield db
    db.close()


def test_if_accepted_change_db_unavailable_puts_the_batch_back_for_a_retry_and_dead_letters_nothing(
    scope: ProjectedScope,
    stream: StreamBuilder,
    relay_queue: PostgresQueue,
    queue: PostgresQueue,
    unavailable_product_db: Database,
    owner_db: Database,
    db_url: str,
) -> None:
    messages = [stream.item("itm_a"), stream.item("itm_b"), stream.item("itm_c")]
    publish(relay_queue, *messages)

    report = process_accepted_changes(queue, unavailable_product_db, max_messages=10)

    assert report == BatchReport(received=3, retried=3)
    assert queue.dead_letters() == []
    depth = queue.depth()
    # Put back with a delay: not visible now, not in flight on a dead delivery either.
    assert (depth.visible, depth.delayed, depth.in_flight) == (0, 3, 0)
    assert item_projection(owner_db, "itm_a") is None

    expire_visibility(db_url)
    with Database(db_url, role=roles.PRODUCT_APP, max_size=2) as recovered:
        retried = process_accepted_changes(queue, recovered, max_messages=10)

    assert retried == BatchReport(received=3, applied=3)


def test_retry_backoff_doubles_per_delivery_up_to_the_cap() -> None:
    policy = RetryPolicy(base_seconds=2, max_seconds=300)
    delays = [policy.delay(count) for count in range(1, 12)]

    assert delays[:5] == [2, 4, 8, 16, 32]
    assert delays == sorted(delays)
    assert max(delays) == 300
    assert policy.delay(10_000) == 300

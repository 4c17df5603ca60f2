"""The Queue contract (ADR-009): every test runs on PostgreSQL and on SQS.

Short visibility timeouts (1 s) are used only where a message must come back; where a message must stay away,
the timeout or delay is long (60 s and more) so that a slow machine cannot make a correct backend fail.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from prw_platform.queues import (
    MAX_MESSAGES_PER_RECEIVE,
    MAX_RECEIVES_EXCEEDED,
    POSTGRES_RECEIVE_LIMIT,
    Body,
    OutgoingMessage,
    PostgresQueue,
    Queue,
)
from tests.integration.queues.delivery import DEADLINE_SECONDS, QueueBackend, drain, receive_one

RESOLUTION_JOB = {
    "schema_version": "resolution.job/1",
    "job_id": "cap_lum_0310:extract:1",
    "stage": "extract",
    "tenant_id": "ten_primary",
    "catalog_id": "cat_primary",
    "capture_id": "cap_lum_0310",
    "artifacts": [{"artifact_id": "art_0310_html", "bytes": 233904, "media_type": "text/html"}],
    "pins": None,
    "attempt_group": 1,
}


def test_sent_message_is_received_with_its_id_and_body_and_ack_deletes_it(queue: Queue) -> None:
    message_id = queue.send(RESOLUTION_JOB, message_id="cap_lum_0310:extract:1")
    assert message_id == "cap_lum_0310:extract:1"

    message = receive_one(queue, visibility_timeout=60)
    assert message.message_id == "cap_lum_0310:extract:1"
    assert message.body == RESOLUTION_JOB
    assert message.json() == RESOLUTION_JOB
    assert message.receive_count == 1
    assert not message.is_final_delivery
    assert message.enqueued_at <= message.first_received_at

    assert queue.ack(message.handle) is True
    depth = queue.depth()
    assert (depth.visible, depth.in_flight, depth.delayed, depth.dead) == (0, 0, 0, 0)
    assert queue.receive(10, visibility_timeout=60) == []


def test_send_without_an_id_generates_distinct_ids(queue: Queue) -> None:
    first = queue.send({"n": 1})
    second = queue.send({"n": 2})
    assert first != second
    received = {m.message_id: m.body for m in drain(queue, expected=2)}
    assert received == {first: {"n": 1}, second: {"n": 2}}


def test_received_message_stays_invisible_while_in_flight(queue: Queue) -> None:
    queue.send({"n": 1})
    receive_one(queue, visibility_timeout=120)

    assert queue.receive(10, visibility_timeout=120) == []
    depth = queue.depth()
    assert (depth.visible, depth.in_flight) == (0, 1)


def test_unacked_message_reappears_after_its_visibility_timeout_with_receive_count_2(queue: Queue) -> None:
    queue.send(RESOLUTION_JOB, message_id="job-1")
    first = receive_one(queue, visibility_timeout=1)

    again = receive_one(queue, visibility_timeout=60)
    assert again.message_id == "job-1"
    assert again.body == RESOLUTION_JOB
    assert again.receive_count == 2
    assert again.first_received_at == first.first_received_at
    assert again.handle != first.handle


def test_delayed_message_is_not_delivered_before_its_delay(queue: Queue) -> None:
    queue.send({"n": 1}, delay_seconds=600)

    assert queue.receive(10, visibility_timeout=60) == []
    depth = queue.depth()
    assert (depth.visible, depth.delayed) == (0, 1)


def test_delayed_message_is_delivered_once_its_delay_passed(queue: Queue) -> None:
    queue.send({"n": 1}, message_id="late", delay_seconds=1)

    message = receive_one(queue, visibility_timeout=60)
    assert (message.message_id, message.receive_count) == ("late", 1)


def test_retry_later_redelivers_after_the_delay_as_a_failed_delivery(queue: Queue) -> None:
    queue.send({"n": 1}, message_id="flaky")
    first = receive_one(queue, visibility_timeout=120)

    # if_resolution_job: STORAGE_UNAVAILABLE is retryable with a delayed retry.
    assert queue.retry_later(first.handle, 1) is True

    again = receive_one(queue, visibility_timeout=60)
    assert (again.message_id, again.receive_count) == ("flaky", 2)


def test_retry_later_keeps_the_message_away_for_the_delay(queue: Queue) -> None:
    queue.send({"n": 1})
    first = receive_one(queue, visibility_timeout=60)

    assert queue.retry_later(first.handle, 600) is True
    assert queue.receive(10, visibility_timeout=60) == []
    depth = queue.depth()
    assert (depth.visible, depth.not_visible) == (0, 1)


def test_dead_letter_moves_the_message_to_the_dlq_with_its_reason(queue: Queue) -> None:
    queue.send(RESOLUTION_JOB, message_id="cap_lum_0310:extract:1")
    message = receive_one(queue, visibility_timeout=60)

    # if_resolution_job: a tenant mismatch goes to the DLQ immediately and raises a security alert.
    assert queue.dead_letter(message, "TENANT_MISMATCH", detail="capture belongs to ten_other") is True

    assert queue.receive(10, visibility_timeout=60) == []
    depth = queue.depth()
    assert (depth.visible, depth.not_visible, depth.dead) == (0, 0, 1)
    [dead] = queue.dead_letters()
    assert dead.queue == queue.name
    assert dead.message_id == "cap_lum_0310:extract:1"
    assert dead.body == RESOLUTION_JOB
    assert dead.reason == "TENANT_MISMATCH"
    assert dead.detail == "capture belongs to ten_other"
    assert dead.receive_count == 1


def test_message_goes_to_the_dlq_on_the_receive_after_max_receives_instead_of_being_delivered(
    queue: Queue,
) -> None:
    assert queue.max_receives == 3
    queue.send(RESOLUTION_JOB, message_id="poison")
    deliveries = [receive_one(queue, visibility_timeout=1) for _ in range(3)]
    assert [m.receive_count for m in deliveries] == [1, 2, 3]
    assert [m.is_final_delivery for m in deliveries] == [False, False, True]

    # ADR-009: after the last permitted delivery the message is never delivered again; the next receive that
    # finds it visible moves it to the DLQ.
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not queue.dead_letters():
        assert time.monotonic() < deadline, "the message never reached the DLQ"
        assert queue.receive(10, visibility_timeout=1, wait_seconds=1) == []

    [dead] = queue.dead_letters()
    assert (dead.message_id, dead.reason, dead.body) == ("poison", MAX_RECEIVES_EXCEEDED, RESOLUTION_JOB)
    depth = queue.depth()
    assert (depth.visible, depth.not_visible, depth.dead) == (0, 0, 1)


def test_redrive_returns_a_dead_letter_as_a_fresh_message(queue: Queue) -> None:
    queue.send(RESOLUTION_JOB, message_id="job-7")
    queue.dead_letter(receive_one(queue, visibility_timeout=60), "DIGEST_MISMATCH")
    [dead] = queue.dead_letters()

    assert queue.redrive([dead.dead_letter_id]) == 1

    assert queue.dead_letters() == []
    message = receive_one(queue, visibility_timeout=60)
    assert (message.message_id, message.body, message.receive_count) == ("job-7", RESOLUTION_JOB, 1)
    assert queue.redrive([dead.dead_letter_id]) == 0


def test_redrive_moves_only_the_named_dead_letters(queue: Queue) -> None:
    queue.send_batch([OutgoingMessage({"n": n}, message_id=f"m{n}") for n in range(3)])
    for message in drain(queue, expected=3):
        queue.dead_letter(message, "SCHEMA_INVALID")
    by_message = {d.message_id: d.dead_letter_id for d in queue.dead_letters()}
    assert sorted(by_message) == ["m0", "m1", "m2"]

    assert queue.redrive([by_message["m1"], "no-such-dead-letter"]) == 1

    assert sorted(d.message_id for d in queue.dead_letters()) == ["m0", "m2"]
    assert receive_one(queue, visibility_timeout=60).message_id == "m1"


def test_discard_deletes_only_the_named_dead_letters_and_sends_nothing(queue: Queue) -> None:
    queue.send_batch([OutgoingMessage({"n": n}, message_id=f"d{n}") for n in range(2)])
    for message in drain(queue, expected=2):
        queue.dead_letter(message, "SCHEMA_INVALID")
    by_message = {d.message_id: d.dead_letter_id for d in queue.dead_letters()}

    assert queue.discard([by_message["d0"], "no-such-dead-letter"]) == 1

    assert [d.message_id for d in queue.dead_letters()] == ["d1"]
    assert queue.receive(10, wait_seconds=1) == []  # nothing went back to the queue
    assert queue.discard([by_message["d0"]]) == 0


def test_stale_handle_ack_does_not_delete_the_newer_delivery(queue: Queue) -> None:
    queue.send({"n": 1}, message_id="slow")
    stale = receive_one(queue, visibility_timeout=1)
    current = receive_one(queue, visibility_timeout=120)
    assert current.receive_count == 2

    assert queue.ack(stale.handle) is False

    depth = queue.depth()
    assert (depth.visible, depth.in_flight) == (0, 1)
    assert queue.ack(current.handle) is True
    assert queue.depth().in_flight == 0


def test_stale_handle_cannot_retry_or_dead_letter_the_newer_delivery(queue: Queue) -> None:
    queue.send({"n": 1})
    stale = receive_one(queue, visibility_timeout=1)
    current = receive_one(queue, visibility_timeout=120)

    assert queue.retry_later(stale.handle, 0) is False
    assert queue.dead_letter(stale, "TENANT_MISMATCH") is False

    assert queue.receive(10, visibility_timeout=60) == []
    depth = queue.depth()
    assert (depth.in_flight, depth.dead) == (1, 0)
    assert queue.ack(current.handle) is True


def test_receive_returns_at_most_max_messages(queue: Queue) -> None:
    ids = queue.send_batch([OutgoingMessage({"n": n}) for n in range(7)])
    assert len(set(ids)) == 7

    first = queue.receive(3, visibility_timeout=120, wait_seconds=1)
    assert 1 <= len(first) <= 3
    rest = drain(queue, expected=7 - len(first), batch=3)
    assert sorted(m.message_id for m in first + rest) == sorted(ids)


def test_receive_refuses_a_batch_size_outside_1_to_its_receive_limit(queue: Queue) -> None:
    # 10 on SQS (ReceiveMessage's MaxNumberOfMessages), POSTGRES_RECEIVE_LIMIT on PostgreSQL.
    assert queue.receive_limit == (
        POSTGRES_RECEIVE_LIMIT if isinstance(queue, PostgresQueue) else MAX_MESSAGES_PER_RECEIVE
    )
    for outside in (0, queue.receive_limit + 1):
        with pytest.raises(ValueError, match="max_messages"):
            queue.receive(outside)


def test_one_receive_takes_up_to_its_receive_limit(queue: Queue) -> None:
    ids = queue.send_batch([OutgoingMessage({"n": n}) for n in range(queue.receive_limit + 5)])

    got = queue.receive(queue.receive_limit, visibility_timeout=120, wait_seconds=1)

    assert 1 <= len(got) <= queue.receive_limit
    assert {m.message_id for m in got} <= set(ids)
    if isinstance(queue, PostgresQueue):  # one statement claims them all; SQS may answer with fewer
        assert len(got) == queue.receive_limit


def test_queue_does_not_dedupe_the_same_message_id(queue: Queue) -> None:
    # ADR-009: consumers dedupe by message key in their inbox; the queue itself delivers both.
    queue.send({"n": 1}, message_id="job-1")
    queue.send({"n": 1}, message_id="job-1")

    assert [m.message_id for m in drain(queue, expected=2)] == ["job-1", "job-1"]


JSON_BODIES: list[Body] = [
    {},
    {
        "unicode": "Grüße 東京 🚀",
        "escapes": 'quote " backslash \\ newline \n tab \t',
        "control": "\x00\x01\x1f",
    },
    {
        "numbers": [0, -1, 2**63, -(2**63), 1.5, 0.1, 1e-300, 1.7976931348623157e308],
        "flags": [True, False, None],
    },
    {"nested": {"a": [{"b": [[], {}]}], "empty": ""}, "price": {"amount": "129.99", "currency": "EUR"}},
]


def test_json_bodies_round_trip(queue: Queue) -> None:
    ids = queue.send_batch([OutgoingMessage(body, message_id=f"b{i}") for i, body in enumerate(JSON_BODIES)])

    received = {m.message_id: m.body for m in drain(queue, expected=len(ids))}
    assert received == {f"b{i}": body for i, body in enumerate(JSON_BODIES)}


def test_bytes_bodies_round_trip(queue: Queue) -> None:
    every_byte = bytes(range(256)) * 4
    queue.send(every_byte, message_id="raw")
    queue.send(b"", message_id="empty")

    received = {m.message_id: m.body for m in drain(queue, expected=2)}
    assert received == {"raw": every_byte, "empty": b""}


def test_a_bytes_body_is_not_taken_for_json(queue: Queue) -> None:
    queue.send(b'{"looks": "like json"}')
    message = receive_one(queue, visibility_timeout=60)

    assert message.body == b'{"looks": "like json"}'
    with pytest.raises(ValueError, match="bytes body"):
        message.json()


def test_handle_of_another_queue_is_refused(backend: QueueBackend) -> None:
    first, second = backend.make(), backend.make()
    first.send({"n": 1})
    message = receive_one(first, visibility_timeout=60)

    with pytest.raises(ValueError, match="receipt handle"):
        second.ack(message.handle)
    assert first.ack(message.handle) is True


@pytest.mark.parametrize("reason", ["tenant mismatch", "", "X" * 65])
def test_dead_letter_reason_must_be_an_error_code(queue: Queue, reason: str) -> None:
    queue.send({"n": 1})
    message = receive_one(queue, visibility_timeout=60)

    with pytest.raises(ValueError, match="reason"):
        queue.dead_letter(message, reason)
    assert queue.depth().dead == 0


def _receive_in_parallel(queue: Queue, total: int) -> list[list[str]]:
    barrier = threading.Barrier(2)
    seen: list[list[str]] = [[], []]
    errors: list[BaseException] = []
    deadline = time.monotonic() + DEADLINE_SECONDS

    def consume(slot: int) -> None:
        try:
            barrier.wait()
            while sum(len(s) for s in seen) < total and time.monotonic() < deadline:
                batch = queue.receive(5, visibility_timeout=300, wait_seconds=1)
                seen[slot].extend(m.message_id for m in batch)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=consume, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    return seen


def test_parallel_receivers_together_get_every_message(queue: Queue) -> None:
    ids = queue.send_batch([OutgoingMessage({"n": n}) for n in range(40)])

    seen = _receive_in_parallel(queue, total=len(ids))

    assert set(seen[0]) | set(seen[1]) == set(ids)


def test_parallel_receivers_never_share_an_invisible_message(backend: QueueBackend) -> None:
    if not backend.exclusive_delivery:
        pytest.skip(
            "SQS standard queues do not promise it (AWS: the visibility timeout isn't a guarantee against "
            "receiving a message twice), and moto's parallel receives do hand out duplicates"
        )
    queue = backend.make()
    ids = queue.send_batch([OutgoingMessage({"n": n}) for n in range(60)])

    seen = _receive_in_parallel(queue, total=len(ids))

    counts = Counter(seen[0] + seen[1])
    assert set(counts) == set(ids)
    assert max(counts.values()) == 1

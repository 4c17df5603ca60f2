"""Queue values and checks that need no backend: body encoding, limits, names, the factory."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.queues import (
    MAX_BODY_BYTES,
    MessageBodyInvalid,
    PostgresQueue,
    QueueDepth,
    ReceiptHandle,
    Received,
    build_queue,
    dead_letter_queue_name,
    ensure_queues,
)
from prw_platform.queues.body import decode_json, encode_body
from prw_platform.queues.port import (
    check_delay,
    check_message_id,
    check_queue_name,
    check_reason,
    check_receive,
    check_visibility_timeout,
)
from prw_platform.queues.sqs_wire import batches

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), json_values, max_size=6))
def test_every_json_object_survives_encoding(body: dict[str, object]) -> None:
    encoded = encode_body(body)
    assert encoded.kind == "json"
    assert encoded.text is not None
    assert decode_json(encoded.text) == body


@given(st.binary(max_size=2048))
def test_bytes_are_carried_as_they_are(body: bytes) -> None:
    encoded = encode_body(body)
    assert (encoded.kind, encoded.data, encoded.size) == ("bytes", body, len(body))


def test_bytearray_and_memoryview_are_bytes() -> None:
    assert encode_body(bytearray(b"ab")).data == b"ab"  # type: ignore[arg-type]
    assert encode_body(memoryview(b"ab")).data == b"ab"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ([1, 2], "JSON object or bytes"),
        ("text", "JSON object or bytes"),
        ({"price": math.nan}, "not JSON"),
        ({"price": math.inf}, "not JSON"),
        ({"when": datetime(2026, 1, 1, tzinfo=UTC)}, "not JSON"),
        ({"ids": {1, 2}}, "not JSON"),
        ({"surrogate": "\ud800"}, "not JSON"),
        ({1: "int key"}, "round trip"),
        ({"pair": (1, 2)}, "round trip"),
    ],
)
def test_bodies_that_would_not_arrive_unchanged_are_refused(body: object, why: str) -> None:
    with pytest.raises(MessageBodyInvalid, match=why):
        encode_body(body)  # type: ignore[arg-type]


def test_body_size_limit_is_inclusive() -> None:
    assert encode_body(b"x" * MAX_BODY_BYTES).size == MAX_BODY_BYTES
    with pytest.raises(MessageBodyInvalid, match="limit"):
        encode_body(b"x" * (MAX_BODY_BYTES + 1))
    overhead = len(json.dumps({"s": ""}, separators=(",", ":")))
    assert encode_body({"s": "x" * (MAX_BODY_BYTES - overhead)}).size == MAX_BODY_BYTES
    with pytest.raises(MessageBodyInvalid, match="limit"):
        encode_body({"s": "é" * MAX_BODY_BYTES})


def test_limits_are_the_sqs_limits_on_every_backend() -> None:
    check_receive(1, 0)
    check_receive(10, 20)
    for max_messages, wait, field in (
        (0, 0, "max_messages"),
        (11, 0, "max_messages"),
        (1, -1, "wait"),
        (1, 21, "wait"),
    ):
        with pytest.raises(ValueError, match=field):
            check_receive(max_messages, wait)
    assert check_delay(900) == 900
    for delay in (901, -1):
        with pytest.raises(ValueError, match="delay_seconds"):
            check_delay(delay)
    assert check_visibility_timeout(43_200) == 43_200
    with pytest.raises(ValueError, match="visibility_timeout"):
        check_visibility_timeout(43_201)


@pytest.mark.parametrize("name", ["", "Resolution-Jobs", "jobs_v1", "1jobs", "j" * 61, "jobs.fifo"])
def test_invalid_queue_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="queue name"):
        check_queue_name(name)


def test_message_ids_are_the_callers_dedupe_keys_or_generated() -> None:
    assert check_message_id("cap_lum_0310:extract:1") == "cap_lum_0310:extract:1"
    assert check_message_id(None) != check_message_id(None)
    for bad in ("", "x" * 257, "line\nbreak"):
        with pytest.raises(ValueError, match="message id"):
            check_message_id(bad)


def test_reasons_are_seed_error_codes() -> None:
    check_reason("TENANT_MISMATCH", None)
    check_reason("MAX_RECEIVES_EXCEEDED", "after 5 deliveries")
    for bad in ("tenant_mismatch", "TENANT MISMATCH", "_X", ""):
        with pytest.raises(ValueError, match="reason"):
            check_reason(bad, None)
    with pytest.raises(ValueError, match="detail"):
        check_reason("SCHEMA_INVALID", "x" * 1001)


def _received(receive_count: int, body: dict[str, object] | bytes) -> Received:
    now = datetime(2026, 10, 10, 3, 32, 1, tzinfo=UTC)
    return Received(
        message_id="m",
        body=body,
        handle=ReceiptHandle("q", "m", "1:token", now),
        receive_count=receive_count,
        enqueued_at=now,
        first_received_at=now,
        max_receives=5,
    )


def test_the_fifth_of_five_deliveries_is_the_final_one() -> None:
    # Seed 004: cleanup marks the file failed on "the final permitted retry after earlier failures".
    assert [_received(n, {}).is_final_delivery for n in (1, 4, 5)] == [False, False, True]


def test_json_of_a_bytes_body_is_refused() -> None:
    assert _received(1, {"a": 1}).json() == {"a": 1}
    with pytest.raises(MessageBodyInvalid):
        _received(1, b"{}").json()


def test_not_visible_is_in_flight_plus_delayed() -> None:
    assert QueueDepth("q", visible=1, in_flight=2, delayed=3, dead=4, approximate=False).not_visible == 5


def test_dead_letter_queue_names_follow_the_seed() -> None:
    assert dead_letter_queue_name("resolution-replays") == "resolution-replay-dlq"
    assert dead_letter_queue_name("resolution-jobs") == "resolution-jobs-dlq"
    assert dead_letter_queue_name("catalog-file-cleanup") == "catalog-file-cleanup-dlq"


def test_postgres_queue_needs_the_callers_database() -> None:
    settings = Settings(queue_backend="postgres", queue_max_receives=7)
    with pytest.raises(ValueError, match="Database"):
        build_queue(settings, "resolution-jobs")

    queue = build_queue(settings, "resolution-jobs", db=Database("dbname=unused", role="resolver_app"))
    assert isinstance(queue, PostgresQueue)
    assert (queue.name, queue.max_receives, queue.transactional_send) == ("resolution-jobs", 7, True)
    assert ensure_queues(settings) == {}


def test_sqs_batches_hold_at_most_ten_messages_and_256_kib() -> None:
    small = [(f"m{i}", encode_body({"i": i}), 0) for i in range(25)]
    assert [len(chunk) for chunk in batches(small)] == [10, 10, 5]

    large = [(f"l{i}", encode_body(b"x" * 90_000), 0) for i in range(3)]  # 120,000 characters in base64 each
    assert [len(chunk) for chunk in batches(large)] == [2, 1]
    assert [m for chunk in batches(large) for m, _, _ in chunk] == ["l0", "l1", "l2"]

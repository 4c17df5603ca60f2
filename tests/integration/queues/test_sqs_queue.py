"""SQS queue specifics against moto's server: queue creation with the redrive policy, the local delivery
deadline, messages from other producers, and error mapping."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.queues import (
    MAX_RECEIVES_EXCEEDED,
    QueueNotFound,
    QueueUnavailable,
    SqsQueue,
    TransactionalSendUnsupported,
    build_queue,
    build_sqs_client,
    ensure_queues,
    ensure_sqs_queues,
)
from prw_platform.queues.sqs import STALE_MARGIN_SECONDS
from tests.integration.queues.conftest import SQS_PREFIX, make_sqs_queue, unique_queue_name
from tests.integration.queues.delivery import receive_one
from tests.support.sqs_server import SqsServer

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient


def _attributes(client: SQSClient, queue_name: str) -> dict[str, str]:
    url = client.get_queue_url(QueueName=queue_name)["QueueUrl"]
    attributes = client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return {str(key): value for key, value in attributes.items()}


def test_ensure_queues_creates_the_queue_and_its_dlq_with_the_redrive_policy(sqs_client: SQSClient) -> None:
    name = unique_queue_name()
    [urls] = ensure_sqs_queues(
        sqs_client, [name], prefix=SQS_PREFIX, max_receives=5, visibility_timeout=60
    ).values()

    main = _attributes(sqs_client, f"{SQS_PREFIX}{name}")
    dlq = _attributes(sqs_client, f"{SQS_PREFIX}{name}-dlq")
    # ADR-009: after 5 failed deliveries (PROP) the message moves to the dead-letter queue.
    assert json.loads(main["RedrivePolicy"]) == {"deadLetterTargetArn": dlq["QueueArn"], "maxReceiveCount": 5}
    assert main["VisibilityTimeout"] == "60"
    assert dlq["MessageRetentionPeriod"] == str(14 * 24 * 3600)
    assert urls.dead_letter_arn == dlq["QueueArn"]


def test_ensure_queues_again_is_harmless_and_applies_a_new_max_receives(sqs_client: SQSClient) -> None:
    name = unique_queue_name()
    first = ensure_sqs_queues(sqs_client, [name], prefix=SQS_PREFIX, max_receives=5, visibility_timeout=60)
    again = ensure_sqs_queues(sqs_client, [name], prefix=SQS_PREFIX, max_receives=5, visibility_timeout=60)
    changed = ensure_sqs_queues(sqs_client, [name], prefix=SQS_PREFIX, max_receives=2, visibility_timeout=30)

    assert first == again == changed
    main = _attributes(sqs_client, f"{SQS_PREFIX}{name}")
    assert json.loads(main["RedrivePolicy"])["maxReceiveCount"] == 2
    assert main["VisibilityTimeout"] == "30"


def test_platform_queues_get_the_seed_dlq_names(sqs_server: SqsServer, sqs_client: SQSClient) -> None:
    prefix = f"{unique_queue_name()}-"
    settings = Settings(queue_backend="sqs", sqs=sqs_server.settings(queue_prefix=prefix))

    created = ensure_queues(settings, sqs_client=sqs_client)

    assert sorted(created) == [
        "accepted-changes",
        "catalog-file-cleanup",
        "resolution-identity",
        "resolution-jobs",
        "resolution-normalize",
        "resolution-replays",
    ]
    # if_replay_job: "DLQ resolution-replay-dlq".
    assert created["resolution-replays"].dead_letter_url.endswith(f"/{prefix}resolution-replay-dlq")
    assert created["accepted-changes"].dead_letter_url.endswith(f"/{prefix}accepted-changes-dlq")
    assert created["catalog-file-cleanup"].dead_letter_url.endswith(f"/{prefix}catalog-file-cleanup-dlq")


def test_build_queue_on_sqs_uses_the_settings(sqs_server: SqsServer, sqs_client: SQSClient) -> None:
    prefix = f"{unique_queue_name()}-"
    settings = Settings(
        queue_backend="sqs", queue_max_receives=4, sqs=sqs_server.settings(queue_prefix=prefix)
    )
    ensure_queues(settings, ["resolution-jobs"], sqs_client=sqs_client)

    queue = build_queue(settings, "resolution-jobs")
    queue.send({"job_id": "cap_1:extract:1"}, message_id="cap_1:extract:1")

    assert isinstance(queue, SqsQueue)
    message = receive_one(queue, visibility_timeout=60)
    assert (message.message_id, message.max_receives) == ("cap_1:extract:1", 4)
    policy = json.loads(_attributes(sqs_client, f"{prefix}resolution-jobs")["RedrivePolicy"])
    assert policy["maxReceiveCount"] == 4


def test_sending_inside_a_database_transaction_is_refused(sqs_client: SQSClient, owner_db: Database) -> None:
    queue = make_sqs_queue(sqs_client)

    with owner_db.transaction() as conn, pytest.raises(TransactionalSendUnsupported):
        queue.send({"n": 1}, conn=conn)
    assert queue.depth().visible == 0


def test_a_queue_never_created_is_queue_not_found(sqs_client: SQSClient) -> None:
    queue = SqsQueue(sqs_client, unique_queue_name(), prefix=SQS_PREFIX)

    with pytest.raises(QueueNotFound):
        queue.send({"n": 1})


def test_an_unreachable_endpoint_is_retryable(sqs_server: SqsServer) -> None:
    settings = sqs_server.settings().model_copy(update={"endpoint_url": "http://127.0.0.1:9"})
    client = build_sqs_client(settings, connect_timeout=1, max_attempts=1)
    queue = SqsQueue(client, unique_queue_name(), prefix=SQS_PREFIX)

    with pytest.raises(QueueUnavailable) as caught:
        queue.receive(1)
    assert caught.value.retryable


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_handle_past_its_deadline_is_not_used_even_if_no_one_took_the_message(
    sqs_client: SQSClient,
) -> None:
    queue = make_sqs_queue(sqs_client)
    clock = FakeClock(1_000_000.0)
    late = SqsQueue(sqs_client, queue.name, prefix=SQS_PREFIX, max_receives=3, clock=clock)
    queue.send({"n": 1})
    message = receive_one(late, visibility_timeout=600)

    received_at = clock.now
    clock.now += 600 - STALE_MARGIN_SECONDS
    assert late.ack(message.handle) is False
    assert late.retry_later(message.handle, 0) is False
    assert late.dead_letter(message, "TENANT_MISMATCH") is False

    # Nothing reached SQS: the delivery is still in flight, and on time the same handle acks it.
    depth = queue.depth()
    assert (depth.in_flight, depth.dead) == (1, 0)
    clock.now = received_at
    assert late.ack(message.handle) is True


def test_a_message_from_another_producer_is_delivered_as_raw_bytes(sqs_client: SQSClient) -> None:
    queue = make_sqs_queue(sqs_client)
    url = sqs_client.get_queue_url(QueueName=f"{SQS_PREFIX}{queue.name}")["QueueUrl"]
    sent = sqs_client.send_message(QueueUrl=url, MessageBody="not json")

    message = receive_one(queue, visibility_timeout=60)

    assert message.body == b"not json"
    assert message.message_id == sent["MessageId"]


def test_sqs_redrive_policy_entries_are_reported_as_max_receives_exceeded(sqs_client: SQSClient) -> None:
    queue = make_sqs_queue(sqs_client, max_receives=1)
    queue.send({"n": 1}, message_id="poison")
    receive_one(queue, visibility_timeout=1)

    while not queue.dead_letters():
        assert queue.receive(1, visibility_timeout=1, wait_seconds=1) == []

    [dead] = queue.dead_letters()
    # SQS moved it itself: no reason attribute, no count we could trust (peeking at a DLQ counts as a receive).
    assert (dead.message_id, dead.reason, dead.receive_count, dead.detail) == (
        "poison",
        MAX_RECEIVES_EXCEEDED,
        None,
        None,
    )
    assert dead.dead_lettered_at is None
    assert dead.enqueued_at is not None

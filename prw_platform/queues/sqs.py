"""The SQS queue (boto3): one standard queue per name plus its DLQ, both ``<prefix><name>``.

The port maps onto SQS as follows:

* receive = ReceiveMessage with the system attributes ``ApproximateReceiveCount``, ``SentTimestamp`` and
  ``ApproximateFirstReceiveTimestamp`` (``MessageSystemAttributeNames``, the successor of ``AttributeNames``);
  ack = DeleteMessage; retry_later = ChangeMessageVisibility; dead_letter = SendMessage to the DLQ with the
  reason as a message attribute, then DeleteMessage (in that order: a crash in between leaves a copy in both,
  never in neither).
* max_receives is the DLQ redrive policy's ``maxReceiveCount`` (``ensure_queues``), so SQS itself moves a
  message on the receive after its last permitted delivery; those entries carry no reason attribute and are
  reported as ``MAX_RECEIVES_EXCEEDED``.
* Our message id, the body encoding and dead-letter details travel as message attributes; bytes travel base64.
* A handle is used only before its own visibility deadline (minus a small margin), measured on the local clock
  from just before the receive request. SQS ignores a delete with a superseded receipt handle, but moto deletes
  the newer delivery anyway; the deadline check keeps the contract on both (a late ack is refused and the message
  is delivered again, which ADR-009's inbox dedupe absorbs).
* dead_letters and redrive have no "peek" in SQS: they receive from the DLQ with a scan visibility timeout and
  put back what they do not take (ChangeMessageVisibility 0). Real SQS short polling samples a subset of servers,
  so the scan long-polls ``scan_wait_seconds`` before it decides the DLQ is exhausted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from prw_platform.db.database import Connection
from prw_platform.queues.body import Body, encode_body
from prw_platform.queues.errors import QueueError, TransactionalSendUnsupported
from prw_platform.queues.names import dead_letter_queue_name
from prw_platform.queues.port import (
    MAX_MESSAGES_PER_RECEIVE,
    DeadLetter,
    OutgoingMessage,
    QueueDepth,
    ReceiptHandle,
    Received,
    check_delay,
    check_max_receives,
    check_message_id,
    check_queue_name,
    check_reason,
    check_receive,
    check_visibility_timeout,
)
from prw_platform.queues.sqs_client import error_code, sqs_errors
from prw_platform.queues.sqs_wire import (
    SYSTEM_ATTRIBUTES,
    batches,
    dead_letter_from,
    dead_letter_message,
    message_attributes,
    received_from,
    wire_body,
)

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import (
        ChangeMessageVisibilityBatchRequestEntryTypeDef,
        MessageTypeDef,
        SendMessageBatchRequestEntryTypeDef,
    )

log = logging.getLogger(__name__)

#: The last 200 ms of a delivery count as expired: a request sent then may reach SQS after the deadline.
STALE_MARGIN_SECONDS = 0.2
#: How long a DLQ scan keeps the messages it looked at invisible (so one scan does not see one twice).
SCAN_VISIBILITY_SECONDS = 30
#: A redrive looks at most this many DLQ messages for the ids it was given.
MAX_REDRIVE_SCAN = 10_000
_STALE_RECEIPT_CODES = frozenset(
    {"ReceiptHandleIsInvalid", "MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight"}
)


class SqsQueue:
    transactional_send = False
    receive_limit = MAX_MESSAGES_PER_RECEIVE

    def __init__(
        self,
        client: SQSClient,
        name: str,
        *,
        prefix: str = "prw-",
        max_receives: int = 5,
        visibility_timeout: int = 60,
        scan_wait_seconds: int = 1,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._name = check_queue_name(name)
        self._queue_name = f"{prefix}{name}"
        self._dlq_name = f"{prefix}{dead_letter_queue_name(name)}"
        self._max_receives = check_max_receives(max_receives)
        self._visibility_timeout = check_visibility_timeout(visibility_timeout)
        self._scan_wait = scan_wait_seconds
        self._clock = clock
        self._urls: dict[str, str] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def max_receives(self) -> int:
        return self._max_receives

    def send(
        self,
        body: Body,
        *,
        message_id: str | None = None,
        delay_seconds: int = 0,
        conn: Connection | None = None,
    ) -> str:
        return self.send_batch([OutgoingMessage(body, message_id, delay_seconds)], conn=conn)[0]

    def send_batch(self, messages: Sequence[OutgoingMessage], *, conn: Connection | None = None) -> list[str]:
        if conn is not None:
            raise TransactionalSendUnsupported("SQS cannot enqueue inside a database transaction")
        prepared = [
            (check_message_id(m.message_id), encode_body(m.body), check_delay(m.delay_seconds))
            for m in messages
        ]
        url = self._url(self._queue_name)
        for chunk in batches(prepared):
            entries: list[SendMessageBatchRequestEntryTypeDef] = [
                {
                    "Id": str(index),
                    "MessageBody": wire_body(encoded),
                    "DelaySeconds": delay,
                    "MessageAttributes": message_attributes(message_id, encoded),
                }
                for index, (message_id, encoded, delay) in enumerate(chunk)
            ]
            with sqs_errors():
                result = self._client.send_message_batch(QueueUrl=url, Entries=entries)
            failed = result.get("Failed", [])
            if failed:
                first = failed[0]
                error = QueueError(
                    f"SQS refused {len(failed)} of {len(entries)} messages: {first.get('Message')}"
                )
                error.retryable = not first["SenderFault"]
                raise error
        return [message_id for message_id, _, _ in prepared]

    def receive(
        self,
        max_messages: int = 1,
        *,
        visibility_timeout: int | None = None,
        wait_seconds: int = 0,
    ) -> list[Received]:
        check_receive(max_messages, wait_seconds)
        visibility = check_visibility_timeout(
            self._visibility_timeout if visibility_timeout is None else visibility_timeout
        )
        # Read the clock before asking: SQS starts the timeout later, so this deadline is never too late.
        started = self._clock()
        with sqs_errors():
            response = self._client.receive_message(
                QueueUrl=self._url(self._queue_name),
                MaxNumberOfMessages=max_messages,
                VisibilityTimeout=visibility,
                WaitTimeSeconds=wait_seconds,
                MessageSystemAttributeNames=SYSTEM_ATTRIBUTES,
                MessageAttributeNames=["All"],
            )
        deadline = datetime.fromtimestamp(started + visibility, UTC)
        return [
            received_from(message, queue=self._name, deadline=deadline, max_receives=self._max_receives)
            for message in response.get("Messages", [])
        ]

    def ack(self, handle: ReceiptHandle) -> bool:
        if not self._current(handle):
            return False
        try:
            with sqs_errors(passthrough=_STALE_RECEIPT_CODES):
                self._client.delete_message(
                    QueueUrl=self._url(self._queue_name), ReceiptHandle=handle.delivery
                )
        except ClientError as exc:
            log.info("ack of %s refused: %s", handle.message_id, error_code(exc))
            return False
        return True

    def ack_batch(self, handles: Sequence[ReceiptHandle]) -> list[bool]:
        # One DeleteMessage per handle: DeleteMessageBatch would save round trips, but the PostgreSQL backend is
        # the one the apply throughput target is measured on.
        return [self.ack(handle) for handle in handles]

    def retry_later(self, handle: ReceiptHandle, delay_seconds: int) -> bool:
        delay = check_visibility_timeout(delay_seconds)
        if not self._current(handle):
            return False
        try:
            with sqs_errors(passthrough=_STALE_RECEIPT_CODES):
                self._client.change_message_visibility(
                    QueueUrl=self._url(self._queue_name),
                    ReceiptHandle=handle.delivery,
                    VisibilityTimeout=delay,
                )
        except ClientError as exc:
            log.info("retry of %s refused: %s", handle.message_id, error_code(exc))
            return False
        return True

    def dead_letter(self, message: Received, reason: str, *, detail: str | None = None) -> bool:
        check_reason(reason, detail)
        if not self._current(message.handle):
            return False
        wire, attributes = dead_letter_message(message, reason, detail, self._clock())
        with sqs_errors():
            self._client.send_message(
                QueueUrl=self._url(self._dlq_name), MessageBody=wire, MessageAttributes=attributes
            )
        if not self.ack(message.handle):
            # The delivery expired meanwhile: the DLQ holds a copy and the message comes back (at-least-once).
            log.warning("dead-lettered %s but could not delete the delivery", message.message_id)
        return True

    def dead_letters(self, limit: int = 100) -> list[DeadLetter]:
        scanned = self._scan_dead_letters(limit=limit)
        self._release(scanned)
        return [dead_letter_from(message, queue=self._name) for message in scanned]

    def redrive(self, dead_letter_ids: Sequence[str]) -> int:
        return self._take_dead_letters(dead_letter_ids, resend=True)

    def discard(self, dead_letter_ids: Sequence[str]) -> int:
        return self._take_dead_letters(dead_letter_ids, resend=False)

    def _take_dead_letters(self, dead_letter_ids: Sequence[str], *, resend: bool) -> int:
        wanted = set(dead_letter_ids)
        if not wanted:
            return 0
        scanned = self._scan_dead_letters(limit=MAX_REDRIVE_SCAN, stop_when_found=wanted)
        taken = 0
        keep: list[MessageTypeDef] = []
        for message in scanned:
            if message["MessageId"] not in wanted:
                keep.append(message)
                continue
            if resend:
                entry = dead_letter_from(message, queue=self._name)
                # Send first, then delete: a crash in between duplicates the message, never loses it.
                self.send(entry.body, message_id=entry.message_id)
            with sqs_errors():
                self._client.delete_message(
                    QueueUrl=self._url(self._dlq_name), ReceiptHandle=message["ReceiptHandle"]
                )
            taken += 1
        self._release(keep)
        return taken

    def depth(self) -> QueueDepth:
        main = self._counts(self._queue_name)
        dead = self._counts(self._dlq_name)
        return QueueDepth(
            queue=self._name,
            visible=main[0],
            in_flight=main[1],
            delayed=main[2],
            dead=sum(dead),
            approximate=True,
        )

    def _counts(self, queue_name: str) -> tuple[int, int, int]:
        with sqs_errors():
            attributes = self._client.get_queue_attributes(
                QueueUrl=self._url(queue_name),
                AttributeNames=[
                    "ApproximateNumberOfMessages",
                    "ApproximateNumberOfMessagesNotVisible",
                    "ApproximateNumberOfMessagesDelayed",
                ],
            )["Attributes"]
        return (
            int(attributes.get("ApproximateNumberOfMessages", "0")),
            int(attributes.get("ApproximateNumberOfMessagesNotVisible", "0")),
            int(attributes.get("ApproximateNumberOfMessagesDelayed", "0")),
        )

    def _scan_dead_letters(
        self, *, limit: int, stop_when_found: set[str] | None = None
    ) -> list[MessageTypeDef]:
        seen: dict[str, MessageTypeDef] = {}
        while len(seen) < limit:
            with sqs_errors():
                response = self._client.receive_message(
                    QueueUrl=self._url(self._dlq_name),
                    MaxNumberOfMessages=min(MAX_MESSAGES_PER_RECEIVE, limit - len(seen)),
                    VisibilityTimeout=SCAN_VISIBILITY_SECONDS,
                    WaitTimeSeconds=self._scan_wait,
                    MessageSystemAttributeNames=SYSTEM_ATTRIBUTES,
                    MessageAttributeNames=["All"],
                )
            messages = response.get("Messages", [])
            if not messages:
                break
            for message in messages:
                seen.setdefault(message["MessageId"], message)
            if stop_when_found is not None and stop_when_found <= seen.keys():
                break
        return list(seen.values())

    def _release(self, messages: Sequence[MessageTypeDef]) -> None:
        url = self._url(self._dlq_name)
        for start in range(0, len(messages), MAX_MESSAGES_PER_RECEIVE):
            entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                for i, m in enumerate(messages[start : start + MAX_MESSAGES_PER_RECEIVE])
            ]
            with sqs_errors():
                self._client.change_message_visibility_batch(QueueUrl=url, Entries=entries)

    def _current(self, handle: ReceiptHandle) -> bool:
        if handle.queue != self._name:
            raise ValueError(f"a receipt handle of queue {handle.queue!r} used on {self._name!r}")
        return self._clock() < handle.invisible_until.timestamp() - STALE_MARGIN_SECONDS

    def _url(self, queue_name: str) -> str:
        url = self._urls.get(queue_name)
        if url is None:
            with sqs_errors():
                url = self._client.get_queue_url(QueueName=queue_name)["QueueUrl"]
            self._urls[queue_name] = url
        return url

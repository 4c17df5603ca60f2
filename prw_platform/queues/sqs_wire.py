"""How a queue message looks on SQS: the body text, our message attributes, and the values read back."""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from prw_platform.queues.body import Body, EncodedBody, decode_json, encode_body
from prw_platform.queues.errors import MessageBodyInvalid
from prw_platform.queues.port import (
    MAX_MESSAGES_PER_RECEIVE,
    MAX_RECEIVES_EXCEEDED,
    DeadLetter,
    ReceiptHandle,
    Received,
)

if TYPE_CHECKING:
    from mypy_boto3_sqs.literals import MessageSystemAttributeNameType
    from mypy_boto3_sqs.type_defs import MessageAttributeValueTypeDef, MessageTypeDef

    Attributes = dict[str, MessageAttributeValueTypeDef]

#: Message attributes (SQS allows letters, digits, '-', '_' and '.'; at most 10 per message).
ATTR_MESSAGE_ID = "prw-message-id"
ATTR_BODY = "prw-body"
ATTR_REASON = "prw-dead-letter-reason"
ATTR_DETAIL = "prw-dead-letter-detail"
ATTR_RECEIVE_COUNT = "prw-receive-count"
ATTR_ENQUEUED_AT = "prw-enqueued-at"
ATTR_DEAD_LETTERED_AT = "prw-dead-lettered-at"
BODY_JSON = "json"
BODY_BASE64 = "base64"

#: The system attributes a receive asks for (``MessageSystemAttributeNames``, successor of ``AttributeNames``).
SYSTEM_ATTRIBUTES: list[MessageSystemAttributeNameType] = [
    "ApproximateReceiveCount",
    "SentTimestamp",
    "ApproximateFirstReceiveTimestamp",
]
#: An SQS request carries at most 256 KiB of messages (older queues' limit; newer ones allow 1 MiB).
MAX_BATCH_BYTES = 256 * 1024
#: Room for our attributes' names and values next to a body, when filling a batch.
_ATTRIBUTES_ALLOWANCE = 200

Prepared = tuple[str, EncodedBody, int]


def wire_body(encoded: EncodedBody) -> str:
    if encoded.data is not None:
        return base64.b64encode(encoded.data).decode("ascii")
    return encoded.text or ""


def batches(prepared: Sequence[Prepared]) -> Iterator[Sequence[Prepared]]:
    """SendMessageBatch requests: at most 10 messages and 256 KiB each."""
    chunk: list[Prepared] = []
    size = 0
    for item in prepared:
        item_size = len(wire_body(item[1]).encode()) + _ATTRIBUTES_ALLOWANCE
        if chunk and (len(chunk) == MAX_MESSAGES_PER_RECEIVE or size + item_size > MAX_BATCH_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(item)
        size += item_size
    if chunk:
        yield chunk


def message_attributes(message_id: str, encoded: EncodedBody) -> Attributes:
    return {
        ATTR_MESSAGE_ID: _string(message_id),
        ATTR_BODY: _string(BODY_BASE64 if encoded.kind == "bytes" else BODY_JSON),
    }


def dead_letter_message(
    message: Received, reason: str, detail: str | None, now: float
) -> tuple[str, Attributes]:
    """The DLQ copy of a delivery: its body, and attributes carrying the reason and its history."""
    encoded = encode_body(message.body)
    attributes = message_attributes(message.message_id, encoded)
    attributes[ATTR_REASON] = _string(reason)
    if detail:
        attributes[ATTR_DETAIL] = _string(detail)
    attributes[ATTR_RECEIVE_COUNT] = _number(message.receive_count)
    attributes[ATTR_ENQUEUED_AT] = _number(int(message.enqueued_at.timestamp() * 1000))
    attributes[ATTR_DEAD_LETTERED_AT] = _number(int(now * 1000))
    return wire_body(encoded), attributes


def received_from(message: MessageTypeDef, *, queue: str, deadline: datetime, max_receives: int) -> Received:
    system = message.get("Attributes", {})
    message_id = _attribute(message, ATTR_MESSAGE_ID) or message["MessageId"]
    return Received(
        message_id=message_id,
        body=_body(message),
        handle=ReceiptHandle(
            queue=queue, message_id=message_id, delivery=message["ReceiptHandle"], invisible_until=deadline
        ),
        receive_count=int(system.get("ApproximateReceiveCount", "1")),
        enqueued_at=_from_millis(system.get("SentTimestamp")) or deadline,
        first_received_at=_from_millis(system.get("ApproximateFirstReceiveTimestamp")) or deadline,
        max_receives=max_receives,
    )


def dead_letter_from(message: MessageTypeDef, *, queue: str) -> DeadLetter:
    count = _attribute(message, ATTR_RECEIVE_COUNT)
    enqueued = _attribute(message, ATTR_ENQUEUED_AT) or message.get("Attributes", {}).get("SentTimestamp")
    return DeadLetter(
        dead_letter_id=message["MessageId"],
        queue=queue,
        message_id=_attribute(message, ATTR_MESSAGE_ID) or message["MessageId"],
        body=_body(message),
        # No reason attribute: SQS moved it by the redrive policy (ADR-009: after max_receives deliveries).
        reason=_attribute(message, ATTR_REASON) or MAX_RECEIVES_EXCEEDED,
        detail=_attribute(message, ATTR_DETAIL),
        receive_count=int(count) if count else None,
        enqueued_at=_from_millis(enqueued),
        dead_lettered_at=_from_millis(_attribute(message, ATTR_DEAD_LETTERED_AT)),
    )


def _body(message: MessageTypeDef) -> Body:
    raw = message.get("Body", "")
    if _attribute(message, ATTR_BODY) == BODY_BASE64:
        return base64.b64decode(raw)
    try:
        return decode_json(raw)
    except (ValueError, MessageBodyInvalid):
        # Not one of ours (sent from a console or another tool): the raw text, for the consumer to judge.
        return raw.encode()


def _attribute(message: MessageTypeDef, name: str) -> str | None:
    value = message.get("MessageAttributes", {}).get(name)
    return value.get("StringValue") if value else None


def _string(value: str) -> MessageAttributeValueTypeDef:
    return {"DataType": "String", "StringValue": value}


def _number(value: int) -> MessageAttributeValueTypeDef:
    return {"DataType": "Number", "StringValue": str(value)}


def _from_millis(value: str | None) -> datetime | None:
    return datetime.fromtimestamp(int(value) / 1000, UTC) if value else None

"""The Queue port (ADR-009) and the values it exchanges.

What every backend guarantees (the shared contract suite in ``tests/integration/queues`` checks each line):

* At-least-once, no ordering (if_resolution_job, if_replay_job, if_accepted_change: "At-least-once. No ordering
  guarantee is assumed."). The queue does not dedupe: two sends with the same ``message_id`` are two messages.
  Consumers dedupe by message id in their inbox and ack only after their transaction commits.
* A received message is invisible for ``visibility_timeout`` seconds. If it is not acked it becomes visible again
  and its next delivery has ``receive_count`` one higher (1 on the first delivery).
* Each delivery has its own ``ReceiptHandle``. ``ack``, ``retry_later`` and ``dead_letter`` act only while that
  delivery is current and within its visibility timeout; with a superseded handle they return False and leave
  the newer delivery alone.
* ``retry_later`` makes the message visible again after a delay; it counts as a failed delivery.
* ``dead_letter`` moves the message to the dead-letter queue at once with a reason (ADR-009: terminal errors such
  as TENANT_MISMATCH, DIGEST_MISMATCH, SCHEMA_INVALID go "straight to the DLQ").
* On the receive that would be delivery ``max_receives + 1`` the message goes to the DLQ instead, with reason
  ``MAX_RECEIVES_EXCEEDED`` (ADR-009: "After 5 failed deliveries the message moves to the dead-letter queue").
* ``dead_letters`` lists the DLQ; ``redrive`` moves entries back as new deliveries (receive_count starts again).

Limits are SQS's, kept by the PostgreSQL backend too so that code written against one runs on the other:
at most 10 messages per receive, a delay of at most 900 s, a visibility timeout of at most 12 h.

Where the backends differ (documented, not part of the contract): SQS standard queues may, rarely, deliver a
message twice even while it is invisible (the AWS guide: "the visibility timeout isn't a guarantee against
receiving a message twice"); PostgreSQL never does. An SQS ``depth`` is approximate. PostgreSQL can enqueue inside
the caller's transaction (``send(conn=...)``); SQS cannot.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from prw_platform.db.database import Connection
from prw_platform.queues.body import Body, JsonObject
from prw_platform.queues.errors import MessageBodyInvalid

#: SQS ReceiveMessage returns at most 10 messages: what a portable consumer asks for.
MAX_MESSAGES_PER_RECEIVE = 10
#: The PostgreSQL queue claims up to this many in one statement (``Queue.receive_limit``).
POSTGRES_RECEIVE_LIMIT = 400
#: SQS DelaySeconds is at most 15 minutes.
MAX_DELAY_SECONDS = 900
#: SQS visibility timeouts are at most 12 hours.
MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200
#: SQS long polling waits at most 20 s.
MAX_WAIT_SECONDS = 20

#: ADR-009: the reason recorded when a message is dead-lettered for having been received too often.
MAX_RECEIVES_EXCEEDED = "MAX_RECEIVES_EXCEEDED"

_QUEUE_NAME = re.compile(r"^[a-z][a-z0-9-]{0,59}$")
# The seed's error codes (TENANT_MISMATCH, SCOPE_NOT_PROJECTED, ...).
_REASON = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_MAX_MESSAGE_ID_LENGTH = 256
_MAX_DETAIL_LENGTH = 1_000


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    body: Body
    #: The dedupe key consumers record in their inbox (if_resolution_job: ``capture_id:stage:attempt_group``).
    message_id: str | None = None
    delay_seconds: int = 0


@dataclass(frozen=True, slots=True)
class ReceiptHandle:
    """One delivery of one message. ``delivery`` is opaque: a per-delivery token (PostgreSQL) or the SQS
    receipt handle."""

    queue: str
    message_id: str
    delivery: str
    #: When this delivery's visibility timeout ends (the backend's own clock for PostgreSQL; for SQS the local
    #: clock, read before the receive request was sent, so never later than the server's).
    invisible_until: datetime


@dataclass(frozen=True, slots=True)
class Received:
    message_id: str
    body: Body
    handle: ReceiptHandle
    #: 1 on the first delivery.
    receive_count: int
    enqueued_at: datetime
    first_received_at: datetime
    max_receives: int

    @property
    def is_final_delivery(self) -> bool:
        """Seed 004: cleanup marks a file failed only on "the final permitted retry after earlier failures"."""
        return self.receive_count >= self.max_receives

    def json(self) -> JsonObject:
        if isinstance(self.body, bytes):
            raise MessageBodyInvalid(f"message {self.message_id} has a bytes body, not JSON")
        return self.body


@dataclass(frozen=True, slots=True)
class DeadLetter:
    #: Identifies this DLQ entry for ``redrive`` (not the message id: one message may be dead-lettered twice).
    dead_letter_id: str
    queue: str
    message_id: str
    body: Body
    reason: str
    detail: str | None
    #: Deliveries before it was dead-lettered; None where the backend cannot tell (SQS's own redrive).
    receive_count: int | None
    enqueued_at: datetime | None
    dead_lettered_at: datetime | None


@dataclass(frozen=True, slots=True)
class QueueDepth:
    queue: str
    visible: int
    in_flight: int
    delayed: int
    dead: int
    #: SQS counts are approximate (eventually consistent); PostgreSQL counts are exact.
    approximate: bool

    @property
    def not_visible(self) -> int:
        """In flight plus delayed: a message put back by ``retry_later`` is "delayed" in PostgreSQL and
        "in flight" in SQS (ChangeMessageVisibility), so portable code looks at the sum."""
        return self.in_flight + self.delayed


class Queue(Protocol):
    """One named queue and its dead-letter queue."""

    @property
    def name(self) -> str: ...

    @property
    def max_receives(self) -> int: ...

    @property
    def transactional_send(self) -> bool:
        """True when ``send(conn=...)`` enqueues inside the caller's database transaction."""
        ...

    @property
    def receive_limit(self) -> int:
        """The most ``max_messages`` one ``receive`` takes: ``MAX_MESSAGES_PER_RECEIVE`` (10) on SQS,
        ``POSTGRES_RECEIVE_LIMIT`` on PostgreSQL, where a receive is one statement whatever its size. A
        consumer that batches asks for this many rather than looping over receives of 10."""
        ...

    def send(
        self,
        body: Body,
        *,
        message_id: str | None = None,
        delay_seconds: int = 0,
        conn: Connection | None = None,
    ) -> str:
        """Enqueue one message; return its message id (``message_id`` or a generated one). With ``conn`` the
        message is part of that transaction: it exists only if the caller commits."""
        ...

    def send_batch(
        self, messages: Sequence[OutgoingMessage], *, conn: Connection | None = None
    ) -> list[str]: ...

    def receive(
        self,
        max_messages: int = 1,
        *,
        visibility_timeout: int | None = None,
        wait_seconds: int = 0,
    ) -> list[Received]:
        """Up to ``max_messages`` visible messages (possibly fewer, even when more are visible), each invisible
        for ``visibility_timeout`` seconds (default: the queue's). ``wait_seconds`` > 0 waits that long for a
        first message when none is visible (SQS long polling)."""
        ...

    def ack(self, handle: ReceiptHandle) -> bool:
        """Delete the message of this delivery (ADR-009: only after the consumer's transaction committed).
        False when the delivery is no longer current: the message will be (or was) delivered again."""
        ...

    def ack_batch(self, handles: Sequence[ReceiptHandle]) -> list[bool]:
        """``ack`` for several deliveries at once (one statement on PostgreSQL); one answer per handle, in
        order."""
        ...

    def retry_later(self, handle: ReceiptHandle, delay_seconds: int) -> bool:
        """Make the message visible again after ``delay_seconds`` (a retryable failure, e.g. STORAGE_UNAVAILABLE)."""
        ...

    def dead_letter(self, message: Received, reason: str, *, detail: str | None = None) -> bool:
        """Move this delivery's message to the DLQ now (a terminal error); ``reason`` is the seed's code. It takes
        the whole ``Received``, not just the handle: SQS moves a message by re-sending its body to the DLQ."""
        ...

    def dead_letters(self, limit: int = 100) -> list[DeadLetter]: ...

    def redrive(self, dead_letter_ids: Sequence[str]) -> int:
        """Move these DLQ entries back to the queue as new messages; return how many were moved."""
        ...

    def discard(self, dead_letter_ids: Sequence[str]) -> int:
        """Delete these DLQ entries (an operator looked at them and nothing is to be re-done); how many went."""
        ...

    def depth(self) -> QueueDepth: ...


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def check_queue_name(name: str) -> str:
    if not _QUEUE_NAME.match(name):
        raise ValueError(f"invalid queue name {name!r}: lowercase letters, digits and '-', at most 60")
    return name


def check_message_id(message_id: str | None) -> str:
    if message_id is None:
        return new_message_id()
    if not message_id or len(message_id) > _MAX_MESSAGE_ID_LENGTH or not message_id.isprintable():
        raise ValueError(
            f"invalid message id {message_id!r}: 1..{_MAX_MESSAGE_ID_LENGTH} printable characters"
        )
    return message_id


def check_delay(delay_seconds: int) -> int:
    if not 0 <= delay_seconds <= MAX_DELAY_SECONDS:
        raise ValueError(f"delay_seconds must be 0..{MAX_DELAY_SECONDS}, not {delay_seconds}")
    return delay_seconds


def check_visibility_timeout(seconds: int) -> int:
    if not 0 <= seconds <= MAX_VISIBILITY_TIMEOUT_SECONDS:
        raise ValueError(f"visibility_timeout must be 0..{MAX_VISIBILITY_TIMEOUT_SECONDS}, not {seconds}")
    return seconds


def check_receive(max_messages: int, wait_seconds: int, limit: int = MAX_MESSAGES_PER_RECEIVE) -> None:
    if not 1 <= max_messages <= limit:
        raise ValueError(f"max_messages must be 1..{limit}, not {max_messages}")
    if not 0 <= wait_seconds <= MAX_WAIT_SECONDS:
        raise ValueError(f"wait_seconds must be 0..{MAX_WAIT_SECONDS}, not {wait_seconds}")


def check_max_receives(max_receives: int) -> int:
    # SQS maxReceiveCount is 1..1000.
    if not 1 <= max_receives <= 1000:
        raise ValueError(f"max_receives must be 1..1000, not {max_receives}")
    return max_receives


def check_reason(reason: str, detail: str | None) -> None:
    if not _REASON.match(reason):
        raise ValueError(f"a dead-letter reason is an error code like TENANT_MISMATCH, not {reason!r}")
    if detail is not None and len(detail) > _MAX_DETAIL_LENGTH:
        raise ValueError(f"a dead-letter detail is at most {_MAX_DETAIL_LENGTH} characters")

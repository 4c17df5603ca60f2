"""Queue errors (ADR-009). Each carries ``code`` and ``retryable`` so a consumer loop decides retry-or-DLQ from
the error, never from its type."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class QueueError(CodedError):
    code = "QUEUE_ERROR"


class QueueUnavailable(QueueError):
    """The queue backend could not be reached or throttled us (if_resolution_job: "R2 or DB unavailable" is
    retryable; the producer retries the send, the consumer leaves the message to reappear)."""

    code = "QUEUE_UNAVAILABLE"
    retryable = True


class QueueNotFound(QueueError):
    """The SQS queue does not exist: ``ensure_queues()`` was not run for this deployment."""

    code = "QUEUE_NOT_FOUND"


class MessageBodyInvalid(QueueError, ValueError):
    """The body cannot travel unchanged through both backends (not a JSON object that round-trips, NaN, or too
    large)."""

    code = "MESSAGE_BODY_INVALID"


class TransactionalSendUnsupported(QueueError, ValueError):
    """``send(conn=...)`` on a backend that cannot join a database transaction (SQS). Callers that must work on
    both backends enqueue after commit and let a sweeper re-enqueue (AW-02)."""

    code = "TRANSACTIONAL_SEND_UNSUPPORTED"

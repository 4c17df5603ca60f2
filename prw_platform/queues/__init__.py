"""The Queue port (ADR-009) and its two backends: PostgreSQL (embedded default) and SQS.

``build_queue(settings, name, db=...)`` is the one place a backend is chosen; nothing connects at import time.
``ensure_queues(settings)`` creates the SQS queues and their DLQs (PostgreSQL needs nothing beyond migration 0002).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.queues.body import MAX_BODY_BYTES, Body, JsonObject
from prw_platform.queues.errors import (
    MessageBodyInvalid,
    QueueError,
    QueueNotFound,
    QueueUnavailable,
    TransactionalSendUnsupported,
)
from prw_platform.queues.names import (
    ACCEPTED_CHANGES,
    CATALOG_FILE_CLEANUP,
    PLATFORM_QUEUE_NAMES,
    PLATFORM_QUEUES,
    RESOLUTION_IDENTITY,
    RESOLUTION_JOBS,
    RESOLUTION_NORMALIZE,
    RESOLUTION_REPLAYS,
    RESOLUTION_STAGE_QUEUES,
    QueueSpec,
    dead_letter_queue_name,
)
from prw_platform.queues.port import (
    MAX_DELAY_SECONDS,
    MAX_MESSAGES_PER_RECEIVE,
    MAX_RECEIVES_EXCEEDED,
    MAX_VISIBILITY_TIMEOUT_SECONDS,
    POSTGRES_RECEIVE_LIMIT,
    DeadLetter,
    OutgoingMessage,
    Queue,
    QueueDepth,
    ReceiptHandle,
    Received,
)
from prw_platform.queues.postgres import PostgresQueue

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

    from prw_platform.queues.sqs import SqsQueue
    from prw_platform.queues.sqs_client import QueueUrls, build_sqs_client
    from prw_platform.queues.sqs_client import ensure_queues as ensure_sqs_queues

#: The SQS backend (boto3 and botocore) is imported when it is chosen, as the S3 store is
#: (``prw_platform.storage``): every process of the platform imports this package, most never talk to SQS.
_LAZY_SQS_NAMES = {
    "SqsQueue": ("prw_platform.queues.sqs", "SqsQueue"),
    "QueueUrls": ("prw_platform.queues.sqs_client", "QueueUrls"),
    "build_sqs_client": ("prw_platform.queues.sqs_client", "build_sqs_client"),
    "ensure_sqs_queues": ("prw_platform.queues.sqs_client", "ensure_queues"),
}

__all__ = [
    "ACCEPTED_CHANGES",
    "CATALOG_FILE_CLEANUP",
    "MAX_BODY_BYTES",
    "MAX_DELAY_SECONDS",
    "MAX_MESSAGES_PER_RECEIVE",
    "MAX_RECEIVES_EXCEEDED",
    "MAX_VISIBILITY_TIMEOUT_SECONDS",
    "PLATFORM_QUEUES",
    "PLATFORM_QUEUE_NAMES",
    "POSTGRES_RECEIVE_LIMIT",
    "RESOLUTION_IDENTITY",
    "RESOLUTION_JOBS",
    "RESOLUTION_NORMALIZE",
    "RESOLUTION_REPLAYS",
    "RESOLUTION_STAGE_QUEUES",
    "Body",
    "DeadLetter",
    "JsonObject",
    "MessageBodyInvalid",
    "OutgoingMessage",
    "PostgresQueue",
    "Queue",
    "QueueDepth",
    "QueueError",
    "QueueNotFound",
    "QueueSpec",
    "QueueUnavailable",
    "QueueUrls",
    "ReceiptHandle",
    "Received",
    "SqsQueue",
    "TransactionalSendUnsupported",
    "build_queue",
    "build_sqs_client",
    "dead_letter_queue_name",
    "ensure_queues",
    "ensure_sqs_queues",
]


def build_queue(
    settings: Settings,
    name: str,
    *,
    db: Database | None = None,
    sqs_client: SQSClient | None = None,
) -> Queue:
    """The queue ``name`` on the configured backend. PostgreSQL needs the caller's ``Database``: its role
    (resolver_app, resolver_relay, product_app) decides what the queue may do there."""
    if settings.queue_backend == "sqs":
        from prw_platform.queues.sqs import SqsQueue
        from prw_platform.queues.sqs_client import build_sqs_client

        return SqsQueue(
            sqs_client or build_sqs_client(settings.sqs),
            name,
            prefix=settings.sqs.queue_prefix,
            max_receives=settings.queue_max_receives,
            visibility_timeout=settings.queue_visibility_timeout_seconds,
        )
    if db is None:
        raise ValueError("the PostgreSQL queue needs a Database (the role of the service that uses it)")
    return PostgresQueue(
        db,
        name,
        max_receives=settings.queue_max_receives,
        visibility_timeout=settings.queue_visibility_timeout_seconds,
    )


def ensure_queues(
    settings: Settings,
    names: Iterable[str] = PLATFORM_QUEUE_NAMES,
    *,
    sqs_client: SQSClient | None = None,
) -> dict[str, QueueUrls]:
    """Create the SQS queues and DLQs with the redrive policy (``maxReceiveCount = queue_max_receives``).
    A no-op returning ``{}`` on PostgreSQL, whose queue tables come from migration 0002."""
    if settings.queue_backend != "sqs":
        return {}
    from prw_platform.queues.sqs_client import build_sqs_client
    from prw_platform.queues.sqs_client import ensure_queues as ensure_sqs_queues

    return ensure_sqs_queues(
        sqs_client or build_sqs_client(settings.sqs),
        names,
        prefix=settings.sqs.queue_prefix,
        max_receives=settings.queue_max_receives,
        visibility_timeout=settings.queue_visibility_timeout_seconds,
    )


def __getattr__(name: str) -> object:
    if name in _LAZY_SQS_NAMES:
        module, attribute = _LAZY_SQS_NAMES[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""SQS plumbing: the client, queue creation with the DLQ redrive policy, attribute names and error mapping."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from prw_platform.config import SqsSettings
from prw_platform.queues.errors import QueueError, QueueNotFound, QueueUnavailable
from prw_platform.queues.names import dead_letter_queue_name
from prw_platform.queues.port import check_max_receives, check_queue_name, check_visibility_timeout

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.literals import QueueAttributeNameType

#: SQS keeps a message at most 14 days; dead letters wait for an operator that long.
DLQ_RETENTION_SECONDS = 14 * 24 * 3600
#: Long polling waits up to 20 s, so the read timeout must be longer.
DEFAULT_READ_TIMEOUT_SECONDS = 30.0
DEFAULT_CONNECT_TIMEOUT_SECONDS = 5.0
DEFAULT_MAX_ATTEMPTS = 3

_NOT_FOUND_CODES = frozenset({"QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"})
_EXISTS_CODES = frozenset({"QueueAlreadyExists", "QueueNameExists"})
_RETRYABLE_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "RequestThrottled",
        "ServiceUnavailable",
        "InternalError",
        "KmsThrottled",
    }
)


@dataclass(frozen=True, slots=True)
class QueueUrls:
    queue_url: str
    dead_letter_url: str
    dead_letter_arn: str


def build_sqs_client(
    settings: SqsSettings,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS,
    read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> SQSClient:
    """An SQS client from settings. Keys left unset fall back to boto3's default credential chain."""
    secret = settings.secret_access_key.get_secret_value() if settings.secret_access_key else None
    config = Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"mode": "standard", "total_max_attempts": max_attempts},
    )
    return boto3.client(
        "sqs",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region,
        aws_access_key_id=settings.access_key_id,
        aws_secret_access_key=secret,
        config=config,
    )


def ensure_queues(
    client: SQSClient,
    names: Iterable[str],
    *,
    prefix: str,
    max_receives: int,
    visibility_timeout: int,
) -> dict[str, QueueUrls]:
    """Create each queue and its DLQ, or bring existing ones to these settings. Idempotent; run it at deploy or
    start-up (``prw queues ensure``), never at import.

    ADR-009: the redrive policy's ``maxReceiveCount`` is ``max_receives`` (PROP 5)."""
    check_max_receives(max_receives)
    check_visibility_timeout(visibility_timeout)
    created: dict[str, QueueUrls] = {}
    for name in names:
        dlq_url = _create_or_update(
            client,
            f"{prefix}{dead_letter_queue_name(check_queue_name(name))}",
            {"MessageRetentionPeriod": str(DLQ_RETENTION_SECONDS)},
        )
        with sqs_errors():
            dlq_arn = client.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])[
                "Attributes"
            ]["QueueArn"]
        redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receives)})
        queue_url = _create_or_update(
            client,
            f"{prefix}{name}",
            {"VisibilityTimeout": str(visibility_timeout), "RedrivePolicy": redrive},
        )
        created[name] = QueueUrls(queue_url, dlq_url, dlq_arn)
    return created


def _create_or_update(
    client: SQSClient, queue_name: str, attributes: dict[QueueAttributeNameType, str]
) -> str:
    try:
        with sqs_errors(passthrough=_EXISTS_CODES):
            return client.create_queue(QueueName=queue_name, Attributes=attributes)["QueueUrl"]
    except ClientError:
        # It exists with other attributes (e.g. max_receives changed): update them in place.
        with sqs_errors():
            url = client.get_queue_url(QueueName=queue_name)["QueueUrl"]
            client.set_queue_attributes(QueueUrl=url, Attributes=attributes)
        return url


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


@contextlib.contextmanager
def sqs_errors(*, passthrough: frozenset[str] = frozenset()) -> Iterator[None]:
    """Translate boto errors into the queue's: network trouble, throttling and 5xx are retryable
    ``QueueUnavailable``; a missing queue is ``QueueNotFound``. Codes in ``passthrough`` are re-raised as is."""
    try:
        yield
    except ClientError as exc:
        code = error_code(exc)
        if code in passthrough:
            raise
        if code in _NOT_FOUND_CODES:
            raise QueueNotFound(f"SQS queue not found (run ensure_queues): {exc}") from exc
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
        if code in _RETRYABLE_CODES or status >= 500:
            raise QueueUnavailable(f"SQS unavailable: {exc}") from exc
        raise QueueError(f"SQS refused the request: {exc}") from exc
    except BotoCoreError as exc:
        raise QueueUnavailable(f"SQS unreachable: {exc}") from exc

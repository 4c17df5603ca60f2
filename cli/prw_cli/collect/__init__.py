"""The collector client the platform ships: use it as a library, or as ``prw collect`` (docs/collectors.md).

from prw_cli.collect import CollectorClient, collect, pages_from

with CollectorClient("https://intake.example", client_id, client_secret) as client:
    run = collect(client, pages_from([Path("pages/")], url_base="https://shop.example/p"), "src_shop")
"""

from prw_cli.collect.client import (
    Captured,
    CollectorClient,
    Registration,
    RetryEvent,
    Uploaded,
    capture_key,
)
from prw_cli.collect.errors import CREDENTIAL_REVOKED, CredentialRevoked, IntakeError
from prw_cli.collect.flow import (
    FETCH_FAILURES,
    CollectRun,
    Heartbeats,
    Page,
    PageOutcome,
    ReceiptPolling,
    RunReport,
    collect,
    pages_from,
)
from prw_cli.collect.retry import RetryPolicy, is_retryable_status, parse_retry_after

__all__ = [
    "CREDENTIAL_REVOKED",
    "FETCH_FAILURES",
    "Captured",
    "CollectRun",
    "CollectorClient",
    "CredentialRevoked",
    "Heartbeats",
    "IntakeError",
    "Page",
    "PageOutcome",
    "ReceiptPolling",
    "Registration",
    "RetryEvent",
    "RetryPolicy",
    "RunReport",
    "Uploaded",
    "capture_key",
    "collect",
    "is_retryable_status",
    "pages_from",
    "parse_retry_after",
]

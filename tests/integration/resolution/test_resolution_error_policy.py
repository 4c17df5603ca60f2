"""Retry or DLQ is decided from an error's ``code`` and ``retryable`` (if_resolution_job: "Retryable: R2 or DB
unavailable ... Not retryable: schema invalid, artifact sha256 mismatch, tenant mismatch → DLQ immediately"),
and retries back off (no database needed)."""

from __future__ import annotations

import pytest

from prw_platform.db.errors import DatabaseUnavailable, InsufficientPrivilege
from prw_platform.plugins import UnknownAdapterVersion, UnknownProfileVersion
from prw_platform.resolver.decisions import (
    HistoryEpochFenced,
    IdempotencyConflict,
    IdentifierConflict,
    InvariantViolation,
    StreamNotOpen,
)
from prw_platform.resolver.resolution import JobRejected, RetryPolicy
from prw_platform.resolver.resolution.outcomes import outcome_for_error
from prw_platform.storage import DigestMismatch, ObjectNotFound, StorageUnavailable, TenantScopeDenied


class LowercaseCode(Exception):
    code = "not-a-code"


class ProviderFailure(Exception):
    """What an outside provider's client raises (if_llm_extract: "429 RATE_LIMITED — retry. 5xx PROVIDER_ERROR —
    retry"): a code and ``retryable``, like every error the stages classify."""

    retryable = True

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@pytest.mark.parametrize(
    ("error", "disposition", "reason"),
    [
        (StorageUnavailable("R2 down"), "retry", "STORAGE_UNAVAILABLE"),
        (DatabaseUnavailable("no connection"), "retry", "DB_UNAVAILABLE"),
        (ProviderFailure("RATE_LIMITED"), "retry", "RATE_LIMITED"),
        (ProviderFailure("PROVIDER_ERROR"), "retry", "PROVIDER_ERROR"),
        (IdentifierConflict("gtin", "00012345678905", "itm_a"), "retry", "IDENTIFIER_CONFLICT"),
        # A new history epoch between locating the stream and locking its cursor: the next delivery finds it.
        (StreamNotOpen("no cursor"), "retry", "STREAM_NOT_OPEN"),
        (HistoryEpochFenced("superseded"), "retry", "HISTORY_EPOCH_FENCED"),
        (DigestMismatch("bytes differ"), "dead_letter", "DIGEST_MISMATCH"),
        (TenantScopeDenied("ref outside tenant"), "dead_letter", "TENANT_MISMATCH"),
        (ObjectNotFound("gone"), "dead_letter", "OBJECT_NOT_FOUND"),
        (UnknownAdapterVersion("pa_x@9.9.9"), "dead_letter", "UNKNOWN_ADAPTER_VERSION"),
        (UnknownProfileVersion("np_x@99"), "dead_letter", "UNKNOWN_PROFILE_VERSION"),
        (
            JobRejected("PREVIOUS_STAGE_MISSING", "no extract results"),
            "dead_letter",
            "PREVIOUS_STAGE_MISSING",
        ),
        (InvariantViolation("INV-02", "bad value"), "dead_letter", "INVARIANT_VIOLATION"),
        (IdempotencyConflict("key reused"), "dead_letter", "IDEMPOTENCY_CONFLICT"),
        (InsufficientPrivilege("42501"), "dead_letter", "INSUFFICIENT_PRIVILEGE"),
        # No code: a bug or an unexpected library error is retried; the receive limit ends it (ADR-009).
        (KeyError("listing"), "retry", "INTERNAL_ERROR"),
        (LowercaseCode("odd"), "retry", "INTERNAL_ERROR"),
    ],
)
def test_error_code_and_retryable_decide_retry_or_dead_letter(
    error: Exception, disposition: str, reason: str
) -> None:
    outcome = outcome_for_error(error, "cap_1:extract:1")

    assert (outcome.disposition, outcome.reason, outcome.job_id) == (disposition, reason, "cap_1:extract:1")


def test_retry_delay_doubles_per_delivery_up_to_the_queue_limit() -> None:
    policy = RetryPolicy(base_seconds=5, max_seconds=900)

    assert [policy.delay(n) for n in (1, 2, 3, 4, 5, 8, 9, 1000)] == [5, 10, 20, 40, 80, 640, 900, 900]

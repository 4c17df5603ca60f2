"""What handling one resolution job came to, and what the queue is told (if_resolution_job, ADR-009).

``Outcome.status`` uses the seed's recorded outcome words (``stage_completed``, ``review_case_opened``,
``ignored_duplicate``) plus ``dead_lettered`` and ``retry_later``; ``disposition`` is what the batch driver does
with the delivery. Errors are classified by their ``code`` and ``retryable`` attributes (the storage, database
and decision errors all carry both), never by their type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

Disposition = Literal["ack", "retry", "dead_letter"]

STAGE_COMPLETED: Final = "stage_completed"
REVIEW_CASE_OPENED: Final = "review_case_opened"
IGNORED_DUPLICATE: Final = "ignored_duplicate"
DEAD_LETTERED: Final = "dead_lettered"
RETRY_LATER: Final = "retry_later"

# if_resolution_job's terminal codes (DLQ immediately, no retry).
SCHEMA_INVALID: Final = "SCHEMA_INVALID"
TENANT_MISMATCH: Final = "TENANT_MISMATCH"
DIGEST_MISMATCH: Final = "DIGEST_MISMATCH"
# Terminal codes of this consumer beyond the seed's table (docs/operators/resolution.md says what to do).
UNKNOWN_ADAPTER_VERSION: Final = "UNKNOWN_ADAPTER_VERSION"
UNKNOWN_PROFILE_VERSION: Final = "UNKNOWN_PROFILE_VERSION"
CAPTURE_WITHOUT_ARTIFACTS: Final = "CAPTURE_WITHOUT_ARTIFACTS"
#: A normalize or identity job whose earlier stage has no committed results: the next job is only ever written in
#: the transaction that writes them, so the message was forged or misrouted (docs/operators/resolution.md).
PREVIOUS_STAGE_MISSING: Final = "PREVIOUS_STAGE_MISSING"
#: A retryable failure whose cause carries no code (a bug, an unexpected library error): retried with backoff,
#: so the queue's receive limit (MAX_RECEIVES_EXCEEDED) ends it if it does not go away.
INTERNAL_ERROR: Final = "INTERNAL_ERROR"

#: Decision errors that are not retryable for a reviewer but are for this consumer: the stream moved to a new
#: history epoch (or its cursor is not open yet) between reading the current epoch and locking the cursor; the
#: next delivery resolves the current stream again.
RETRYABLE_DECISION_CODES: Final = frozenset({"STREAM_NOT_OPEN", "HISTORY_EPOCH_FENCED"})
#: if_object_storage: a ref outside the caller's tenant is TENANT_SCOPE_DENIED; for this consumer it means the
#: capture's artifact rows name another tenant's object (INV-06), handled like a tenant mismatch.
TENANT_SCOPE_DENIED: Final = "TENANT_SCOPE_DENIED"


#: A dead-letter reason is an error code (the queue port refuses anything else).
_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


class JobRejected(Exception):
    """A terminal failure of one job: the message goes to the DLQ with ``code`` (never retried)."""

    retryable = False

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str
    job_id: str | None = None
    #: The stage that handled the message (extract, normalize, identity); None for a schema-invalid one.
    stage: str | None = None
    #: The next stage's job this stage handed on (extract and normalize, when they completed).
    next_job_id: str | None = None
    #: The DLQ reason or the code of a retryable failure.
    reason: str | None = None
    detail: str | None = None
    #: How far extraction got: extracted, no_adapter, extraction_failed, normalization_failed.
    stage_outcome: str | None = None
    #: The decision's action: create_item_and_map, map_listing or open_review_case.
    decision: str | None = None
    decision_id: str | None = None
    item_id: str | None = None
    listing_id: str | None = None
    case_id: str | None = None

    @property
    def disposition(self) -> Disposition:
        if self.status == DEAD_LETTERED:
            return "dead_letter"
        if self.status == RETRY_LATER:
            return "retry"
        return "ack"

    @classmethod
    def dead_letter(cls, reason: str, detail: str, job_id: str | None) -> Outcome:
        return cls(DEAD_LETTERED, job_id=job_id, reason=reason, detail=detail)

    @classmethod
    def retry(cls, reason: str, detail: str, job_id: str | None) -> Outcome:
        return cls(RETRY_LATER, job_id=job_id, reason=reason, detail=detail)


def outcome_for_error(error: BaseException, job_id: str | None) -> Outcome:
    """Retry or dead-letter, from the error's ``code`` and ``retryable`` (STYLE.md: never from its type)."""
    code = getattr(error, "code", None)
    detail = str(error) or type(error).__name__
    if not isinstance(code, str) or not _CODE.fullmatch(code):
        return Outcome.retry(INTERNAL_ERROR, f"{type(error).__name__}: {detail}", job_id)
    if code == TENANT_SCOPE_DENIED:
        return Outcome.dead_letter(TENANT_MISMATCH, detail, job_id)
    if getattr(error, "retryable", False) is True or code in RETRYABLE_DECISION_CODES:
        return Outcome.retry(code, detail, job_id)
    return Outcome.dead_letter(code, detail, job_id)

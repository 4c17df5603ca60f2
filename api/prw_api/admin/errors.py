"""How the admin origin answers a decision error, for the JSON API and the console alike: the seed's status and
code (if_review_decision, issue 8 releases)."""

from __future__ import annotations

from prw_api.errors import ApiError
from prw_platform.errors import CaseNotFound, DecisionError, InvalidReviewDecision

#: The admin origin's code of a request the platform refuses before the route runs.
VALIDATION_FAILED = "VALIDATION_FAILED"
#: if_review_decision: "503 UNAVAILABLE — retry. Same Idempotency-Key".
UNAVAILABLE = "UNAVAILABLE"

_DECISION_STATUS = {
    "NOT_FOUND": 404,
    "NOTHING_TO_RELEASE": 409,
    "STALE_CASE_REVISION": 409,
    "INVARIANT_VIOLATION": 409,
    "IDEMPOTENCY_CONFLICT": 409,
    "ITEM_EXISTS": 409,
    "IDENTIFIER_CONFLICT": 409,
    "SOURCE_NOT_IN_CATALOG": 409,
    "ITEM_RETIRED": 409,
    "MERCHANT_NOT_FOUND": 404,
    "INVALID_MERCHANT_FACT": 422,
    "STREAM_NOT_OPEN": 503,
    "HISTORY_EPOCH_FENCED": 503,
}


def decision_error(error: DecisionError) -> ApiError:
    if isinstance(error, CaseNotFound):
        return ApiError(404, "NOT_FOUND", str(error))
    if isinstance(error, InvalidReviewDecision):
        return ApiError(422, VALIDATION_FAILED, str(error))
    status = _DECISION_STATUS.get(error.code, 409)
    if status == 503:
        return ApiError(503, UNAVAILABLE, str(error), retryable=True)
    return ApiError(status, error.code, str(error), retryable=error.retryable)

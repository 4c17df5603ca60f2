"""Every core error reaches HTTP through one function (``prw_api.errors.from_core_error``) from what the error
carries: the decision errors answer if_review_decision's statuses and codes, a stream that is not open or is fenced
is 503 UNAVAILABLE (retry), and the database's failures are each origin's own."""

from __future__ import annotations

import pytest

from prw_api.errors import ApiError, from_core_error
from prw_platform.db.errors import DatabaseUnavailable, InsufficientPrivilege, InvalidData
from prw_platform.errors import CodedError
from prw_platform.queues.errors import QueueUnavailable
from prw_platform.resolver.catalogs import StreamNotProvisioned
from prw_platform.resolver.decisions.errors import (
    CaseNotFound,
    CatalogNotFound,
    DecisionError,
    IdempotencyConflict,
    IdentifierConflict,
    InvalidMerchantFact,
    ItemAlreadyRetired,
    ItemExists,
    ItemNotFound,
    MerchantNotFound,
    NothingToRelease,
    SourceNotInCatalog,
    StaleCaseRevision,
)
from prw_platform.resolver.decisions.review import InvalidReviewDecision
from prw_platform.resolver.stream.errors import HistoryEpochFenced, StreamNotOpen


@pytest.mark.parametrize(
    ("error", "status", "code", "retryable"),
    [
        (StaleCaseRevision("rc_a", 1, 2), 409, "STALE_CASE_REVISION", False),
        (CaseNotFound("no review case rc_a"), 404, "NOT_FOUND", False),
        (CatalogNotFound("no catalog"), 404, "NOT_FOUND", False),
        (ItemNotFound("no item"), 404, "NOT_FOUND", False),
        (MerchantNotFound("no merchant"), 404, "MERCHANT_NOT_FOUND", False),
        (InvalidMerchantFact("bad rate"), 422, "INVALID_MERCHANT_FACT", False),
        (InvalidReviewDecision("map_to needs an item"), 422, "VALIDATION_FAILED", False),
        (NothingToRelease("all released"), 409, "NOTHING_TO_RELEASE", False),
        (IdempotencyConflict("other body"), 409, "IDEMPOTENCY_CONFLICT", False),
        (ItemExists("taken"), 409, "ITEM_EXISTS", False),
        (IdentifierConflict("gtin", "1", "itm_a"), 409, "IDENTIFIER_CONFLICT", True),
        (SourceNotInCatalog("other catalog"), 409, "SOURCE_NOT_IN_CATALOG", False),
        (ItemAlreadyRetired("final"), 409, "ITEM_RETIRED", False),
        (DecisionError("refused"), 409, "DECISION_REJECTED", False),
        (StreamNotOpen("no cursor"), 503, "UNAVAILABLE", True),
        (HistoryEpochFenced("superseded"), 503, "UNAVAILABLE", True),
        (StreamNotProvisioned("no epoch"), 503, "UNAVAILABLE", True),
    ],
)
def test_a_decision_error_answers_its_seed_status_and_code_with_its_own_message(
    error: CodedError, status: int, code: str, retryable: bool
) -> None:
    answered = from_core_error(error)

    assert (answered.status, answered.code, answered.message, answered.retryable) == (
        status,
        code,
        str(error),
        retryable,
    )


def test_the_core_code_stays_the_cause_where_the_edge_answers_a_broader_one() -> None:
    # The resolution consumer retries by the core's code (STREAM_NOT_OPEN), the reviewer sees UNAVAILABLE.
    assert (StreamNotOpen.code, StreamNotOpen.http_code) == ("STREAM_NOT_OPEN", "UNAVAILABLE")


def test_the_database_failures_are_the_origins_own() -> None:
    admin = ApiError(503, "UNAVAILABLE", "the database is unavailable; retry", retryable=True)

    assert from_core_error(DatabaseUnavailable("down")).code == "STORAGE_UNAVAILABLE"
    assert from_core_error(DatabaseUnavailable("down"), database_unavailable=admin) is admin
    refused = from_core_error(InvalidData("NUL in text"), validation_code="INVALID_QUERY")
    assert (refused.status, refused.code) == (422, "INVALID_QUERY")


@pytest.mark.parametrize(
    "error", [InsufficientPrivilege("role"), QueueUnavailable("down"), ValueError("bug")]
)
def test_an_error_without_an_http_status_is_an_unexpected_500(error: Exception) -> None:
    answered = from_core_error(error)

    assert (answered.status, answered.code, answered.message) == (500, "INTERNAL", "internal error")

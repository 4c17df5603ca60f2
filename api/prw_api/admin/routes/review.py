"""if_review_read: ``GET /v1/review`` (the queue) and ``GET /v1/review/{case_id}`` (one case).

Role viewer or higher in the active tenant (or the ``X-PRW-Tenant`` membership); only that tenant's cases.
Errors: 401 SESSION_EXPIRED, 403 TENANT_SCOPE_DENIED, 404 NOT_FOUND (no such case in the tenant), 422
INVALID_CURSOR (a cursor the server did not issue, or issued for other filters) and 422 VALIDATION_FAILED.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from prw_api.admin.deps import ReviewDep, ViewerDep
from prw_api.admin.review_models import CaseStatus, ReviewCaseBody, ReviewPageBody
from prw_api.errors import ErrorBody
from prw_api.routing import PlatformRoute
from prw_platform.services import ReviewFilters

router = APIRouter(tags=["review"], route_class=PlatformRoute)

_ERRORS: dict[int | str, dict[str, Any]] = {status: {"model": ErrorBody} for status in (401, 403, 422, 503)}

#: Filter values: short, printable names (kinds and source ids).
_NAME = r"^[\x21-\x7e]{1,200}$"


@router.get("/v1/review", operation_id="listReviewCases", response_model=ReviewPageBody, responses=_ERRORS)
def list_review_cases(
    access: ViewerDep,
    review: ReviewDep,
    status: CaseStatus | None = None,
    kind: Annotated[str | None, Query(pattern=_NAME)] = None,
    source: Annotated[str | None, Query(pattern=_NAME)] = None,
    cursor: Annotated[str | None, Query(min_length=1, max_length=1000)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> ReviewPageBody:
    filters = ReviewFilters(status=status, kind=kind, source_id=source)
    return ReviewPageBody.model_validate(review.page(access.tenant_id, filters, cursor=cursor, limit=limit))


@router.get(
    "/v1/review/{case_id}",
    operation_id="getReviewCase",
    response_model=ReviewCaseBody,
    responses={**_ERRORS, 404: {"model": ErrorBody}},
)
def get_review_case(
    access: ViewerDep, review: ReviewDep, case_id: Annotated[str, Path(max_length=200)]
) -> ReviewCaseBody:
    return ReviewCaseBody.of(review.case(access.tenant_id, case_id))

"""if_review_decision: ``POST /v1/decisions`` (AW-01 for humans).

Role reviewer in the active tenant, with the session's CSRF token; the actor is the session's operator
(``reviewer:<subject>``), never a body field, so no rule and no LLM can call it. ``Idempotency-Key`` (optional):
a retry with the same key and body returns the first decision (200, ``Idempotent-Replayed: true``) for at least
24 h; the same key with another body is 409 IDEMPOTENCY_CONFLICT. Errors: 409 STALE_CASE_REVISION (reload),
409 INVARIANT_VIOLATION naming the invariant, 403 FORBIDDEN, 403 TENANT_SCOPE_DENIED, 404 NOT_FOUND (no such case
in the tenant), 503 UNAVAILABLE (retry with the same key). A refused decision writes nothing.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Response

from prw_api.admin.deps import DecisionsDep, ReviewerWriteDep
from prw_api.admin.models import DecisionCreated, DecisionRequest
from prw_api.errors import ErrorBody
from prw_api.routing import PlatformRoute
from prw_platform.services import ReviewDecision

router = APIRouter(tags=["decisions"], route_class=PlatformRoute)

REPLAYED_HEADER = "Idempotent-Replayed"


@router.post(
    "/v1/decisions",
    operation_id="createDecision",
    status_code=201,
    response_model=DecisionCreated,
    responses={
        200: {"model": DecisionCreated, "description": "a replay of the Idempotency-Key: the first decision"},
        **{status: {"model": ErrorBody} for status in (401, 403, 404, 409, 422, 503)},
    },
)
def create_decision(
    body: DecisionRequest,
    access: ReviewerWriteDep,
    decisions: DecisionsDep,
    response: Response,
    idempotency_key: Annotated[
        str | None, Header(alias="Idempotency-Key", min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$")
    ] = None,
) -> DecisionCreated:
    request = ReviewDecision(
        case_id=body.case_id,
        expected_revision=body.expected_revision,
        action=body.action,
        rationale=body.rationale,
        actor=access.actor,
        corrections=body.corrections or {},
        create_item_id=body.create_item.id if body.create_item else None,
        family=body.create_item.family if body.create_item else None,
        map_to=body.map_to,
        idempotency_key=idempotency_key,
        evidence=tuple(body.evidence),
        offer=dict(body.offer) if body.offer is not None else None,
        not_an_offer=body.not_an_offer,
    )
    result = decisions.decide_review(request, access.tenant_id)
    if result.replayed:
        response.status_code = 200
        response.headers[REPLAYED_HEADER] = "true"
    return DecisionCreated.of(result)

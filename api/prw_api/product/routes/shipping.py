"""if_product_query: POST /v1/shipping/evaluations, a basket's shipping cost from its merchant's released policy.

Side-effect-free (if_product_query Idempotency: "computed per request and stores nothing"), so a client may retry
it; the response is not cached (``Cache-Control: no-store``): it answers one basket, not a URL.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from prw_api.errors import ApiError, ErrorBody
from prw_api.product.deps import CatalogDep
from prw_api.product.models import ShippingEvaluationBody, ShippingEvaluationRequest
from prw_api.routing import PlatformRoute
from prw_platform.errors import NotPublic
from prw_platform.services import BasketLine, serialize_evaluation

router = APIRouter(tags=["shipping"], route_class=PlatformRoute)

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {
        "model": ErrorBody,
        "description": "NOT_FOUND: a listing no release publishes, or no public merchant sells",
    },
    422: {
        "model": ErrorBody,
        "description": "BASKET_SPANS_MERCHANTS, INVALID_DESTINATION (not ISO 3166-1 alpha-2, or not shipped "
        "there) or INVALID_QUERY",
    },
    429: {"model": ErrorBody},
    503: {"model": ErrorBody},
}


@router.post(
    "/v1/shipping/evaluations",
    operation_id="evaluateShipping",
    name="evaluateShipping",
    summary="The shipping cost of one merchant's basket to a destination (stores nothing)",
    response_model=ShippingEvaluationBody,
    responses=ERRORS,
)
def evaluate_shipping(body: ShippingEvaluationRequest, catalog: CatalogDep) -> JSONResponse:
    lines = tuple(BasketLine(line.listing, line.quantity) for line in body.lines)
    try:
        evaluation = catalog.evaluate_shipping(body.destination, lines)
    except NotPublic as error:
        raise ApiError(404, error.code, str(error)) from error
    return JSONResponse(serialize_evaluation(evaluation), headers={"Cache-Control": "no-store"})

"""if_receipt_get: GET /v1/receipts/{receipt_id}. A receipt status of accepted never means applied."""

from __future__ import annotations

from fastapi import APIRouter, Request

from prw_api.errors import ErrorBody
from prw_api.intake.deps import CollectorDep, IntakeDep
from prw_api.intake.models import ReceiptBody
from prw_api.routing import PlatformRoute

router = APIRouter(tags=["receipts"], route_class=PlatformRoute)


@router.get(
    "/v1/receipts/{receipt_id}",
    operation_id="getReceipt",
    name="getReceipt",
    response_model=ReceiptBody,
    response_model_exclude_none=True,
    responses={status: {"model": ErrorBody} for status in (401, 403, 404, 503)},
)
def get_receipt(receipt_id: str, principal: CollectorDep, intake: IntakeDep, request: Request) -> ReceiptBody:
    receipt = intake.get_receipt(principal, receipt_id)
    return ReceiptBody.of(receipt, str(request.app.url_path_for("getReceipt", receipt_id=receipt.receipt_id)))

"""if_receipt_get: GET /v1/receipts/{receipt_id}. A receipt status of accepted never means applied."""

from __future__ import annotations

from fastapi import APIRouter

from prw_api.errors import ErrorBody
from prw_api.intake.deps import CollectorDep, IntakeDep
from prw_api.intake.models import ReceiptBody
from prw_api.routing import PlatformRoute

RECEIPT_PATH = "/v1/receipts/{receipt_id}"


def receipt_url(receipt_id: str) -> str:
    """The receipt's own URL (a receipt id is ``rcpt_`` + hex: nothing to escape)."""
    return RECEIPT_PATH.format(receipt_id=receipt_id)


router = APIRouter(tags=["receipts"], route_class=PlatformRoute)


@router.get(
    RECEIPT_PATH,
    operation_id="getReceipt",
    name="getReceipt",
    response_model=ReceiptBody,
    response_model_exclude_none=True,
    responses={status: {"model": ErrorBody} for status in (401, 403, 404, 503)},
)
def get_receipt(receipt_id: str, principal: CollectorDep, intake: IntakeDep) -> ReceiptBody:
    receipt = intake.get_receipt(principal, receipt_id)
    return ReceiptBody.of(receipt, receipt_url(receipt.receipt_id))

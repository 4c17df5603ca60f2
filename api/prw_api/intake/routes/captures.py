"""if_capture_submit: POST /v1/captures. 202 with a new receipt; 200 with the existing one on an idempotent
replay ("Same key and same body → 200 with the existing receipt")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request, Response
from starlette.concurrency import run_in_threadpool

from prw_api.errors import ErrorBody
from prw_api.intake.deps import AuthDep, IntakeDep, VerifiedTokenDep
from prw_api.intake.models import ReceiptBody
from prw_api.routing import PlatformRoute
from prw_platform.services import CaptureSubmission

router = APIRouter(tags=["captures"], route_class=PlatformRoute)


@router.post(
    "/v1/captures",
    operation_id="submitCapture",
    name="submitCapture",
    status_code=202,
    response_model=ReceiptBody,
    response_model_exclude_none=True,
    responses={
        200: {"model": ReceiptBody, "description": "idempotent_replay: the existing receipt"},
        **{status: {"model": ErrorBody} for status in (401, 403, 409, 422, 503)},
    },
)
async def submit_capture(
    submission: CaptureSubmission,
    principal: VerifiedTokenDep,
    auth: AuthDep,
    intake: IntakeDep,
    request: Request,
    response: Response,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> ReceiptBody:
    # The credential's revocation check runs in the capture's transaction (one transaction per capture). The
    # transaction blocks, so it runs in the thread pool; the rest (the response included) stays on the event
    # loop: one thread hand-off per capture.
    submitted = await run_in_threadpool(
        intake.submit_capture, principal, idempotency_key, submission, auth.send_credential_check
    )
    receipt_url = request.app.url_path_for("getReceipt", receipt_id=submitted.receipt.receipt_id)
    if submitted.replayed:
        response.status_code = 200
    response.headers["Location"] = str(receipt_url)
    return ReceiptBody.of(submitted.receipt, str(receipt_url))

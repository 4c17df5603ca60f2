"""Response bodies of the intake origin (the request bodies are the core's ``UploadDeclaration`` and
``CaptureSubmission``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from prw_platform.services import Receipt, ReceiptStatus


class UploadTargetBody(BaseModel):
    method: str
    url: str
    headers: dict[str, str]


class UploadDeclaredBody(BaseModel):
    upload_id: str | None = None
    status: Literal["pending", "already_stored"]
    ref: str
    sha256: str
    target: UploadTargetBody | None = None
    expires_at: datetime | None = None


class UploadStoredBody(BaseModel):
    upload_id: str
    status: Literal["stored"]
    ref: str
    sha256: str
    artifact_id: str
    size: int = Field(serialization_alias="bytes")


class ReceiptLinks(BaseModel):
    receipt: str


class ReceiptBody(BaseModel):
    """if_capture_submit's recorded response and if_receipt_get. ``status`` starts ``stored`` and follows the
    capture through resolution; a receipt status of accepted never means applied (the product service may not
    have the change yet). ``reason`` (the dead-letter code) only when ``failed``; the routes omit it otherwise."""

    receipt_id: str
    capture_id: str
    status: ReceiptStatus
    reason: str | None = None
    received_at: datetime
    links: ReceiptLinks

    @classmethod
    def of(cls, receipt: Receipt, receipt_url: str) -> ReceiptBody:
        return cls(
            receipt_id=receipt.receipt_id,
            capture_id=receipt.capture_id,
            status=receipt.status,
            reason=receipt.reason,
            received_at=receipt.received_at,
            links=ReceiptLinks(receipt=receipt_url),
        )


class TokenBody(BaseModel):
    access_token: str
    token_type: Literal["Bearer"]
    expires_in: int
    scope: str


class OAuthErrorBody(BaseModel):
    error: str
    error_description: str


class ErrorDetail(BaseModel):
    code: str
    message: str
    retryable: bool


class ErrorBody(BaseModel):
    error: ErrorDetail

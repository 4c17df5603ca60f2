"""Response bodies of the intake origin (the request bodies are the core's ``UploadDeclaration`` and
``CaptureSubmission``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prw_platform.services import HeartbeatAck, Receipt, ReceiptStatus, Registered


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


class GrantedBody(BaseModel):
    tenant_id: str
    sources: list[str]


class RegisteredBody(BaseModel):
    """if_collector_bootstrap's recorded response, with the lease's expiry and the worker it is recorded for."""

    instance_id: str
    worker_id: str
    lease_seconds: int
    lease_expires_at: datetime
    heartbeat_url: str
    granted: GrantedBody

    @classmethod
    def of(cls, registered: Registered, heartbeat_url: str) -> RegisteredBody:
        lease = registered.lease
        return cls(
            instance_id=lease.instance_id,
            worker_id=lease.worker_id,
            lease_seconds=registered.lease_seconds,
            lease_expires_at=lease.lease_expires_at,
            heartbeat_url=heartbeat_url,
            granted=GrantedBody(tenant_id=lease.tenant_id, sources=sorted(lease.targets)),
        )


class HeartbeatAckBody(BaseModel):
    """if_heartbeat's recorded response: the counters after the heartbeat and the renewed lease."""

    instance_id: str
    consecutive_failures: int
    last_success: datetime | None
    lease_expires_at: datetime

    @classmethod
    def of(cls, ack: HeartbeatAck) -> HeartbeatAckBody:
        return cls(
            instance_id=ack.instance_id,
            consecutive_failures=ack.consecutive_failures,
            last_success=ack.last_success_at,
            lease_expires_at=ack.lease_expires_at,
        )


class TokenBody(BaseModel):
    access_token: str
    token_type: Literal["Bearer"]
    expires_in: int
    scope: str


class OAuthErrorBody(BaseModel):
    error: str
    error_description: str


class ExportEventsBody(BaseModel):
    """GET /v1/exports/events: the committed events of the principal's catalog stream after ``after``, in
    position order without a hole, up to ``limit``; ``head`` is the stream's committed cursor in the same
    snapshot, ``next_after`` where the next page starts. Each event is a product.accepted-change.v1 message."""

    tenant_id: str
    catalog_id: str
    history_epoch: str
    after: int
    head: int
    next_after: int
    events: list[dict[str, Any]]


class ProgressReportRequest(BaseModel):
    """POST /v1/exports/progress: a consumer's greatest contiguous processed position of one stream of the
    principal's catalog, reported after the consumer committed it (if_accepted_change)."""

    model_config = ConfigDict(extra="forbid")

    history_epoch: str = Field(min_length=1, max_length=200)
    position: int = Field(ge=0)
    consumer: str = Field(default="product_live", pattern=r"^[a-z][a-z0-9_]{0,62}$")
    catalog_id: str | None = Field(default=None, max_length=200)


class ProgressAckBody(BaseModel):
    consumer: str
    acknowledged_position: int
    #: False when the report was not above the acknowledged position (ignored, logged).
    advanced: bool


class ExportSnapshotRequest(BaseModel):
    """POST /v1/exports/snapshots (if_projection_bootstrap example): tenant and catalog are only checked against
    the token; ``aggregates`` defaults to every type."""

    model_config = ConfigDict(extra="forbid")

    tenant_id: str | None = Field(default=None, max_length=200)
    catalog_id: str | None = Field(default=None, max_length=200)
    aggregates: list[str] | None = Field(default=None, max_length=20)


class ExportObjectLinkBody(BaseModel):
    aggregate: str
    #: The object's checksum (and content address); the GET answers it in ``X-Content-SHA256`` too.
    sha256: str
    size: int
    #: Aggregates (JSON lines) in the object.
    count: int
    #: A signed link scoped to this export and object; GET the manifest again when it expired.
    url: str
    expires_at: datetime


class ExportSnapshotBody(BaseModel):
    """A snapshot export: pending, or ready with its manifest (history epoch, the committed cursor W it was read
    at, the lease that retains the tail after W, one checksummed object per aggregate type)."""

    export_id: str
    status: str
    tenant_id: str
    catalog_id: str
    aggregates: list[str]
    history_epoch: str | None = None
    position: int | None = None
    lease_id: str | None = None
    objects: list[ExportObjectLinkBody] = Field(default_factory=list)


class ExportLeaseBody(BaseModel):
    lease_id: str
    pinned_at: int
    expires_at: datetime

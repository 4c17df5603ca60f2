"""Snapshot exports for the product principal (if_projection_bootstrap): POST
/v1/exports/snapshots (Idempotency-Key -> the same export_id; 202 pending), GET /v1/exports/snapshots/{id} (202
pending, then 200 with the ready manifest and signed object links), the signed object itself, and the lease
renewal a rebuild calls throughout export, load and catch-up, and its release after the cutover. Scope exports:read; tenant and catalog from the
token (a supplied one is only checked: 403 TENANT_SCOPE_DENIED)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Path, Query, Request, Response
from fastapi.responses import JSONResponse

from prw_api.errors import ApiError, ErrorBody
from prw_api.ids import ExportId
from prw_api.intake.deps import CollectorDep
from prw_api.intake.models import (
    ExportLeaseBody,
    ExportObjectLinkBody,
    ExportSnapshotBody,
    ExportSnapshotRequest,
)
from prw_api.routing import PlatformRoute
from prw_platform.services import ExportView, SnapshotExports

router = APIRouter(tags=["exports"], route_class=PlatformRoute)

_ERRORS = (401, 403, 404, 410, 422, 503)


def _service(request: Request) -> SnapshotExports:
    snapshots: SnapshotExports = request.app.state.snapshots
    return snapshots


def _body(request: Request, view: ExportView) -> ExportSnapshotBody:
    snapshot = view.snapshot
    base = str(request.base_url).rstrip("/")
    return ExportSnapshotBody(
        export_id=snapshot.export_id,
        status=snapshot.status,
        tenant_id=snapshot.tenant_id,
        catalog_id=snapshot.catalog_id,
        aggregates=list(snapshot.aggregates),
        history_epoch=snapshot.history_epoch if snapshot.status == "ready" else None,
        position=snapshot.position,
        lease_id=snapshot.lease_id if snapshot.status == "ready" else None,
        objects=[
            ExportObjectLinkBody(
                aggregate=link.aggregate,
                sha256=link.sha256,
                size=link.size,
                count=link.count,
                url=f"{base}/v1/exports/snapshots/{snapshot.export_id}/objects/{link.aggregate}?token={link.token}",
                expires_at=link.expires_at,
            )
            for link in view.links
        ],
    )


@router.post(
    "/v1/exports/snapshots",
    operation_id="requestExportSnapshot",
    name="requestExportSnapshot",
    status_code=202,
    response_model=ExportSnapshotBody,
    responses={status: {"model": ErrorBody} for status in (*_ERRORS, 409)},
)
def request_snapshot(
    principal: CollectorDep,
    request: Request,
    body: ExportSnapshotRequest,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key", max_length=200)] = None,
) -> JSONResponse:
    """202 pending: poll GET. The same Idempotency-Key returns the same export_id (whatever its status now)."""
    if not idempotency_key:
        raise ApiError(422, "VALIDATION_FAILED", "an Idempotency-Key header is required")
    requested = _service(request).request(
        principal,
        idempotency_key,
        body.aggregates,
        tenant_id=body.tenant_id,
        catalog_id=body.catalog_id,
    )
    view = ExportView(requested.snapshot)
    status = 202 if requested.snapshot.status == "pending" else 200
    if requested.snapshot.status != "pending":
        view = _service(request).get(principal, requested.snapshot.export_id)
    return JSONResponse(_body(request, view).model_dump(mode="json"), status_code=status)


@router.get(
    "/v1/exports/snapshots/{export_id}",
    operation_id="getExportSnapshot",
    name="getExportSnapshot",
    response_model=ExportSnapshotBody,
    responses={202: {"model": ExportSnapshotBody}, **{status: {"model": ErrorBody} for status in _ERRORS}},
)
def get_snapshot(principal: CollectorDep, request: Request, export_id: ExportId) -> JSONResponse:
    """202 while pending; 200 with the manifest when ready (fresh signed links on every GET); 410 EXPORT_EXPIRED
    when the export failed or its lease expired: request a new export."""
    view = _service(request).get(principal, export_id)
    status = 202 if view.snapshot.status == "pending" else 200
    return JSONResponse(_body(request, view).model_dump(mode="json"), status_code=status)


@router.post(
    "/v1/exports/snapshots/{export_id}/lease",
    operation_id="renewExportLease",
    name="renewExportLease",
    response_model=ExportLeaseBody,
    responses={status: {"model": ErrorBody} for status in _ERRORS},
)
def renew_lease(principal: CollectorDep, request: Request, export_id: ExportId) -> ExportLeaseBody:
    """Renew the export's rebuild lease; 410 EXPORT_EXPIRED once it expired (it is never revived)."""
    lease = _service(request).renew(principal, export_id)
    return ExportLeaseBody(lease_id=lease.lease_id, pinned_at=lease.pinned_at, expires_at=lease.expires_at)


@router.delete(
    "/v1/exports/snapshots/{export_id}/lease",
    operation_id="releaseExportLease",
    name="releaseExportLease",
    status_code=204,
    response_class=Response,
    responses={status: {"model": ErrorBody} for status in (401, 403, 404, 503)},
)
def release_lease(principal: CollectorDep, request: Request, export_id: ExportId) -> Response:
    """Release the export's rebuild lease after the cutover (idempotent: 204 also when already released or
    expired). The retained tail after W is no longer pinned."""
    _service(request).release(principal, export_id)
    return Response(status_code=204)


@router.get(
    "/v1/exports/snapshots/{export_id}/objects/{aggregate}",
    operation_id="getExportObject",
    name="getExportObject",
    response_class=Response,
    responses={
        200: {"content": {"application/x-ndjson": {}}},
        **{status: {"model": ErrorBody} for status in (404, 410, 503)},
    },
)
def get_object(
    request: Request,
    export_id: ExportId,
    aggregate: Annotated[str, Path(pattern=r"^[a-z_]{1,40}$")],
    token: Annotated[str, Query(min_length=1, max_length=2000)],
) -> Response:
    """A signed link of one export's object (no bearer: the link is the credential, scoped to this export and
    this object). An expired link: 410, GET the manifest again."""
    found = _service(request).open_object(export_id, aggregate, token)
    return Response(
        found.data,
        media_type="application/x-ndjson",
        headers={"X-Content-SHA256": found.sha256, "Cache-Control": "private, no-store"},
    )

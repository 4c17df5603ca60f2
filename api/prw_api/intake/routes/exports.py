"""The resolver's export stream for the product principal (gap closure; if_projection_bootstrap
"Retrieve retained events"): GET /v1/exports/events?after=W&history_epoch=E&limit=N, scope exports:read."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from prw_api.errors import ErrorBody
from prw_api.intake.deps import CollectorDep
from prw_api.intake.models import ExportEventsBody, ProgressAckBody, ProgressReportRequest
from prw_api.routing import PlatformRoute
from prw_platform.services import MAX_EXPORT_LIMIT, ExportService

router = APIRouter(tags=["exports"], route_class=PlatformRoute)


@router.get(
    "/v1/exports/events",
    operation_id="getExportEvents",
    name="getExportEvents",
    response_model=ExportEventsBody,
    responses={status: {"model": ErrorBody} for status in (401, 403, 404, 410, 422, 503)},
)
def export_events(
    principal: CollectorDep,
    request: Request,
    history_epoch: Annotated[str, Query(min_length=1, max_length=200)],
    after: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_EXPORT_LIMIT)] = MAX_EXPORT_LIMIT,
    catalog_id: Annotated[str | None, Query(max_length=200)] = None,
    lease_id: Annotated[str | None, Query(max_length=200)] = None,
) -> ExportEventsBody:
    """410 EXPORT_EXPIRED: ``after`` is below the pruned-through cursor, or ``lease_id`` is expired, released or
    not a lease of this stream (if_projection_bootstrap: restart from a new export)."""
    exports: ExportService = request.app.state.exports
    page = exports.events(
        principal,
        after=after,
        history_epoch=history_epoch,
        limit=limit,
        catalog_id=catalog_id,
        lease_id=lease_id,
    )
    return ExportEventsBody(
        tenant_id=page.tenant_id,
        catalog_id=page.catalog_id,
        history_epoch=page.history_epoch,
        after=page.after,
        head=page.head,
        next_after=page.next_after,
        events=list(page.events),
    )


@router.post(
    "/v1/exports/progress",
    operation_id="reportExportProgress",
    name="reportExportProgress",
    response_model=ProgressAckBody,
    responses={status: {"model": ErrorBody} for status in (401, 403, 404, 422, 503)},
)
def report_progress(
    principal: CollectorDep, request: Request, body: ProgressReportRequest
) -> ProgressAckBody:
    """The product consumer's durable contiguous progress, reported after its own commit (if_accepted_change):
    monotonic, a lower report is ignored (200 with the higher acknowledged position)."""
    exports: ExportService = request.app.state.exports
    ack = exports.report_progress(
        principal,
        history_epoch=body.history_epoch,
        position=body.position,
        consumer=body.consumer,
        catalog_id=body.catalog_id,
    )
    return ProgressAckBody(
        consumer=ack.consumer, acknowledged_position=ack.acknowledged_position, advanced=ack.advanced
    )

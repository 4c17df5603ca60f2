"""The resolver's export stream for the product principal (issue 9 gap closure; if_projection_bootstrap
"Retrieve retained events"): GET /v1/exports/events?after=W&history_epoch=E&limit=N, scope exports:read."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from prw_api.errors import ErrorBody
from prw_api.intake.deps import CollectorDep
from prw_api.intake.models import ExportEventsBody
from prw_api.routing import PlatformRoute
from prw_platform.services import MAX_EXPORT_LIMIT, ExportService

router = APIRouter(tags=["exports"], route_class=PlatformRoute)


@router.get(
    "/v1/exports/events",
    operation_id="getExportEvents",
    name="getExportEvents",
    response_model=ExportEventsBody,
    responses={status: {"model": ErrorBody} for status in (401, 403, 404, 422, 503)},
)
def export_events(
    principal: CollectorDep,
    request: Request,
    history_epoch: Annotated[str, Query(min_length=1, max_length=200)],
    after: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_EXPORT_LIMIT)] = MAX_EXPORT_LIMIT,
    catalog_id: Annotated[str | None, Query(max_length=200)] = None,
) -> ExportEventsBody:
    exports: ExportService = request.app.state.exports
    page = exports.events(
        principal, after=after, history_epoch=history_epoch, limit=limit, catalog_id=catalog_id
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

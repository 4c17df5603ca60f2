"""Improvements: ``POST /v1/improvements`` (operator_admin), ``GET /v1/improvements/{id}``
(viewer), ``POST /v1/improvements/{id}/approve`` (reviewer: not the author) and ``.../abandon`` (operator_admin).

State-changing routes need the session's CSRF token. Create is idempotent by ``Idempotency-Key`` (a retry returns
200 with ``Idempotent-Replayed: true``). Errors: 404 NOT_FOUND, 403 FORBIDDEN (role, or approving one's own
improvement), 409 INVALID_TRANSITION, 409 IDEMPOTENCY_CONFLICT, 422 UNKNOWN_ADAPTER_VERSION /
UNKNOWN_PROFILE_VERSION / VALIDATION_FAILED (a selection that matches no capture).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request, Response

from prw_api.admin.deps import AdminWriteDep, ReviewerWriteDep, ViewerDep
from prw_api.admin.improvement_models import (
    ImprovementDetail,
    ImprovementRequest,
    ReplayDetail,
    ReplayRequest,
    ReplaySummary,
    TransitionRequest,
)
from prw_api.admin.routes.decisions import REPLAYED_HEADER
from prw_api.errors import ErrorBody
from prw_api.ids import ImprovementId, ReplayId
from prw_api.routing import PlatformRoute
from prw_platform.services import ImprovementService, ReplayService

router = APIRouter(tags=["improvements"], route_class=PlatformRoute)

IdempotencyKey = Annotated[
    str | None, Header(alias="Idempotency-Key", min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$")
]


def get_improvements(request: Request) -> ImprovementService:
    service: ImprovementService = request.app.state.improvements
    return service


def get_replays(request: Request) -> ReplayService:
    service: ReplayService = request.app.state.replays
    return service


ImprovementsDep = Annotated[ImprovementService, Depends(get_improvements)]
ReplaysDep = Annotated[ReplayService, Depends(get_replays)]


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorBody} for status in (401, 403, *statuses, 503)}


@router.post(
    "/v1/improvements",
    operation_id="createImprovement",
    status_code=201,
    response_model=ImprovementDetail,
    responses={
        200: {"model": ImprovementDetail, "description": "a replay of the Idempotency-Key"},
        **_errors(404, 409, 422),
    },
)
def create_improvement(
    body: ImprovementRequest,
    access: AdminWriteDep,
    improvements: ImprovementsDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> ImprovementDetail:
    record = improvements.create(access.tenant_id, body.draft(), access.actor, idempotency_key)
    if record.replayed:
        response.status_code = 200
        response.headers[REPLAYED_HEADER] = "true"
    return ImprovementDetail.of(record)


@router.get(
    "/v1/improvements/{improvement_id}",
    operation_id="getImprovement",
    response_model=ImprovementDetail,
    responses=_errors(404),
)
def get_improvement(
    improvement_id: ImprovementId, access: ViewerDep, improvements: ImprovementsDep, replays: ReplaysDep
) -> ImprovementDetail:
    record = improvements.get(access.tenant_id, improvement_id)
    return ImprovementDetail.of(record, replays.replays(access.tenant_id, improvement_id))


@router.post(
    "/v1/improvements/{improvement_id}/approve",
    operation_id="approveImprovement",
    response_model=ImprovementDetail,
    responses=_errors(404, 409, 422),
)
def approve_improvement(
    improvement_id: ImprovementId,
    body: TransitionRequest,
    access: ReviewerWriteDep,
    improvements: ImprovementsDep,
) -> ImprovementDetail:
    return ImprovementDetail.of(
        improvements.approve(access.tenant_id, improvement_id, access.actor, body.rationale)
    )


@router.post(
    "/v1/improvements/{improvement_id}/abandon",
    operation_id="abandonImprovement",
    response_model=ImprovementDetail,
    responses=_errors(404, 409, 422),
)
def abandon_improvement(
    improvement_id: ImprovementId,
    body: TransitionRequest,
    access: AdminWriteDep,
    improvements: ImprovementsDep,
) -> ImprovementDetail:
    return ImprovementDetail.of(
        improvements.abandon(access.tenant_id, improvement_id, access.actor, body.rationale)
    )


@router.post(
    "/v1/improvements/{improvement_id}/replays",
    operation_id="createReplay",
    status_code=202,
    response_model=ReplaySummary,
    responses=_errors(404, 409, 422),
)
def create_replay(
    improvement_id: ImprovementId,
    access: AdminWriteDep,
    replays: ReplaysDep,
    body: ReplayRequest | None = None,
) -> ReplaySummary:
    """if_replay_job: one resolution.replay.v1 message per selected capture; dry run unless ``mode: apply``."""
    mode = body.mode if body is not None else "dry_run"
    return ReplaySummary.model_validate(
        replays.request(access.tenant_id, improvement_id, mode, access.actor).replay
    )


@router.get(
    "/v1/replays/{replay_id}",
    operation_id="getReplay",
    response_model=ReplayDetail,
    responses=_errors(404),
)
def get_replay(replay_id: ReplayId, access: ViewerDep, replays: ReplaysDep) -> ReplayDetail:
    return ReplayDetail.of_view(replays.view(access.tenant_id, replay_id))

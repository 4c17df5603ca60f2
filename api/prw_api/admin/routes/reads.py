"""Admin reads (if_admin_read, if_receipt_get for operators), filtered to the active tenant (INV-06).

Role viewer for every GET, operator_admin for ``POST /v1/resolve`` (it reads evidence but writes nothing, so it
needs no CSRF token: it changes no state). Errors: 401 SESSION_EXPIRED, 403 FORBIDDEN, 403 TENANT_SCOPE_DENIED;
404 NOT_FOUND for a decision, receipt or capture the tenant does not have; 422 UNKNOWN_ADAPTER_VERSION for a
dry run pinned to an adapter that is not installed.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from prw_api.admin.deps import AdminDep, DecisionsDep, ReadsDep, ViewerDep
from prw_api.admin.operations_models import (
    DecisionView,
    DryRunView,
    ImprovementList,
    OperatorReceipt,
    ResolveRequest,
    WorkerList,
    WorkerView,
)
from prw_api.errors import ApiError, ErrorBody
from prw_api.ids import DecisionId
from prw_api.routing import PlatformRoute
from prw_platform.services import (
    DryRunRequest,
    ImprovementStatus,
    InvalidPageCursor,
    UnknownAdapterVersion,
)

router = APIRouter(tags=["admin reads"], route_class=PlatformRoute)

#: The admin origin's code of a refused parameter (as ``prw_api.admin.app.VALIDATION_FAILED``).
_VALIDATION_FAILED = "VALIDATION_FAILED"


def _errors(*statuses: int) -> dict[int | str, dict[str, object]]:
    return {status: {"model": ErrorBody} for status in (401, 403, *statuses)}


@router.get(
    "/v1/decisions/{decision_id}",
    operation_id="getDecision",
    response_model=DecisionView,
    responses=_errors(404, 422),
)
def get_decision(
    decision_id: DecisionId,
    access: ViewerDep,
    decisions: DecisionsDep,
) -> DecisionView:
    detail = decisions.decision(access.tenant_id, decision_id)
    if detail is None:
        raise ApiError(404, "NOT_FOUND", f"no decision {decision_id} in tenant {access.tenant_id}")
    return DecisionView.of(detail)


@router.get("/v1/workers", operation_id="listWorkers", response_model=WorkerList, responses=_errors())
def list_workers(access: ViewerDep, reads: ReadsDep) -> WorkerList:
    return WorkerList(workers=[WorkerView.of(status) for status in reads.workers(access.tenant_id)])


@router.get(
    "/v1/receipts/{receipt_id}",
    operation_id="getOperatorReceipt",
    response_model=OperatorReceipt,
    responses=_errors(404, 422),
)
def get_receipt(
    receipt_id: Annotated[str, Path(min_length=1, max_length=200)], access: ViewerDep, reads: ReadsDep
) -> OperatorReceipt:
    return OperatorReceipt.model_validate(reads.receipt(access.tenant_id, receipt_id).receipt)


@router.get(
    "/v1/improvements",
    operation_id="listImprovements",
    response_model=ImprovementList,
    responses=_errors(422),
)
def list_improvements(
    access: ViewerDep,
    reads: ReadsDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    after: Annotated[str | None, Query(min_length=1, max_length=500)] = None,
    status: ImprovementStatus | None = None,
) -> ImprovementList:
    try:
        page = reads.improvements(access.tenant_id, limit=limit, after=after, status=status)
    except InvalidPageCursor as error:
        raise ApiError(422, _VALIDATION_FAILED, str(error)) from error
    return ImprovementList.model_validate(page)


@router.post(
    "/v1/resolve", operation_id="dryRunResolve", response_model=DryRunView, responses=_errors(404, 422)
)
def dry_run_resolve(body: ResolveRequest, access: AdminDep, reads: ReadsDep) -> DryRunView:
    request = DryRunRequest(capture_id=body.capture_id, record=body.record, adapter=body.adapter)
    try:
        run = reads.dry_run(access.tenant_id, request)
    except UnknownAdapterVersion as error:
        raise ApiError(422, error.code, str(error)) from error
    return DryRunView.model_validate(run)

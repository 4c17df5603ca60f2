"""if_collector_bootstrap: POST /v1/workers/register; if_heartbeat: POST /v1/workers/{instance_id}/heartbeat.

Registration records the instance and a lease (201 the first time, 200 with the existing lease on a re-register
with the same body); it never starts anything. A heartbeat renews the lease and records its run report once per
(instance, ``at``). ``GET /v1/workers`` (if_admin_read) belongs to the admin origin behind the operator session
and is not served here.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from prw_api.errors import ErrorBody
from prw_api.intake.deps import CollectorDep, CollectorsDep
from prw_api.intake.models import HeartbeatAckBody, RegisteredBody
from prw_api.routing import PlatformRoute
from prw_platform.services import Heartbeat, Registration

router = APIRouter(tags=["workers"], route_class=PlatformRoute)


@router.post(
    "/v1/workers/register",
    operation_id="registerWorker",
    name="registerWorker",
    status_code=201,
    response_model=RegisteredBody,
    responses={
        200: {"model": RegisteredBody, "description": "re-registered: the existing lease"},
        **{status: {"model": ErrorBody} for status in (401, 403, 404, 422, 503)},
    },
)
def register_worker(
    registration: Registration,
    principal: CollectorDep,
    collectors: CollectorsDep,
    request: Request,
    response: Response,
) -> RegisteredBody:
    registered = collectors.register(principal, registration)
    if not registered.created:
        response.status_code = 200
    heartbeat_url = request.app.url_path_for("workerHeartbeat", instance_id=registered.lease.instance_id)
    return RegisteredBody.of(registered, str(heartbeat_url))


@router.post(
    "/v1/workers/{instance_id}/heartbeat",
    operation_id="workerHeartbeat",
    name="workerHeartbeat",
    response_model=HeartbeatAckBody,
    responses={status: {"model": ErrorBody} for status in (401, 403, 404, 422, 503)},
)
def worker_heartbeat(
    instance_id: str, heartbeat: Heartbeat, principal: CollectorDep, collectors: CollectorsDep
) -> HeartbeatAckBody:
    return HeartbeatAckBody.of(collectors.heartbeat(principal, instance_id, heartbeat))

"""Liveness and readiness, on every origin, for a load balancer or an orchestrator (docs/operators/running.md).

- ``GET /healthz`` (liveness): the process answers HTTP. It touches no database, so an outage of PostgreSQL never
  makes an orchestrator restart healthy API processes.
- ``GET /readyz`` (readiness): every database pool the origin's requests use answers a trivial query within a
  short timeout, the control database's included (``Platform.ready``, set by ``prw_api.compose``; an app built
  around one service alone asks that service: ``IntakeService.ready``, ``PublicCatalog.ready``); otherwise 503
  STORAGE_UNAVAILABLE with ``Retry-After``, and the balancer sends traffic elsewhere until it answers again.

Both answer before any authentication and carry no identity. Each app stores its readiness check as
``app.state.ready`` (a core method); no SQL here.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel

from prw_api.errors import ErrorBody
from prw_api.routing import PlatformRoute

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"

# Operational routes, not part of an origin's API contract (schemas/openapi.yaml): left out of /openapi.json.
router = APIRouter(tags=["health"], route_class=PlatformRoute, include_in_schema=False)


class HealthBody(BaseModel):
    status: Literal["alive", "ready"]


@router.get(
    LIVENESS_PATH,
    operation_id="liveness",
    name="liveness",
    summary="The process answers HTTP (no database)",
    response_model=HealthBody,
)
def liveness() -> HealthBody:
    return HealthBody(status="alive")


@router.get(
    READINESS_PATH,
    operation_id="readiness",
    name="readiness",
    summary="The origin's databases answer a trivial query within a short timeout; 503 STORAGE_UNAVAILABLE otherwise",
    response_model=HealthBody,
    responses={503: {"model": ErrorBody}},
)
def readiness(request: Request) -> HealthBody:
    # A sync route: FastAPI runs it in its thread pool, so the wait for a connection blocks no event loop.
    request.app.state.ready()
    return HealthBody(status="ready")

"""Releases: ``POST /v1/releases`` and ``PUT /v1/catalogs/{catalog_id}/release-policy``.

Role operator_admin in the active tenant, with the session's CSRF token. Each is an AW-01 decision recorded with
the operator as actor and a rationale. A release authorizes everything accepted and not yet released (201);
nothing to release is 409 NOTHING_TO_RELEASE and writes nothing. ``Idempotency-Key``: a retry with the same key
and body returns the first result (200, ``Idempotent-Replayed: true``); the same key with another body is 409
IDEMPOTENCY_CONFLICT. An unknown catalog is 404 NOT_FOUND; 503 UNAVAILABLE means retry with the same key.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Response

from prw_api.admin.deps import AdminWriteDep, DecisionsDep
from prw_api.admin.operations_models import (
    ReleaseCreated,
    ReleasePolicyRequest,
    ReleasePolicyState,
    ReleaseRequest,
)
from prw_api.admin.routes.decisions import REPLAYED_HEADER
from prw_api.errors import ErrorBody
from prw_api.ids import CatalogId
from prw_api.routing import PlatformRoute
from prw_platform.services import AuthorizeRelease, SetReleasePolicy

router = APIRouter(tags=["releases"], route_class=PlatformRoute)

IdempotencyKey = Annotated[
    str | None, Header(alias="Idempotency-Key", min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$")
]
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (401, 403, 404, 409, 422, 503)
}


@router.post(
    "/v1/releases",
    operation_id="createRelease",
    status_code=201,
    response_model=ReleaseCreated,
    responses={200: {"model": ReleaseCreated, "description": "a replay of the Idempotency-Key"}, **_ERRORS},
)
def create_release(
    body: ReleaseRequest,
    access: AdminWriteDep,
    decisions: DecisionsDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> ReleaseCreated:
    command = AuthorizeRelease(body.catalog_id, access.actor, body.rationale, idempotency_key)
    release = decisions.release(command, access.tenant_id)
    _mark_replay(response, release.replayed)
    return ReleaseCreated.of(release)


@router.put(
    "/v1/catalogs/{catalog_id}/release-policy",
    operation_id="setReleasePolicy",
    response_model=ReleasePolicyState,
    responses=_ERRORS,
)
def set_release_policy(
    catalog_id: CatalogId,
    body: ReleasePolicyRequest,
    access: AdminWriteDep,
    decisions: DecisionsDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> ReleasePolicyState:
    command = SetReleasePolicy(catalog_id, body.release_policy, access.actor, body.rationale, idempotency_key)
    change = decisions.set_release_policy(command, access.tenant_id)
    _mark_replay(response, change.replayed)
    return ReleasePolicyState.of(change)


def _mark_replay(response: Response, replayed: bool) -> None:
    if replayed:
        response.status_code = 200
        response.headers[REPLAYED_HEADER] = "true"

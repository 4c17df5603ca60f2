"""The console's operations pages, outside the OpenAPI contract, each drawn from the service its
JSON route uses:

- ``GET /console/fleet``: the collector fleet (``GET /v1/workers``), silent and failing instances first;
- ``GET /console/decisions/{decision_id}``: a decision with its provenance, facts and events
  (``GET /v1/decisions/{id}``), linked from a case's history;
- ``GET /console/releases``: each catalog, its release policy and what a release would publish now;
- ``POST /console/releases/{catalog_id}``: "Release now" (``POST /v1/releases``: operator_admin, CSRF, the
  Idempotency-Key made when the page was drawn), answered by the page with the publication revision, or 409
  NOTHING_TO_RELEASE.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from prw_api.admin.console.access import common_context, console_access, console_form_access
from prw_api.admin.console.errors import ConsoleRoute, error_page
from prw_api.admin.console.rendering import page
from prw_api.admin.deps import DecisionsDep, ReadsDep, SessionsDep
from prw_api.admin.operations_models import DecisionView, WorkerView
from prw_api.ids import CatalogId, DecisionId
from prw_platform.errors import NothingToRelease
from prw_platform.services import Access, AuthorizeRelease, DecisionService

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

#: Silent and failing collectors first, the longest overdue on top (``overdue`` before the rest).
_STATE_ORDER = {"failing": 0, "silent": 1}
_DEFAULT_RATIONALE = "released now from the console"


@router.get("/fleet", response_class=HTMLResponse)
def fleet_page(request: Request, sessions: SessionsDep, reads: ReadsDep) -> Response:
    access = console_access(request, sessions, "viewer")
    workers = sorted(
        (WorkerView.of(status) for status in reads.workers(access.tenant_id)),
        key=lambda w: (not w.overdue, _STATE_ORDER.get(w.lease_state, 2), w.catalog_id, w.instance_id),
    )
    attention = sum(1 for w in workers if w.lease_state != "active")
    context = {**common_context(access, "fleet"), "workers": workers, "attention": attention}
    return page(request, "fleet.html", context)


@router.get("/decisions/{decision_id}", response_class=HTMLResponse)
def decision_page(
    request: Request,
    decision_id: DecisionId,
    sessions: SessionsDep,
    decisions: DecisionsDep,
) -> Response:
    access = console_access(request, sessions, "viewer")
    detail = decisions.decision(access.tenant_id, decision_id)
    if detail is None:
        return error_page(
            request, 404, "NOT_FOUND", f"no decision {decision_id} in tenant {access.tenant_id}"
        )
    view = DecisionView.of(detail)
    context = {**common_context(access, "review" if view.case_id else "releases"), "decision": view}
    return page(request, "decision.html", context)


@router.get("/releases", response_class=HTMLResponse)
def releases_page(request: Request, sessions: SessionsDep, decisions: DecisionsDep) -> Response:
    access = console_access(request, sessions, "viewer")
    return _releases(request, access, decisions)


@router.post("/releases/{catalog_id}", response_class=HTMLResponse)
def release_now(
    request: Request,
    catalog_id: CatalogId,
    sessions: SessionsDep,
    decisions: DecisionsDep,
    csrf_token: Annotated[str, Form(max_length=200)],
    idempotency_key: Annotated[str, Form(min_length=1, max_length=200)],
    rationale: Annotated[str, Form(max_length=4000)] = "",
) -> Response:
    access = console_form_access(request, sessions, csrf_token, "operator_admin")
    command = AuthorizeRelease(
        catalog_id, access.actor, rationale.strip() or _DEFAULT_RATIONALE, idempotency_key
    )
    try:
        released = decisions.release(command, access.tenant_id)
    except NothingToRelease as error:
        # 409 NOTHING_TO_RELEASE: nothing was written; accept something first.
        problem = {"code": error.code, "message": str(error)}
        return _releases(request, access, decisions, status_code=error.status, problem=problem)
    return _releases(request, access, decisions, released=released)


def _releases(
    request: Request, access: Access, decisions: DecisionService, *, status_code: int = 200, **extra: Any
) -> Response:
    catalogs = decisions.pending_releases(access.tenant_id)
    context = {
        **common_context(access, "releases"),
        "catalogs": catalogs,
        # One key per catalog form, made when the page is drawn: a double submit makes one release.
        "keys": {
            c.catalog_id: f"console:release:{c.catalog_id}:{secrets.token_urlsafe(12)}" for c in catalogs
        },
        **extra,
    }
    return page(request, "releases.html", context, status_code=status_code)

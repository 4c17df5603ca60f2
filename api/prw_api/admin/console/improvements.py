"""The console's improvement pages, outside the OpenAPI contract, over the service the JSON
routes use (``POST/GET /v1/improvements``, ``.../approve``, ``.../abandon``):

- ``GET /console/improvements``: the list (newest first, by status) and, for operator_admin, the form that
  proposes a new one (pins chosen from the installed plugins, a selection, a rationale);
- ``POST /console/improvements``: create (operator_admin, CSRF, the Idempotency-Key made when the form was drawn),
  then its page;
- ``GET /console/improvements/{id}``: pins, selection, the captures it matches, its transitions, and the approve
  (a reviewer who is not its author) and abandon (operator_admin) forms;
- ``POST /console/improvements/{id}/approve`` and ``/abandon``: the move, then the page; a refused move (403, 409)
  is shown on the page with nothing written;
- ``POST /console/improvements/{id}/replays``: a dry run (or, approved, an apply replay), then its page;
- ``GET /console/replays/{id}``: a replay's progress, what its diff changes and the changed captures' diffs.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Form, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from prw_api.admin.console.access import common_context, console_access, console_form_access, has_role
from prw_api.admin.console.errors import ConsoleRoute
from prw_api.admin.console.rendering import page
from prw_api.admin.deps import ReadsDep, SessionsDep
from prw_api.admin.improvement_models import ImprovementDetail, ImprovementRequest, ReplayDetail
from prw_api.admin.routes.improvements import ImprovementsDep, ReplaysDep
from prw_api.ids import ImprovementId, ReplayId
from prw_platform.errors import ImprovementError
from prw_platform.plugins import UnknownAdapterVersion, UnknownProfileVersion
from prw_platform.services import Access, ImprovementService, ReplayService

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

STATUSES = ("draft", "reviewer_approved", "applied", "abandoned")
Text = Annotated[str, Form(max_length=4000)]


@router.get("/improvements", response_class=HTMLResponse)
def improvements_page(
    request: Request,
    sessions: SessionsDep,
    reads: ReadsDep,
    improvements: ImprovementsDep,
    status: Annotated[str | None, Query(max_length=40)] = None,
    after: Annotated[str | None, Query(max_length=500)] = None,
) -> Response:
    access = console_access(request, sessions, "viewer")
    return _list(request, access, reads, improvements, status if status in STATUSES else None, after)


@router.post("/improvements", response_class=HTMLResponse)
def create_improvement(
    request: Request,
    sessions: SessionsDep,
    reads: ReadsDep,
    improvements: ImprovementsDep,
    csrf_token: Annotated[str, Form(max_length=200)],
    idempotency_key: Annotated[str, Form(min_length=1, max_length=200)],
    catalog_id: Annotated[str, Form(max_length=120)],
    rationale: Text,
    adapter_version: Text = "",
    profile_version: Text = "",
    identity_generation: Text = "",
    source_id: Text = "",
    selected_adapter: Text = "",
    review_case_kind: Text = "",
    observed_from: Text = "",
    observed_to: Text = "",
) -> Response:
    access = console_form_access(request, sessions, csrf_token, "operator_admin")
    fields = {
        "source_id": source_id,
        "adapter": selected_adapter,
        "review_case_kind": review_case_kind,
        "observed_from": _day(observed_from),
        "observed_to": _day(observed_to),
    }
    try:
        body = ImprovementRequest(
            catalog_id=catalog_id,
            adapter_version=adapter_version or None,
            profile_version=profile_version or None,
            identity_generation=identity_generation.strip() or None,  # type: ignore[arg-type]
            selection={k: v for k, v in fields.items() if v},  # type: ignore[arg-type]
            rationale=rationale.strip(),
        )
        record = improvements.create(access.tenant_id, body.draft(), access.actor, idempotency_key)
    except ValidationError as error:
        problem = {"code": "VALIDATION_FAILED", "message": "; ".join(e["msg"] for e in error.errors())}
        return _list(request, access, reads, improvements, None, None, status_code=422, problem=problem)
    except (ImprovementError, UnknownAdapterVersion, UnknownProfileVersion) as error:
        problem = {"code": error.code, "message": str(error)}
        return _list(
            request, access, reads, improvements, None, None, status_code=error.status, problem=problem
        )
    return RedirectResponse(f"/console/improvements/{record.improvement.improvement_id}", status_code=303)


@router.get("/improvements/{improvement_id}", response_class=HTMLResponse)
def improvement_page(
    request: Request,
    improvement_id: ImprovementId,
    sessions: SessionsDep,
    improvements: ImprovementsDep,
    replays: ReplaysDep,
) -> Response:
    access = console_access(request, sessions, "viewer")
    return _detail(request, access, improvements, replays, improvement_id)


@router.post("/improvements/{improvement_id}/replays", response_class=HTMLResponse)
def replay_improvement(
    request: Request,
    improvement_id: ImprovementId,
    sessions: SessionsDep,
    improvements: ImprovementsDep,
    replays: ReplaysDep,
    csrf_token: Annotated[str, Form(max_length=200)],
    mode: Annotated[str, Form(pattern=r"^(dry_run|apply)$")] = "dry_run",
) -> Response:
    access = console_form_access(request, sessions, csrf_token, "operator_admin")
    try:
        requested = replays.request(
            access.tenant_id, improvement_id, "apply" if mode == "apply" else "dry_run", access.actor
        )
    except (ImprovementError, UnknownAdapterVersion, UnknownProfileVersion) as error:
        problem = {"code": error.code, "message": str(error)}
        return _detail(
            request, access, improvements, replays, improvement_id, status_code=error.status, problem=problem
        )
    return RedirectResponse(f"/console/replays/{requested.replay.replay_id}", status_code=303)


@router.get("/replays/{replay_id}", response_class=HTMLResponse)
def replay_page(
    request: Request,
    replay_id: ReplayId,
    sessions: SessionsDep,
    replays: ReplaysDep,
) -> Response:
    access = console_access(request, sessions, "viewer")
    view = ReplayDetail.of_view(replays.view(access.tenant_id, replay_id, sample=50))
    return page(request, "replay.html", {**common_context(access, "improvements"), "replay": view})


@router.post("/improvements/{improvement_id}/{move}", response_class=HTMLResponse)
def move_improvement(
    request: Request,
    improvement_id: ImprovementId,
    move: Annotated[str, Path(pattern=r"^(approve|abandon)$")],
    sessions: SessionsDep,
    improvements: ImprovementsDep,
    replays: ReplaysDep,
    csrf_token: Annotated[str, Form(max_length=200)],
    rationale: Text = "",
) -> Response:
    access = console_form_access(
        request, sessions, csrf_token, "reviewer" if move == "approve" else "operator_admin"
    )
    why = rationale.strip() or (
        "approved from the console" if move == "approve" else "abandoned from the console"
    )
    try:
        if move == "approve":
            improvements.approve(access.tenant_id, improvement_id, access.actor, why)
        else:
            improvements.abandon(access.tenant_id, improvement_id, access.actor, why)
    except ImprovementError as error:
        problem = {"code": error.code, "message": str(error)}
        return _detail(
            request,
            access,
            improvements,
            replays,
            improvement_id,
            status_code=error.status,
            problem=problem,
        )
    return RedirectResponse(f"/console/improvements/{improvement_id}", status_code=303)


def _day(value: str) -> str:
    """A date input (``2026-10-01``) as the start of that day in UTC; a full timestamp as given."""
    value = value.strip()
    if not value:
        return ""
    try:
        return (
            datetime.fromisoformat(value).date().isoformat() + "T00:00:00+00:00"
            if len(value) == 10
            else value
        )
    except ValueError:
        return value


def _list(
    request: Request,
    access: Access,
    reads: ReadsDep,
    improvements: ImprovementService,
    status: str | None,
    after: str | None,
    *,
    status_code: int = 200,
    **extra: Any,
) -> Response:
    listing = reads.improvements(access.tenant_id, limit=50, after=after, status=status)  # type: ignore[arg-type]
    adapters, profiles = improvements.installed_pins()
    context = {
        **common_context(access, "improvements"),
        "listing": listing,
        "status": status,
        "statuses": STATUSES,
        "adapters": adapters,
        "profiles": profiles,
        "can_propose": has_role(access, "operator_admin"),
        "idempotency_key": f"console:improvement:{secrets.token_urlsafe(12)}",
        **extra,
    }
    return page(request, "improvements.html", context, status_code=status_code)


def _detail(
    request: Request,
    access: Access,
    improvements: ImprovementService,
    replays: ReplayService,
    improvement_id: str,
    *,
    status_code: int = 200,
    **extra: Any,
) -> Response:
    detail = ImprovementDetail.of(
        improvements.get(access.tenant_id, improvement_id), replays.replays(access.tenant_id, improvement_id)
    )
    author = detail.created_by.split(":", 1)[-1]
    context = {
        **common_context(access, "improvements"),
        "improvement": detail,
        "can_approve": has_role(access, "reviewer") and author != access.session.subject,
        "is_author": author == access.session.subject,
        "can_abandon": has_role(access, "operator_admin"),
        "can_replay": has_role(access, "operator_admin"),
        **extra,
    }
    return page(request, "improvement.html", context, status_code=status_code)

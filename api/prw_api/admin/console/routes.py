"""The console's pages (``/console/...``, outside the OpenAPI contract):

- ``GET /console/review``: the queue with its filters (status, kind, source), counts and pages;
- ``GET /console/review/{case_id}``: a case, its evidence beside the claims and candidates, the decision form
  and the decision history;
- ``POST /console/review/{case_id}/decision``: decide (role reviewer, CSRF), with the offer values picked on an
  ``offer_uncertain`` case, then the next case of the queue;
- ``POST /console/tenant`` and ``POST /console/logout`` (CSRF): choose the active tenant, log out.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from prw_api.admin.console import files, improvements, items, operations
from prw_api.admin.console.access import common_context, console_access, console_form_access
from prw_api.admin.console.errors import ConsoleRoute, error_page
from prw_api.admin.console.forms import DecisionForm, new_idempotency_key
from prw_api.admin.console.rendering import STATIC_DIR, page
from prw_api.admin.deps import SESSION_COOKIE, DecisionsDep, ReviewDep, SessionsDep
from prw_platform.errors import DecisionError, StreamUnavailable
from prw_platform.services import Access, OperatorSessions, ReviewFilters

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

STATUSES = ("awaiting_human", "decided", "dismissed")
FilterParam = Annotated[str | None, Query(max_length=200)]


def install_console(app: FastAPI) -> None:
    app.include_router(router)
    app.include_router(operations.router)
    app.include_router(improvements.router)
    app.include_router(items.router)  # likely duplicates, merges and splits
    if app.state.files is not None:
        app.include_router(files.router)  # seed 004: failed catalog files
    app.mount("/console/static", StaticFiles(directory=STATIC_DIR), name="console-static")


def _filters(status: str | None, kind: str | None, source: str | None) -> ReviewFilters:
    return ReviewFilters(
        status=status if status in STATUSES else None, kind=kind or None, source_id=source or None
    )


def _query(filters: ReviewFilters, **extra: str) -> str:
    params = {"status": filters.status or "", "kind": filters.kind or "", "source": filters.source_id or ""}
    return urlencode({k: v for k, v in {**params, **extra}.items() if v})


@router.get("", response_class=RedirectResponse)
def console_home() -> RedirectResponse:
    return RedirectResponse("/console/review?status=awaiting_human", status_code=303)


@router.get("/review", response_class=HTMLResponse)
def queue_page(
    request: Request,
    sessions: SessionsDep,
    review: ReviewDep,
    status: FilterParam = None,
    kind: FilterParam = None,
    source: FilterParam = None,
    cursor: Annotated[str | None, Query(max_length=1000)] = None,
    decided: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    access = console_access(request, sessions, "viewer")
    filters = _filters(status, kind, source)
    listing = review.page(access.tenant_id, filters, cursor=cursor or None, limit=50)
    context = {
        **common_context(access, "review"),
        "page": listing,
        "filters": filters,
        "statuses": STATUSES,
        "query": _query(filters),
        "next_query": _query(filters, cursor=listing.next_cursor) if listing.next_cursor else None,
        "decided": decided,
    }
    return page(request, "queue.html", context)


def _case_page(
    request: Request, access: Access, review: ReviewDep, case_id: str, filters: ReviewFilters, **extra: Any
) -> Response:
    view = review.case(access.tenant_id, case_id)
    following = review.next_case(access.tenant_id, filters, case_id)
    context = {
        **common_context(access, "review"),
        "view": view,
        "case": view.case,
        "filters": filters,
        "query": _query(filters),
        "next_case": following,
        "idempotency_key": new_idempotency_key(case_id, view.case.revision),
        **extra,
    }
    return page(request, "case.html", context, status_code=409 if extra.get("problem") else 200)


@router.get("/review/{case_id}", response_class=HTMLResponse)
def case_page(
    request: Request,
    case_id: str,
    sessions: SessionsDep,
    review: ReviewDep,
    status: FilterParam = None,
    kind: FilterParam = None,
    source: FilterParam = None,
    decided: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    access = console_access(request, sessions, "viewer")
    return _case_page(request, access, review, case_id, _filters(status, kind, source), decided=decided)


@router.post("/review/{case_id}/decision")
def decide(
    request: Request,
    case_id: str,
    sessions: SessionsDep,
    review: ReviewDep,
    decisions: DecisionsDep,
    csrf_token: Annotated[str, Form(max_length=200)],
    expected_revision: Annotated[int, Form(ge=1)],
    decision: Annotated[str, Form(max_length=200)],
    idempotency_key: Annotated[str, Form(min_length=1, max_length=200)],
    rationale: Annotated[str, Form(max_length=4000)] = "",
    status: Annotated[str, Form(max_length=200)] = "",
    kind: Annotated[str, Form(max_length=200)] = "",
    source: Annotated[str, Form(max_length=200)] = "",
    offer_price: Annotated[str, Form(max_length=1000)] = "",
    offer_currency: Annotated[str, Form(max_length=1000)] = "",
    offer_availability: Annotated[str, Form(max_length=1000)] = "",
    not_an_offer: Annotated[bool, Form()] = False,
) -> Response:
    access = console_form_access(request, sessions, csrf_token, "reviewer")
    filters = _filters(status, kind, source)
    offer = {
        "core:price": offer_price,
        "core:currency": offer_currency,
        "core:availability": offer_availability,
    }
    form = DecisionForm(
        case_id, expected_revision, decision, rationale, idempotency_key, offer, not_an_offer=not_an_offer
    )
    view = review.case(access.tenant_id, case_id)
    try:
        decisions.decide_review(form.to_decision(access, view), access.tenant_id)
    except (DecisionError, StreamUnavailable) as error:
        # 409 STALE_CASE_REVISION: reload and re-check, never retry blindly (if_review_decision).
        problem = {"code": error.code, "message": str(error)}
        return _case_page(request, access, review, case_id, filters, problem=problem)
    following = review.next_case(access.tenant_id, filters, case_id)
    target = f"/console/review/{following}" if following else "/console/review"
    return RedirectResponse(f"{target}?{_query(filters, decided=case_id)}", status_code=303)


@router.post("/tenant")
def choose_tenant(
    request: Request,
    sessions: SessionsDep,
    csrf_token: Annotated[str, Form(max_length=200)],
    tenant_id: Annotated[str, Form(min_length=1, max_length=200)],
) -> Response:
    session = sessions.authenticate(request.cookies.get(SESSION_COOKIE))
    OperatorSessions.check_csrf(session, csrf_token)
    sessions.choose_tenant(session, tenant_id)
    return RedirectResponse("/console/review?status=awaiting_human", status_code=303)


@router.post("/logout")
def logout(
    request: Request, sessions: SessionsDep, csrf_token: Annotated[str, Form(max_length=200)]
) -> Response:
    token = request.cookies.get(SESSION_COOKIE)
    OperatorSessions.check_csrf(sessions.authenticate(token), csrf_token)
    sessions.close(token)
    response = error_page(request, 200, "LOGGED_OUT", "You are logged out.")
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response

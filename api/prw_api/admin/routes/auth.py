"""Operator login (if_operator_session): OIDC authorization code + PKCE, then a server-side session.

- ``GET /auth/login?return_to=/review``: 302 to the issuer's authorize endpoint (the seed's example), with the
  login's state, nonce and PKCE verifier in a short-lived HttpOnly cookie (SameSite=Lax: the issuer's redirect
  back is a cross-site navigation, and a Strict cookie would not come with it).
- ``GET /auth/callback``: checks state, redeems the code, verifies the ID token, opens the session and sets its
  cookie: HttpOnly, SameSite=Strict, Secure except on plain-http loopback (``prw dev``). It answers with a small
  page that moves on to ``return_to`` itself: a Strict cookie set at the end of a cross-site redirect chain is only
  sent from the next same-site navigation on.
- ``POST /auth/logout`` (CSRF): the session row is revoked, the cookie cleared.
- ``GET /v1/session``: who is logged in, the roles per tenant, the active tenant and the CSRF token.
- ``PUT /v1/session/tenant`` (CSRF): choose the active tenant, one of the memberships (403 TENANT_SCOPE_DENIED).
"""

from __future__ import annotations

import html
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from prw_api.admin.deps import (
    DISCOVERY_PATH,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    CsrfSessionDep,
    OidcDep,
    SessionDep,
    SessionsDep,
)
from prw_api.admin.models import SessionBody, TenantChoiceRequest
from prw_api.admin.oidc import LOGIN_TTL_SECONDS, LoginState, OidcRelyingParty
from prw_api.errors import ErrorBody
from prw_api.routing import PlatformRoute

router = APIRouter(tags=["session"], route_class=PlatformRoute)

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_ERRORS: dict[int | str, dict[str, Any]] = {status: {"model": ErrorBody} for status in (401, 403, 422, 503)}


def _json_error(description: str) -> dict[str, Any]:
    """An error of the HTML login callback is still a JSON error body (FastAPI would file a ``model`` under the
    route's own text/html), so its schema is named by reference."""
    schema = {"$ref": "#/components/schemas/ErrorBody"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def secure_cookies(request: Request) -> bool:
    """Secure everywhere except plain http on loopback, where a browser would not send a Secure cookie back."""
    return not (request.url.scheme == "http" and request.url.hostname in _LOOPBACK)


def _redirect_uri(request: Request, oidc: OidcRelyingParty) -> str:
    """The configured redirect URI; only without one (``prw dev``), the callback's URL as this request reached it."""
    return oidc.settings.redirect_uri or str(request.url_for("authCallback"))


@router.get(DISCOVERY_PATH, operation_id="operatorOidcDiscovery", include_in_schema=False)
def discovery(oidc: OidcDep) -> RedirectResponse:
    return RedirectResponse(f"{oidc.issuer}/.well-known/openid-configuration", status_code=302)


@router.get(
    "/auth/login",
    operation_id="operatorLogin",
    name="authLogin",
    status_code=302,
    response_class=RedirectResponse,
    responses={
        302: {"description": "redirect to the issuer's authorize endpoint"},
        503: {"model": ErrorBody},
    },
)
def login(
    request: Request,
    oidc: OidcDep,
    return_to: Annotated[str | None, Query(max_length=2000)] = None,
    login_hint: Annotated[str | None, Query(max_length=200)] = None,
) -> RedirectResponse:
    url, state = oidc.begin(_redirect_uri(request, oidc), return_to, login_hint)
    response = RedirectResponse(url, status_code=302)
    response.set_cookie(
        LOGIN_COOKIE,
        state.encode(),
        max_age=LOGIN_TTL_SECONDS,
        path="/auth",
        httponly=True,
        secure=secure_cookies(request),
        samesite="lax",
    )
    return response


@router.get(
    "/auth/callback",
    operation_id="operatorLoginCallback",
    name="authCallback",
    response_class=HTMLResponse,
    responses={
        400: _json_error("LOGIN_FAILED: no login in progress, a wrong state, or a code the issuer refused"),
        422: _json_error("VALIDATION_FAILED: code or state missing"),
        503: _json_error("UNAVAILABLE: the issuer did not answer"),
    },
)
def callback(
    request: Request,
    oidc: OidcDep,
    sessions: SessionsDep,
    code: Annotated[str, Query(min_length=1, max_length=2000)],
    state: Annotated[str, Query(min_length=1, max_length=2000)],
) -> HTMLResponse:
    login = LoginState.decode(request.cookies.get(LOGIN_COOKIE))
    identity = oidc.complete(code, state, login, _redirect_uri(request, oidc))
    opened = sessions.open(identity)
    target = html.escape(login.return_to, quote=True)
    page = (
        f'<!doctype html><meta http-equiv="refresh" content="0;url={target}">'
        f'<title>Logged in</title><p>Logged in. <a href="{target}">Continue</a></p>'
    )
    response = HTMLResponse(page, headers={"Cache-Control": "no-store"})
    response.delete_cookie(LOGIN_COOKIE, path="/auth")
    response.set_cookie(
        SESSION_COOKIE,
        opened.token,
        max_age=int(sessions.absolute.total_seconds()),
        path="/",
        httponly=True,
        secure=secure_cookies(request),
        samesite="strict",
    )
    return response


@router.post(
    "/auth/logout",
    operation_id="operatorLogout",
    status_code=204,
    response_class=Response,
    responses=_ERRORS,
)
def logout(request: Request, session: CsrfSessionDep, sessions: SessionsDep) -> Response:
    sessions.close(request.cookies.get(SESSION_COOKIE))
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@router.get("/v1/session", operation_id="getSession", response_model=SessionBody, responses=_ERRORS)
def get_session(session: SessionDep, sessions: SessionsDep) -> SessionBody:
    return SessionBody.of(session, sessions.idle.total_seconds())


@router.put("/v1/session/tenant", operation_id="chooseTenant", response_model=SessionBody, responses=_ERRORS)
def choose_tenant(choice: TenantChoiceRequest, session: CsrfSessionDep, sessions: SessionsDep) -> SessionBody:
    return SessionBody.of(sessions.choose_tenant(session, choice.tenant_id), sessions.idle.total_seconds())

"""Dependencies of the admin routes: the operator session (cookie), its CSRF token, the tenant and the role.

Every protected route depends on ``RoleAccess(role)``, which checks, in this order: a live session (401
SESSION_EXPIRED), for a state-changing request the CSRF token (403 CSRF_REJECTED), a membership in the requested
tenant (403 TENANT_SCOPE_DENIED), and the role there (403 FORBIDDEN). The tenant is the session's active tenant,
or the one an ``X-PRW-Tenant`` header names (it must be a membership too).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import OpenIdConnect

from prw_api.admin.oidc import OidcRelyingParty
from prw_platform.services import (
    Access,
    AdminReads,
    DecisionService,
    OperatorSession,
    OperatorSessions,
    ReviewQueue,
    Role,
)

SESSION_COOKIE = "prw_session"
LOGIN_COOKIE = "prw_login"
CSRF_HEADER = "X-CSRF-Token"
TENANT_HEADER = "X-PRW-Tenant"
#: Where the admin origin points at its issuer's discovery document (a redirect): the operatorOidc scheme's
#: openIdConnectUrl stays the same whatever the issuer.
DISCOVERY_PATH = "/auth/openid-configuration"

# if_operator_session: securitySchemes.operatorOidc. The browser holds the session as a cookie after the login.
operator_oidc = OpenIdConnect(openIdConnectUrl=DISCOVERY_PATH, scheme_name="operatorOidc", auto_error=False)


def get_sessions(request: Request) -> OperatorSessions:
    sessions: OperatorSessions = request.app.state.sessions
    return sessions


def get_oidc(request: Request) -> OidcRelyingParty:
    oidc: OidcRelyingParty = request.app.state.oidc
    return oidc


def get_decisions(request: Request) -> DecisionService:
    decisions: DecisionService = request.app.state.decisions
    return decisions


def get_review(request: Request) -> ReviewQueue:
    review: ReviewQueue = request.app.state.review
    return review


SessionsDep = Annotated[OperatorSessions, Depends(get_sessions)]
OidcDep = Annotated[OidcRelyingParty, Depends(get_oidc)]
DecisionsDep = Annotated[DecisionService, Depends(get_decisions)]
ReviewDep = Annotated[ReviewQueue, Depends(get_review)]


def current_session(
    request: Request, sessions: SessionsDep, _scheme: Annotated[str | None, Depends(operator_oidc)]
) -> OperatorSession:
    return sessions.authenticate(request.cookies.get(SESSION_COOKIE))


SessionDep = Annotated[OperatorSession, Depends(current_session)]


def csrf_checked(request: Request, session: SessionDep) -> OperatorSession:
    """A state-changing request: the session's CSRF token in ``X-CSRF-Token`` (or, for a form post of the
    console, the ``csrf_token`` field, which the console's route checks itself)."""
    OperatorSessions.check_csrf(session, request.headers.get(CSRF_HEADER))
    return session


CsrfSessionDep = Annotated[OperatorSession, Depends(csrf_checked)]


class RoleAccess:
    """``Depends(RoleAccess("reviewer", state_changing=True))``: the request's ``Access`` or the seed's error."""

    def __init__(self, role: Role, *, state_changing: bool = False) -> None:
        self.role: Role = role
        self.state_changing = state_changing

    def __call__(
        self,
        request: Request,
        session: SessionDep,
        tenant: Annotated[str | None, Header(alias=TENANT_HEADER)] = None,
    ) -> Access:
        if self.state_changing:
            OperatorSessions.check_csrf(session, request.headers.get(CSRF_HEADER))
        return OperatorSessions.authorize(session, self.role, tenant or None)


ViewerDep = Annotated[Access, Depends(RoleAccess("viewer"))]
ReviewerWriteDep = Annotated[Access, Depends(RoleAccess("reviewer", state_changing=True))]
AdminDep = Annotated[Access, Depends(RoleAccess("operator_admin"))]
AdminWriteDep = Annotated[Access, Depends(RoleAccess("operator_admin", state_changing=True))]


def get_reads(request: Request) -> AdminReads:
    reads: AdminReads = request.app.state.reads
    return reads


ReadsDep = Annotated[AdminReads, Depends(get_reads)]

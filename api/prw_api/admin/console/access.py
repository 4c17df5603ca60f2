"""The console's session check and what every console page shows of it (operator, tenant, role, CSRF token)."""

from __future__ import annotations

from typing import Any, Final

from fastapi import Request

from prw_api.admin.deps import SESSION_COOKIE
from prw_platform.services import Access, OperatorSession, OperatorSessions, Role

_RANK: Final[dict[str, int]] = {"viewer": 0, "reviewer": 1, "operator_admin": 2}


def console_access(request: Request, sessions: OperatorSessions, role: Role) -> Access:
    """A live session (else the login) with ``role`` or more in its active tenant (else a 403 page)."""
    return OperatorSessions.authorize(console_session(request, sessions), role)


def console_form_access(request: Request, sessions: OperatorSessions, csrf_token: str, role: Role) -> Access:
    """A form post: the session, its CSRF token in the form (403 CSRF_REJECTED), then the role."""
    session = console_session(request, sessions)
    OperatorSessions.check_csrf(session, csrf_token)
    return OperatorSessions.authorize(session, role)


def console_session(request: Request, sessions: OperatorSessions) -> OperatorSession:
    return sessions.authenticate(request.cookies.get(SESSION_COOKIE))


def has_role(access: Access, role: Role) -> bool:
    return _RANK[access.role] >= _RANK[role]


def common_context(access: Access, section: str) -> dict[str, Any]:
    session = access.session
    return {
        "operator": session.display_name or session.subject,
        "tenant": access.tenant_id,
        "role": access.role,
        "memberships": sorted(session.memberships),
        "csrf_token": session.csrf_token,
        "can_decide": has_role(access, "reviewer"),
        "can_release": has_role(access, "operator_admin"),
        "section": section,
    }

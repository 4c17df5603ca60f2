"""Operator sessions (if_operator_session): server-side rows behind the admin origin's session cookie.

The OIDC login itself (discovery, PKCE, state, nonce, the ID token's signature) is the admin edge's: it hands
this module a verified ``OperatorIdentity`` and gets back a random session token for the cookie. Everything after
that is here, because it is state: the row (``resolver.operator_session``, migration 0010), the two deadlines of
the seed (idle 30 min, absolute 12 h), the CSRF token a state-changing request must echo, the active tenant (one
of the memberships), and the role check per tenant (viewer < reviewer < operator_admin).

Errors, as the seed's table: 401 SESSION_EXPIRED (re-login), 403 TENANT_SCOPE_DENIED (no membership in the
requested tenant), 403 FORBIDDEN (role insufficient). A state-changing request without the session's CSRF token
is 403 CSRF_REJECTED (no seed code; documented in docs/operators/login.md).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal
from urllib.parse import quote

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.auth.errors import AuthError
from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Connection, Database

Role = Literal["viewer", "reviewer", "operator_admin"]
#: if_operator_session: "Roles per tenant: viewer, reviewer, operator_admin"; each includes the ones before it.
ROLES: Final[tuple[Role, ...]] = ("viewer", "reviewer", "operator_admin")
_RANK: Final[Mapping[str, int]] = {role: rank for rank, role in enumerate(ROLES)}

#: if_operator_session Timeouts: "Session idle 30 min, absolute 12 h".
IDLE: Final = timedelta(minutes=30)
ABSOLUTE: Final = timedelta(hours=12)


class SessionExpired(AuthError):
    """401 SESSION_EXPIRED, do not retry: no session, an unknown, logged-out, idle or too old one. Re-login."""

    code = "SESSION_EXPIRED"
    status = 401


class TenantScopeDenied(AuthError):
    """403 TENANT_SCOPE_DENIED, do not retry: the session has no membership in the requested tenant."""

    code = "TENANT_SCOPE_DENIED"
    status = 403


class Forbidden(AuthError):
    """403 FORBIDDEN, do not retry: the session's role in the tenant is insufficient."""

    code = "FORBIDDEN"
    status = 403


class CsrfRejected(AuthError):
    """403 CSRF_REJECTED: a state-changing request did not carry the session's CSRF token."""

    code = "CSRF_REJECTED"
    status = 403


def check_memberships(memberships: Mapping[str, str]) -> dict[str, Role]:
    """Roles per tenant as the identity provider asserted them; an unknown role is refused, never guessed."""
    checked: dict[str, Role] = {}
    for tenant, role in memberships.items():
        if not isinstance(tenant, str) or not tenant:
            raise ValueError(f"a tenant membership names no tenant: {tenant!r}")
        if role not in _RANK:
            raise ValueError(f"{role!r} is not an operator role ({', '.join(ROLES)})")
        checked[tenant] = role  # type: ignore[assignment]  # checked against ROLES just above
    return checked


@dataclass(frozen=True, slots=True)
class OperatorIdentity:
    """Who logged in, as the identity provider's verified ID token says."""

    issuer: str
    subject: str
    memberships: Mapping[str, str]
    display_name: str | None = None
    email: str | None = None


@dataclass(frozen=True, slots=True)
class OperatorSession:
    token_sha256: str
    issuer: str
    subject: str
    display_name: str | None
    email: str | None
    memberships: dict[str, Any]
    active_tenant: str | None
    csrf_token: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    revoked_at: datetime | None

    def role_in(self, tenant_id: str) -> str | None:
        role = self.memberships.get(tenant_id)
        return role if isinstance(role, str) else None

    def actor(self, role: str) -> str:
        """The decision actor (``reviewer:<subject>`` or ``operator:<subject>``): never a rule, never an LLM."""
        kind = "operator" if role == "operator_admin" else "reviewer"
        return f"{kind}:{quote(self.subject, safe='@._-')}"


@dataclass(frozen=True, slots=True)
class Access:
    """What one authorized request may do: in ``tenant_id``, with ``role``, acting as ``actor``."""

    session: OperatorSession
    tenant_id: str
    role: str

    @property
    def actor(self) -> str:
        return self.session.actor(self.role)


@dataclass(frozen=True, slots=True)
class OpenedSession:
    """``token`` goes into the cookie and nowhere else; the row keeps its sha256."""

    token: str
    session: OperatorSession


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class OperatorSessions:
    """The session store of the admin origin (resolver_app, API timeouts)."""

    def __init__(
        self,
        db: Database,
        *,
        idle: timedelta = IDLE,
        absolute: timedelta = ABSOLUTE,
        clock: Clock = utc_now,
    ) -> None:
        self._db = db
        self.idle = idle
        self.absolute = absolute
        self._clock = clock
        # last_seen_at is written at most this often: a page of reads costs one UPDATE, not one each.
        self._touch_every = min(timedelta(seconds=60), idle / 10)

    def ready(self) -> None:
        """The admin origin's readiness: its database answers (503 otherwise)."""
        self._db.ready(timeout_s=2.0)

    def open(self, identity: OperatorIdentity) -> OpenedSession:
        """A new session after a verified login; the active tenant starts as the first membership."""
        memberships = check_memberships(identity.memberships)
        token = secrets.token_urlsafe(32)
        now = self._clock()
        session = OperatorSession(
            token_sha256=token_sha256(token),
            issuer=identity.issuer,
            subject=identity.subject,
            display_name=identity.display_name,
            email=identity.email,
            memberships=dict(memberships),
            active_tenant=next(iter(memberships), None),
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            last_seen_at=now,
            expires_at=now + self.absolute,
            revoked_at=None,
        )

        def insert(conn: Connection) -> None:
            conn.execute(
                """INSERT INTO resolver.operator_session (token_sha256, issuer, subject, display_name, email,
                       memberships, active_tenant, csrf_token, created_at, last_seen_at, expires_at, revoked_at)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                (
                    session.token_sha256,
                    session.issuer,
                    session.subject,
                    session.display_name,
                    session.email,
                    Jsonb(session.memberships),
                    session.active_tenant,
                    session.csrf_token,
                    session.created_at,
                    session.last_seen_at,
                    session.expires_at,
                    None,
                ),
            )

        self._db.run(insert)
        return OpenedSession(token, session)

    def authenticate(self, token: str | None) -> OperatorSession:
        """The live session of a cookie, its idle deadline pushed on; 401 SESSION_EXPIRED otherwise."""
        if not token:
            raise SessionExpired("no operator session: log in at /auth/login")
        digest = token_sha256(token)
        now = self._clock()

        def read(conn: Connection) -> OperatorSession | None:
            with conn.cursor(row_factory=class_row(OperatorSession)) as cur:
                session = cur.execute(
                    """SELECT token_sha256, issuer, subject, display_name, email, memberships, active_tenant,
                              csrf_token, created_at, last_seen_at, expires_at, revoked_at
                       FROM resolver.operator_session WHERE token_sha256 = %s""",
                    (digest,),
                ).fetchone()
            if session is None or not self._live(session, now):
                return None
            if now - session.last_seen_at >= self._touch_every:
                conn.execute(
                    "UPDATE resolver.operator_session SET last_seen_at = %s WHERE token_sha256 = %s",
                    (now, digest),
                )
            return session

        session = self._db.run(read)
        if session is None:
            raise SessionExpired("the operator session expired or was closed: log in again")
        return session

    def _live(self, session: OperatorSession, now: datetime) -> bool:
        return (
            session.revoked_at is None and now < session.expires_at and now - session.last_seen_at < self.idle
        )

    def close(self, token: str | None) -> None:
        """Logout: the row is revoked, the token is dead for good (idempotent)."""
        if not token:
            return
        now = self._clock()
        self._db.run(
            lambda conn: conn.execute(
                "UPDATE resolver.operator_session SET revoked_at = %s "
                "WHERE token_sha256 = %s AND revoked_at IS NULL",
                (now, token_sha256(token)),
            )
        )

    def choose_tenant(self, session: OperatorSession, tenant_id: str) -> OperatorSession:
        """if_operator_session Tenant: "The active tenant is chosen in the UI and must be one of them"."""
        if session.role_in(tenant_id) is None:
            raise TenantScopeDenied(f"{session.subject} has no membership in tenant {tenant_id}")
        self._db.run(
            lambda conn: conn.execute(
                "UPDATE resolver.operator_session SET active_tenant = %s WHERE token_sha256 = %s",
                (tenant_id, session.token_sha256),
            )
        )
        return OperatorSession(**{**_fields(session), "active_tenant": tenant_id})

    @staticmethod
    def authorize(session: OperatorSession, role: Role, tenant_id: str | None = None) -> Access:
        """The request acts in ``tenant_id`` (default: the session's active tenant), which must be one of the
        memberships (403 TENANT_SCOPE_DENIED), with at least ``role`` there (403 FORBIDDEN)."""
        tenant = tenant_id or session.active_tenant
        held = session.role_in(tenant) if tenant else None
        if tenant is None or held is None:
            raise TenantScopeDenied(f"{session.subject} has no membership in tenant {tenant or '(none)'}")
        if _RANK[held] < _RANK[role]:
            raise Forbidden(f"{session.subject} is {held} in {tenant}; this needs {role}")
        return Access(session, tenant, held)

    @staticmethod
    def check_csrf(session: OperatorSession, presented: str | None) -> None:
        """Every state-changing request echoes the session's CSRF token (header ``X-CSRF-Token`` or form
        field ``csrf_token``); compared in constant time."""
        if not presented or not hmac.compare_digest(presented.encode(), session.csrf_token.encode()):
            raise CsrfRejected("a state-changing request needs the session's CSRF token (X-CSRF-Token)")


def _fields(session: OperatorSession) -> dict[str, Any]:
    return {name: getattr(session, name) for name in OperatorSession.__slots__}

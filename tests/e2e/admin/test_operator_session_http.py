"""if_operator_session over real HTTP: OIDC authorization code + PKCE against the development identity provider,
the server-side session row and its cookie, idle 30 min / absolute 12 h, CSRF on state-changing requests, and
the seed's errors: 401 SESSION_EXPIRED, 403 TENANT_SCOPE_DENIED, 403 FORBIDDEN."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from prw_api import compose
from prw_api.devidp import create_dev_idp
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import bootstrap
from prw_platform.config import DevIdpSettings, Settings
from prw_platform.db.database import Database
from tests.e2e.admin.conftest import TENANT, USERS, MovableClock, Operator


@pytest.fixture
def dev_idp() -> Iterator[BackgroundServer]:
    """An identity provider of each test's own here, not the worker's: one test stops it."""
    with BackgroundServer(create_dev_idp(DevIdpSettings(users=USERS))) as server:
        yield server


def _sessions(owner: Database) -> list[dict[str, object]]:
    with owner.transaction(read_only=True) as conn:
        return conn.execute("SELECT * FROM resolver.operator_session ORDER BY created_at").fetchall()


def test_login_redirects_to_the_issuer_with_pkce_state_and_nonce(
    admin: BackgroundServer, dev_idp: BackgroundServer
) -> None:
    with httpx.Client(base_url=admin.url) as http:
        response = http.get("/auth/login", params={"return_to": "/review"})
    assert response.status_code == 302
    location = urlsplit(response.headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == f"{dev_idp.url}/authorize"
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert query["response_type"] == "code"
    assert query["client_id"] == "prw-admin"
    assert query["code_challenge_method"] == "S256"
    assert len(query["code_challenge"]) == 43  # base64url(SHA-256) without padding
    assert len(query["state"]) >= 32
    assert len(query["nonce"]) >= 32
    assert query["state"] != query["nonce"]
    assert query["redirect_uri"] == f"{admin.url}/auth/callback"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("prw_login=")
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie


def test_a_configured_redirect_uri_wins_over_the_host_a_request_arrives_with(
    admin_settings: Settings, clock: MovableClock
) -> None:
    """Behind a proxy the Host header and scheme are not the admin origin's: the registered redirect URI is used
    for the authorize request and the code redemption, never one built from a spoofable Host."""
    registered = "https://admin.example.test/auth/callback"
    configured = admin_settings.operator_oidc.model_copy(update={"redirect_uri": registered})
    settings = admin_settings.model_copy(update={"operator_oidc": configured})
    with (
        bootstrap(settings, clock=clock) as platform,
        BackgroundServer(compose.admin_app(platform)) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        response = http.get("/auth/login", headers={"Host": "evil.example.test"})
    assert response.status_code == 302
    query = {k: v[0] for k, v in parse_qs(urlsplit(response.headers["location"]).query).items()}
    assert query["redirect_uri"] == registered


def test_login_through_the_dev_idp_opens_a_server_side_session_with_a_strict_http_only_cookie(
    login: Callable[[str], Operator], owner: Database
) -> None:
    rita = login("rita")
    cookies = [
        h
        for r in (*rita.login_response.history, rita.login_response)
        for h in r.headers.get_list("set-cookie")
    ]
    session_cookie = next(c for c in cookies if c.startswith("prw_session="))
    assert "HttpOnly" in session_cookie
    assert "SameSite=strict" in session_cookie
    assert (
        "Secure" not in session_cookie
    )  # plain http on loopback: a browser would not send a Secure cookie back

    body = rita.session().json()
    assert body["subject"] == "rita"
    assert body["memberships"] == {TENANT: "reviewer"}
    assert body["active_tenant"] == TENANT
    assert body["csrf_token"] == rita.csrf

    (row,) = _sessions(owner)
    token = rita.http.cookies["prw_session"]
    assert row["token_sha256"] == hashlib.sha256(token.encode()).hexdigest()  # the token itself is not stored
    assert row["subject"] == "rita"
    assert row["revoked_at"] is None
    assert row["expires_at"] - row["created_at"] == timedelta(hours=12)


def test_no_or_unknown_session_is_401_session_expired(admin: BackgroundServer) -> None:
    with httpx.Client(base_url=admin.url) as http:
        missing = http.get("/v1/session")
    with httpx.Client(base_url=admin.url, cookies={"prw_session": "not-a-session"}) as http:
        forged = http.get("/v1/session")
    for response in (missing, forged):
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "SESSION_EXPIRED"


def test_a_session_idle_for_30_minutes_is_401_session_expired(
    login: Callable[[str], Operator], clock: MovableClock
) -> None:
    rita = login("rita")
    clock.advance(timedelta(minutes=29))
    assert rita.session().status_code == 200  # activity pushes the idle deadline on
    clock.advance(timedelta(minutes=29))
    assert rita.session().status_code == 200
    clock.advance(timedelta(minutes=30, seconds=1))
    response = rita.session()
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "SESSION_EXPIRED"


def test_an_active_session_ends_after_12_hours(login: Callable[[str], Operator], clock: MovableClock) -> None:
    rita = login("rita")
    for _ in range(12 * 3 - 1):  # every 20 minutes for 11 h 40 min
        clock.advance(timedelta(minutes=20))
        assert rita.session().status_code == 200
    clock.advance(timedelta(minutes=20, seconds=1))
    response = rita.session()
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "SESSION_EXPIRED"


def test_logout_needs_the_csrf_token_and_then_kills_the_session(
    login: Callable[[str], Operator], owner: Database
) -> None:
    rita = login("rita")
    refused = rita.http.post("/auth/logout")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "CSRF_REJECTED"
    assert rita.session().status_code == 200

    token = rita.http.cookies["prw_session"]
    assert rita.http.post("/auth/logout", headers={"X-CSRF-Token": rita.csrf}).status_code == 204
    (row,) = _sessions(owner)
    assert row["revoked_at"] is not None
    with httpx.Client(base_url=rita.http.base_url, cookies={"prw_session": token}) as replay:
        replayed = replay.get("/v1/session")
    assert replayed.status_code == 401
    assert replayed.json()["error"]["code"] == "SESSION_EXPIRED"


def test_the_active_tenant_must_be_a_membership(login: Callable[[str], Operator]) -> None:
    mia = login("mia")
    assert mia.session().json()["active_tenant"] == "ten_other"
    headers = {"X-CSRF-Token": mia.csrf}
    chosen = mia.http.put("/v1/session/tenant", json={"tenant_id": TENANT}, headers=headers)
    assert chosen.status_code == 200
    assert chosen.json()["active_tenant"] == TENANT
    assert mia.session().json()["active_tenant"] == TENANT

    denied = mia.http.put("/v1/session/tenant", json={"tenant_id": "ten_stranger"}, headers=headers)
    assert denied.status_code == 403
    assert denied.json()["error"]["code"] == "TENANT_SCOPE_DENIED"
    assert mia.session().json()["active_tenant"] == TENANT
    no_csrf = mia.http.put("/v1/session/tenant", json={"tenant_id": "ten_other"})
    assert no_csrf.status_code == 403
    assert no_csrf.json()["error"]["code"] == "CSRF_REJECTED"


def test_a_callback_with_another_state_is_refused_and_opens_no_session(
    admin: BackgroundServer, owner: Database
) -> None:
    with httpx.Client(base_url=admin.url) as http:
        to_idp = http.get("/auth/login", params={"login_hint": "rita"})
        back = httpx.get(to_idp.headers["location"])  # the issuer redirects with code and state
        code = parse_qs(urlsplit(back.headers["location"]).query)["code"][0]
        refused = http.get("/auth/callback", params={"code": code, "state": "forged-state"})
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "LOGIN_FAILED"
    assert "prw_session" not in refused.headers.get("set-cookie", "")
    assert _sessions(owner) == []


def test_a_callback_without_the_browsers_pkce_verifier_is_refused_by_the_issuer(
    admin: BackgroundServer, owner: Database
) -> None:
    """Another browser's code (a stolen redirect) cannot be redeemed: its PKCE verifier lives in the first
    browser's login cookie, and the issuer refuses the code without it."""
    with httpx.Client(base_url=admin.url) as victim, httpx.Client(base_url=admin.url) as attacker:
        to_idp = victim.get("/auth/login", params={"login_hint": "rita"})
        back = httpx.get(to_idp.headers["location"])
        returned = {k: v[0] for k, v in parse_qs(urlsplit(back.headers["location"]).query).items()}
        attacker.get("/auth/login", params={"login_hint": "vic"})  # a login cookie of its own
        refused = attacker.get("/auth/callback", params=returned)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "LOGIN_FAILED"
    assert _sessions(owner) == []


def test_an_unreachable_issuer_is_503_unavailable(admin_platform: object, dev_idp: BackgroundServer) -> None:
    from prw_api import compose
    from prw_platform.bootstrap import Platform

    assert isinstance(admin_platform, Platform)
    dev_idp.stop()
    with (
        BackgroundServer(compose.admin_app(admin_platform)) as admin,
        httpx.Client(base_url=admin.url) as http,
    ):
        response = http.get("/auth/login")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "UNAVAILABLE"
    assert response.headers["retry-after"]

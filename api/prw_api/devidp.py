"""The development identity provider: a small OIDC issuer for ``prw dev`` and the tests, so operator login works
offline. Never for production: it has no passwords.

It speaks the parts of OpenID Connect the admin origin uses, and checks them as a real issuer would:

- ``GET /.well-known/openid-configuration`` (discovery) and ``GET /jwks`` (its RS256 public key, made at start);
- ``GET /authorize`` (authorization code flow): ``response_type=code``, the registered ``client_id``, a
  registered ``redirect_uri`` (``PRW_DEV_IDP__REDIRECT_URIS``; a loopback one matches on any port, RFC 8252 7.3),
  ``state``, ``nonce`` and a PKCE ``code_challenge`` with ``code_challenge_method=S256`` are required; a wrong one
  is an error page, never a redirect. It shows a page with one button per configured user;
  ``login_hint=<subject>`` picks the user without the page (scripts, tests, ``prw demo``). Then it redirects to
  ``redirect_uri?code=...&state=...``;
- ``POST /token``: the code (once, within 60 s) for an ID token, if the ``redirect_uri`` and ``client_id`` match
  and ``SHA256(code_verifier)`` is the challenge. The ID token carries ``nonce``, ``name``, ``email`` and the
  user's roles per tenant in ``prw_tenants``.

A request body above ``MAX_BODY_BYTES`` is 413 before it is read, as at the platform's origins: the provider runs
in the process that serves them under ``prw dev``.

Users come from settings (``PRW_DEV_IDP__USERS``, ``prw_platform.config.DevIdpSettings``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from prw_api.middleware import BodyLimit, BodySizeLimitMiddleware
from prw_platform.config import DevIdpSettings, DevUser

CODE_TTL_SECONDS = 60
ID_TOKEN_TTL_SECONDS = 300
MEMBERSHIPS_CLAIM = "prw_tenants"
#: The login form and the token request are a few hundred bytes.
MAX_BODY_BYTES = 64 * 1024
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class _Grant:
    user: DevUser
    client_id: str
    redirect_uri: str
    code_challenge: str
    nonce: str
    expires: float


_LOGIN_STYLE = (
    "body{margin:0;background:#f6f7f9;font:15px/1.45 system-ui,sans-serif;color:#1c2430}"
    "main{max-width:32rem;margin:4rem auto;background:#fff;border:1px solid #dde2ea;border-radius:8px;"
    "padding:1.5rem 1.8rem}h1{font-size:1.3rem;margin:0 0 .4rem}p{color:#5d6878}"
    "button{display:block;width:100%;text-align:left;margin:.35rem 0;padding:.55rem .8rem;font:inherit;"
    "border:1px solid #dde2ea;border-radius:6px;background:#fff;cursor:pointer}"
    "button:hover,button:focus-visible{border-color:#1f5fbf;outline:none;background:#f5f9ff}br{display:none}"
)


def _issuer(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def registered_redirect_uris(registered: Sequence[str]) -> re.Pattern[str]:
    """What ``fullmatch``es one of the ``registered`` redirect URIs: exactly as registered, except that a loopback
    one registered without a port matches on any port (RFC 8252 7.3). Nothing else varies: no other host, user
    info, path, query or fragment."""
    alternatives = []
    for uri in registered:
        parts = urlsplit(uri)
        if parts.hostname in _LOOPBACK_HOSTS and parts.port is None:
            origin_end = uri.index(parts.netloc) + len(parts.netloc)
            alternatives.append(
                re.escape(uri[:origin_end]) + "(?::[0-9]{1,5})?" + re.escape(uri[origin_end:])
            )
        else:
            alternatives.append(re.escape(uri))
    return re.compile("|".join(f"(?:{a})" for a in alternatives) or "(?!)")


def create_dev_idp(settings: DevIdpSettings) -> FastAPI:
    app = FastAPI(title="PRW development identity provider", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodySizeLimitMiddleware, default=BodyLimit(MAX_BODY_BYTES))
    redirect_uris = registered_redirect_uris(settings.redirect_uris)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = secrets.token_hex(8)
    public_jwk: dict[str, Any] = {
        **jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True),
        "kid": kid,
        "use": "sig",
        "alg": "RS256",
    }
    users = {user.subject: user for user in settings.users}
    grants: dict[str, _Grant] = {}
    lock = threading.Lock()

    @app.get("/.well-known/openid-configuration")
    def discovery(request: Request) -> dict[str, Any]:
        issuer = _issuer(request)
        return {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "jwks_uri": f"{issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "profile", "email"],
            "claims_supported": ["sub", "name", "email", "nonce", MEMBERSHIPS_CLAIM],
        }

    @app.get("/jwks")
    def jwks() -> dict[str, Any]:
        return {"keys": [public_jwk]}

    def _check_request(params: dict[str, str]) -> str | None:
        if params.get("response_type") != "code":
            return "response_type must be code"
        if params.get("client_id") != settings.client_id:
            return f"unknown client_id {params.get('client_id')!r}"
        for name in ("redirect_uri", "state", "nonce", "code_challenge"):
            if not params.get(name):
                return f"{name} is required"
        if not redirect_uris.fullmatch(params["redirect_uri"]):
            return f"redirect_uri {params['redirect_uri']!r} is not registered (PRW_DEV_IDP__REDIRECT_URIS)"
        if params.get("code_challenge_method") != "S256":
            return "PKCE with code_challenge_method=S256 is required"
        return None

    def _redirect_with_code(params: dict[str, str], user: DevUser) -> Response:
        code = secrets.token_urlsafe(24)
        with lock:
            grants[code] = _Grant(
                user,
                params["client_id"],
                params["redirect_uri"],
                params["code_challenge"],
                params["nonce"],
                time.monotonic() + CODE_TTL_SECONDS,
            )
        query = urlencode({"code": code, "state": params["state"]})
        return RedirectResponse(f"{params['redirect_uri']}?{query}", status_code=302)

    @app.get("/authorize")
    def authorize(request: Request) -> Response:
        params = dict(request.query_params)
        problem = _check_request(params)
        if problem:
            return HTMLResponse(
                f"<p>invalid authorization request: {html.escape(problem)}</p>", status_code=400
            )
        hint = params.get("login_hint")
        if hint:
            user = users.get(hint)
            if user is None:
                return HTMLResponse(f"<p>no user {html.escape(hint)}</p>", status_code=400)
            return _redirect_with_code(params, user)
        hidden = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in params.items()
        )
        buttons = "".join(
            f'<button name="login_hint" value="{html.escape(u.subject)}">{html.escape(u.name)} '
            f"({html.escape(', '.join(f'{t}: {r}' for t, r in u.tenants.items()))})</button><br>"
            for u in settings.users
        )
        page = (
            "<!doctype html><html lang=en><meta charset=utf-8><title>PRW dev login</title>"
            f"<style>{_LOGIN_STYLE}</style><main><h1>PRW development login</h1>"
            "<p>Development identity provider: no passwords. Log in as</p>"
            f'<form method="post" action="/authorize">{hidden}{buttons}</form></main>'
        )
        return HTMLResponse(page)

    @app.post("/authorize")
    async def authorize_form(request: Request) -> Response:
        params = dict(parse_qsl((await request.body()).decode(errors="replace")))
        problem = _check_request(params)
        user = users.get(params.get("login_hint", ""))
        if problem or user is None:
            return HTMLResponse(
                f"<p>invalid login: {html.escape(problem or 'unknown user')}</p>", status_code=400
            )
        return _redirect_with_code(params, user)

    def _token_error(error: str, description: str) -> JSONResponse:
        return JSONResponse({"error": error, "error_description": description}, status_code=400)

    @app.post("/token")
    async def token(request: Request) -> Response:
        form = dict(parse_qsl((await request.body()).decode(errors="replace")))
        if form.get("grant_type") != "authorization_code":
            return _token_error("unsupported_grant_type", "only authorization_code")
        with lock:
            grant = grants.pop(form.get("code", ""), None)
        if grant is None or grant.expires < time.monotonic():
            return _token_error("invalid_grant", "unknown, used or expired code")
        if form.get("client_id") != grant.client_id or form.get("redirect_uri") != grant.redirect_uri:
            return _token_error("invalid_grant", "client_id or redirect_uri does not match the authorization")
        verifier = form.get("code_verifier", "")
        if _b64url(hashlib.sha256(verifier.encode()).digest()) != grant.code_challenge:
            return _token_error("invalid_grant", "PKCE verification failed")
        now = int(time.time())
        claims = {
            "iss": _issuer(request),
            "sub": grant.user.subject,
            "aud": grant.client_id,
            "iat": now,
            "exp": now + ID_TOKEN_TTL_SECONDS,
            "nonce": grant.nonce,
            "name": grant.user.name,
            "email": grant.user.email or f"{grant.user.subject}@dev.invalid",
            MEMBERSHIPS_CLAIM: grant.user.tenants,
        }
        id_token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})
        return JSONResponse(
            {
                "access_token": secrets.token_urlsafe(24),
                "token_type": "Bearer",
                "expires_in": ID_TOKEN_TTL_SECONDS,
                "id_token": id_token,
            },
            headers={"Cache-Control": "no-store"},
        )

    return app

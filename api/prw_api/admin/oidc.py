"""The admin origin as an OIDC relying party (if_operator_session): authorization code flow with PKCE.

``begin`` makes a fresh ``state``, ``nonce`` and PKCE ``code_verifier`` (RFC 7636, S256) and the issuer's
authorize URL; the three secrets travel in a short-lived HttpOnly login cookie (``LoginState``), bound to this
browser. ``complete`` checks the returned ``state`` against it, redeems the code with the verifier at the token
endpoint, and verifies the ID token with the issuer's JWKS (pyjwt): signature, ``iss``, ``aud``, ``exp`` and the
``nonce``. The result is an ``OperatorIdentity`` with the roles per tenant of the memberships claim, which the
core turns into a session row.

The discovery document and the JWKS are fetched over HTTP (httpx) and cached; a key id the cache does not know
refetches the JWKS once (key rotation).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import unicodedata
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

import httpx
import jwt

from prw_platform.config import OperatorOidcSettings
from prw_platform.errors import CodedError
from prw_platform.services import OperatorIdentity

#: Seconds a login may take between the redirect to the issuer and the callback.
LOGIN_TTL_SECONDS = 600
_ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"]
#: Where a login lands without a ``return_to``, or with one that is not a path of this origin.
DEFAULT_RETURN_TO = "/v1/session"
#: Control (Cc), format (Cf: zero-width, bidi), separator (Zs, Zl, Zp) and surrogate characters.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
_MAX_DECODINGS = 4


class LoginFailed(CodedError):
    """400 LOGIN_FAILED: the login cannot complete (wrong state, refused code, invalid ID token): start again."""

    code = "LOGIN_FAILED"
    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(f"{message}; start again at /auth/login")


class IssuerUnavailable(CodedError):
    """503 UNAVAILABLE: the identity provider did not answer: retry later."""

    code = "UNAVAILABLE"
    status = 503
    retryable = True


@dataclass(frozen=True)
class LoginState:
    state: str
    nonce: str
    code_verifier: str
    return_to: str

    def encode(self) -> str:
        return base64.urlsafe_b64encode(json.dumps(asdict(self)).encode()).decode()

    @classmethod
    def decode(cls, value: str | None) -> LoginState:
        if not value:
            raise LoginFailed("no login in progress in this browser: start at /auth/login")
        try:
            data = json.loads(base64.urlsafe_b64decode(value.encode()))
            fields = {k: str(data[k]) for k in ("state", "nonce", "code_verifier", "return_to")}
        except (ValueError, KeyError, TypeError) as error:
            raise LoginFailed("the login cookie is unreadable: start again at /auth/login") from error
        # A cookie comes back from the browser, which may have been given another: checked again on the way out.
        return cls(**{**fields, "return_to": safe_return_to(fields["return_to"])})


def safe_return_to(value: str | None) -> str:
    """``value`` if it is a path of this origin, else the default landing page (no open redirect).

    A path here starts with one slash that no slash or backslash follows, and has no scheme, no authority, no
    backslash, no control character and no whitespace, as sent and at every depth of percent-decoding: a browser
    drops tab, CR and LF from a URL and reads a backslash as a slash, so "/%09/evil.example/" would otherwise land
    on another host."""
    if not value:
        return DEFAULT_RETURN_TO
    form, forms = value, [value]
    for _ in range(_MAX_DECODINGS):
        decoded = unquote(form)
        if decoded == form:
            break
        form = decoded
        forms.append(form)
    else:
        return DEFAULT_RETURN_TO  # still encoded after that many decodings: nothing a link would carry
    return value if all(_is_local_path(form) for form in forms) else DEFAULT_RETURN_TO


def _is_local_path(value: str) -> bool:
    if not value.startswith("/") or value[1:2] in ("/", "\\") or "\\" in value:
        return False
    if any(char.isspace() or unicodedata.category(char) in _UNSAFE_CATEGORIES for char in value):
        return False
    parts = urlsplit(value)
    return not parts.scheme and not parts.netloc


class OidcRelyingParty:
    def __init__(self, settings: OperatorOidcSettings, *, timeout: float = 10.0) -> None:
        if not settings.issuer:
            raise ValueError("no OIDC issuer configured (PRW_OPERATOR_OIDC__ISSUER)")
        self.settings = settings
        self.issuer = settings.issuer.rstrip("/")
        self._http = httpx.Client(timeout=timeout)
        self._lock = threading.Lock()
        self._discovery: dict[str, Any] | None = None
        self._keys: dict[str | None, jwt.PyJWK] = {}

    def close(self) -> None:
        self._http.close()

    def _get(self, url: str) -> dict[str, Any]:
        try:
            response = self._http.get(url)
        except httpx.HTTPError as error:
            raise IssuerUnavailable(f"the identity provider at {url} did not answer: {error}") from error
        if response.status_code >= 500:
            raise IssuerUnavailable(f"the identity provider answered {response.status_code} for {url}")
        if response.status_code != 200:
            raise LoginFailed(f"the identity provider answered {response.status_code} for {url}")
        body = response.json()
        if not isinstance(body, dict):
            raise LoginFailed(f"{url} did not return a JSON object")
        return body

    def discovery(self) -> dict[str, Any]:
        with self._lock:
            if self._discovery is None:
                document = self._get(f"{self.issuer}/.well-known/openid-configuration")
                if str(document.get("issuer", "")).rstrip("/") != self.issuer:
                    raise LoginFailed(f"the discovery document names issuer {document.get('issuer')!r}")
                self._discovery = document
            return self._discovery

    def begin(
        self, redirect_uri: str, return_to: str | None, login_hint: str | None = None
    ) -> tuple[str, LoginState]:
        """The authorize URL to redirect the browser to, and the state to keep in the login cookie."""
        login = LoginState(
            state=secrets.token_urlsafe(24),
            nonce=secrets.token_urlsafe(24),
            code_verifier=secrets.token_urlsafe(48),
            return_to=safe_return_to(return_to),
        )
        challenge = base64.urlsafe_b64encode(hashlib.sha256(login.code_verifier.encode()).digest())
        params = {
            "response_type": "code",
            "client_id": self.settings.client_id,
            "redirect_uri": redirect_uri,
            "scope": self.settings.scopes,
            "state": login.state,
            "nonce": login.nonce,
            "code_challenge": challenge.rstrip(b"=").decode(),
            "code_challenge_method": "S256",
        }
        if login_hint:
            params["login_hint"] = login_hint
        return f"{self.discovery()['authorization_endpoint']}?{urlencode(params)}", login

    def complete(self, code: str, state: str, login: LoginState, redirect_uri: str) -> OperatorIdentity:
        if not hmac.compare_digest(state.encode(), login.state.encode()):
            raise LoginFailed("the state does not match this browser's login")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": self.settings.client_id,
            "code_verifier": login.code_verifier,
        }
        secret = self.settings.client_secret
        if secret is not None:
            form["client_secret"] = secret.get_secret_value()
        try:
            response = self._http.post(self.discovery()["token_endpoint"], data=form)
        except httpx.HTTPError as error:
            raise IssuerUnavailable(f"the token endpoint did not answer: {error}") from error
        if response.status_code >= 500:
            raise IssuerUnavailable(f"the token endpoint answered {response.status_code}")
        if response.status_code != 200:
            raise LoginFailed(f"the identity provider refused the code: {response.text[:200]}")
        id_token = response.json().get("id_token")
        if not isinstance(id_token, str):
            raise LoginFailed("the token response has no id_token")
        claims = self._verify(id_token)
        if not hmac.compare_digest(str(claims.get("nonce", "")).encode(), login.nonce.encode()):
            raise LoginFailed("the ID token's nonce does not match this login")
        memberships = claims.get(self.settings.memberships_claim) or {}
        if not isinstance(memberships, dict):
            raise LoginFailed(f"the {self.settings.memberships_claim} claim is not an object")
        return OperatorIdentity(
            issuer=self.issuer,
            subject=str(claims["sub"]),
            memberships={str(k): str(v) for k, v in memberships.items()},
            display_name=claims.get("name") if isinstance(claims.get("name"), str) else None,
            email=claims.get("email") if isinstance(claims.get("email"), str) else None,
        )

    def _verify(self, id_token: str) -> dict[str, Any]:
        try:
            kid = jwt.get_unverified_header(id_token).get("kid")
            key = self._key(kid)
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key.key,
                algorithms=_ALGORITHMS,
                audience=self.settings.client_id,
                issuer=self.discovery()["issuer"],
                options={"require": ["exp", "iat", "iss", "aud", "sub", "nonce"]},
            )
        except jwt.PyJWTError as error:
            raise LoginFailed(f"the ID token is not valid: {error}") from error
        return claims

    def _key(self, kid: str | None) -> jwt.PyJWK:
        with self._lock:
            if kid not in self._keys:
                self._keys = self._fetch_keys()
            if kid not in self._keys and None in self._keys and len(self._keys) == 1:
                return self._keys[None]
            try:
                return self._keys[kid]
            except KeyError:
                raise LoginFailed(f"the issuer has no signing key {kid!r}") from None

    def _fetch_keys(self) -> dict[str | None, jwt.PyJWK]:
        jwks_uri = self._discovery["jwks_uri"] if self._discovery else None
        if jwks_uri is None:
            raise LoginFailed("no discovery document")
        keys = jwt.PyJWKSet.from_dict(self._get(str(jwks_uri))).keys
        return {k.key_id: k for k in keys}

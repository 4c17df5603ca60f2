"""Issue and verify collector access tokens: real JWTs signed with Ed25519 (pyjwt + cryptography).

Claims (if_collector_bootstrap: "The token binds tenant, worker, stable instance and sources"): ``iss``, ``aud``,
``sub`` (the stable instance id), ``tenant``, ``catalog``, ``worker``, ``sources``, ``scope`` (RFC 8693 style,
space-delimited), ``client_id``, ``iat``, ``exp``, ``jti``. Any verification failure is INVALID_TOKEN; whether the
client is revoked is the caller's second check (it needs the database, see ``CollectorAuthService``).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt

from prw_platform.auth.errors import InvalidToken
from prw_platform.auth.keys import ALGORITHM, SigningKey
from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import format_scope, parse_scope
from prw_platform.clock import Clock, utc_now

#: How many verified tokens a token service remembers (all of them are forgotten when it is full).
VERIFIED_TOKENS_KEPT = 4096

_REQUIRED_CLAIMS = (
    "iss",
    "aud",
    "sub",
    "exp",
    "iat",
    "jti",
    "tenant",
    "catalog",
    "worker",
    "sources",
    "scope",
)


@dataclass(frozen=True, slots=True)
class TokenBinding:
    """What a token is issued for: the provisioned binding of one client, narrowed to the granted scopes."""

    client_id: str
    tenant_id: str
    catalog_id: str
    worker_id: str
    instance_id: str
    sources: tuple[str, ...]
    scopes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IssuedToken:
    access_token: str
    expires_in: int
    scope: str
    token_type: str = "Bearer"


class TokenService:
    def __init__(
        self,
        key: SigningKey,
        *,
        issuer: str,
        audience: str,
        ttl: timedelta,
        leeway: timedelta = timedelta(seconds=30),
        clock: Clock = utc_now,
    ) -> None:
        self._key = key
        self._issuer = issuer
        self._audience = audience
        self._ttl = ttl
        self._leeway = leeway
        self._clock = clock
        #: Tokens whose signature and claims were verified, by their exact text (a token whose one byte differs
        #: is verified afresh). Only expiry can change a verified token's verdict: it is checked on every hit.
        self._verified: dict[str, CollectorPrincipal] = {}

    def issue(self, binding: TokenBinding) -> IssuedToken:
        now = self._clock()
        expires = now + self._ttl
        claims: dict[str, Any] = {
            "iss": self._issuer,
            "aud": self._audience,
            "sub": binding.instance_id,
            "tenant": binding.tenant_id,
            "catalog": binding.catalog_id,
            "worker": binding.worker_id,
            "sources": sorted(binding.sources),
            "scope": format_scope(binding.scopes),
            "client_id": binding.client_id,
            "iat": int(now.timestamp()),
            "exp": int(expires.timestamp()),
            "jti": f"tok_{secrets.token_hex(16)}",
        }
        token = jwt.encode(
            claims, self._key.private_key, algorithm=ALGORITHM, headers={"kid": self._key.key_id}
        )
        return IssuedToken(token, int(self._ttl.total_seconds()), claims["scope"])

    def verify(self, token: str) -> CollectorPrincipal:
        """The token's principal, or InvalidToken. A collector sends the same token on every request until it
        expires, so a verified token is remembered (``VERIFIED_TOKENS_KEPT`` at most) and later costs a dict
        lookup and the expiry check instead of a signature verification."""
        known = self._verified.get(token)
        if known is not None:
            # PyJWT's own rule (its clock, its leeway): expired once exp <= now - leeway.
            if time.time() < known.expires_at.timestamp() + self._leeway.total_seconds():
                return known
            self._verified.pop(token, None)
        principal = self._verify(token)
        if len(self._verified) >= VERIFIED_TOKENS_KEPT:
            self._verified.clear()
        self._verified[token] = principal
        return principal

    def _verify(self, token: str) -> CollectorPrincipal:
        try:
            header = jwt.get_unverified_header(token)
            if header.get("kid") != self._key.key_id:
                raise InvalidToken("the token was not signed by this token service's current key")
            claims = jwt.decode(
                token,
                self._key.public_key,
                algorithms=[ALGORITHM],
                audience=self._audience,
                issuer=self._issuer,
                leeway=self._leeway,
                options={"require": list(_REQUIRED_CLAIMS)},
            )
        except jwt.PyJWTError as error:
            raise InvalidToken(f"the token is not valid: {error}") from error
        return _principal(claims)


def _principal(claims: dict[str, Any]) -> CollectorPrincipal:
    strings = ("sub", "tenant", "catalog", "worker", "client_id", "scope", "jti")
    sources = claims.get("sources")
    if not all(isinstance(claims.get(name), str) and claims[name] for name in strings) or not (
        isinstance(sources, list) and all(isinstance(s, str) for s in sources)
    ):
        raise InvalidToken("the token's binding claims are missing or malformed")
    return CollectorPrincipal(
        client_id=claims["client_id"],
        tenant_id=claims["tenant"],
        catalog_id=claims["catalog"],
        worker_id=claims["worker"],
        instance_id=claims["sub"],
        sources=frozenset(sources),
        scopes=frozenset(parse_scope(claims["scope"])),
        token_id=claims["jti"],
        expires_at=datetime.fromtimestamp(int(claims["exp"]), UTC),
    )

"""The collector auth service the intake edge calls: the token endpoint's grant, and bearer authentication.

Authentication is two checks: the JWT (signature, issuer, audience, expiry, binding claims: INVALID_TOKEN), then
the client in the database (unknown or rebound: INVALID_TOKEN; revoked or superseded: CREDENTIAL_REVOKED). The
second check runs on every request so that a revocation takes effect before the token expires.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from prw_platform.auth.clients import authenticate_client, check_credential, send_credential_check
from prw_platform.auth.errors import invalid_client, invalid_scope
from prw_platform.auth.keys import SigningKey, load_or_create_signing_key, signing_key_from_pem
from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import parse_scope
from prw_platform.auth.settings import TokenSettings
from prw_platform.auth.tokens import IssuedToken, TokenBinding, TokenService
from prw_platform.clock import Clock, utc_now
from prw_platform.config import Settings
from prw_platform.db.database import Connection, Database


class CollectorAuthService:
    def __init__(self, db: Database, tokens: TokenService) -> None:
        self._db = db
        self.tokens = tokens

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        db: Database,
        token_settings: TokenSettings | None = None,
        *,
        clock: Clock = utc_now,
    ) -> CollectorAuthService:
        config = token_settings or TokenSettings()
        key = load_signing_key(settings, config)
        tokens = TokenService(
            key,
            issuer=config.issuer,
            audience=config.audience,
            ttl=timedelta(seconds=config.ttl_seconds),
            leeway=timedelta(seconds=config.leeway_seconds),
            clock=clock,
        )
        return cls(db, tokens)

    def client_credentials_grant(self, client_id: str, client_secret: str, scope: str | None) -> IssuedToken:
        """RFC 6749 4.4: authenticate the client and issue a token for the requested (or every granted) scope."""
        client = authenticate_client(self._db, client_id, client_secret)
        if client is None or client.revoked_at is not None:
            # RFC 6749 5.2: a revoked client cannot authenticate; the collector stops and alerts the operator.
            raise invalid_client("unknown client, wrong secret, or revoked client")
        granted = client.binding.scopes
        requested = parse_scope(scope) if scope else granted
        beyond = set(requested) - set(granted)
        if beyond or not requested:
            raise invalid_scope(f"scopes not granted to this client: {' '.join(sorted(beyond)) or '(none)'}")
        binding = client.binding
        return self.tokens.issue(
            TokenBinding(
                client_id=binding.client_id,
                tenant_id=binding.tenant_id,
                catalog_id=binding.catalog_id,
                worker_id=binding.worker_id,
                instance_id=binding.instance_id,
                sources=binding.sources,
                scopes=tuple(requested),
            )
        )

    def authenticate(self, bearer_token: str) -> CollectorPrincipal:
        """Both checks: the token, then its client in a transaction of its own."""
        principal = self.tokens.verify(bearer_token)
        self._db.run(
            lambda conn: check_credential(conn, principal), tenant_id=principal.tenant_id, read_only=True
        )
        return principal

    def verify_token(self, bearer_token: str) -> CollectorPrincipal:
        """The first check only (no database): for a service call that runs ``check_credential`` inside its
        own transaction (``IntakeService.submit_capture``), so the revocation check costs no transaction of its
        own and sees every revocation committed before the call's transaction."""
        return self.tokens.verify(bearer_token)

    @staticmethod
    def check_credential(conn: Connection, principal: CollectorPrincipal) -> None:
        """The second check, in the caller's transaction (scoped to the principal's tenant)."""
        check_credential(conn, principal)

    @staticmethod
    def send_credential_check(conn: Connection, principal: CollectorPrincipal) -> Callable[[], None]:
        """The second check in two steps (``clients.send_credential_check``): the query is sent now and judged
        when the returned function is called, so a pipelined transaction reads it with its other reads."""
        return send_credential_check(conn, principal)


def load_signing_key(settings: Settings, token_settings: TokenSettings | None = None) -> SigningKey:
    """The token signing key: ``PRW_TOKEN_SIGNING_KEY_PEM``, else the key file (generated on first use)."""
    config = token_settings or TokenSettings()
    if config.signing_key_pem is not None:
        return signing_key_from_pem(config.signing_key_pem.get_secret_value().encode())
    return load_or_create_signing_key(config.key_file(settings))

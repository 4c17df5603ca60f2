"""Collector authentication: OAuth2 client credentials, Ed25519-signed JWTs, provisioned clients; a token
binds the tenant, worker, stable instance and sources (if_collector_bootstrap)."""

from prw_platform.auth.clients import (
    ClientSpec,
    CollectorClient,
    CollectorClients,
    ProvisionedClient,
    authenticate_client,
    create_client,
    find_client,
    revoke_client,
)
from prw_platform.auth.errors import (
    AuthError,
    ClientProvisioningError,
    CredentialRevoked,
    InvalidToken,
    MissingScope,
    OAuthError,
)
from prw_platform.auth.keys import SigningKey, load_or_create_signing_key, signing_key_from_pem
from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.service import CollectorAuthService
from prw_platform.auth.settings import TokenSettings
from prw_platform.auth.tokens import IssuedToken, TokenBinding, TokenService

__all__ = [
    "AuthError",
    "ClientProvisioningError",
    "ClientSpec",
    "CollectorAuthService",
    "CollectorClient",
    "CollectorClients",
    "CollectorPrincipal",
    "CredentialRevoked",
    "InvalidToken",
    "IssuedToken",
    "MissingScope",
    "OAuthError",
    "ProvisionedClient",
    "SigningKey",
    "TokenBinding",
    "TokenService",
    "TokenSettings",
    "authenticate_client",
    "create_client",
    "find_client",
    "load_or_create_signing_key",
    "revoke_client",
    "signing_key_from_pem",
]

"""Authentication errors with the seed's codes (if_collector_bootstrap, if_capture_submit, if_receipt_get).

``OAuthError`` is the token endpoint's: RFC 6749 section 5.2 fixes its body (``{"error": "invalid_client"}``), so
its ``code`` is the RFC's error name instead of a seed code.
"""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class AuthError(CodedError):
    code = "AUTH_ERROR"
    status = 401


class InvalidToken(AuthError):
    """401 INVALID_TOKEN, do not retry: unknown, expired or incorrectly bound token."""

    code = "INVALID_TOKEN"
    status = 401


class CredentialRevoked(AuthError):
    """401 CREDENTIAL_REVOKED, do not retry: the token is valid in form but its client is revoked or
    superseded. The collector stops and alerts the operator (if_collector_bootstrap)."""

    code = "CREDENTIAL_REVOKED"
    status = 401


class MissingScope(AuthError):
    """403 MISSING_SCOPE, do not retry: the token lacks the route's ``resource:action`` scope."""

    code = "MISSING_SCOPE"
    status = 403


class ClientProvisioningError(CodedError, ValueError):
    """An operator asked for a client that cannot exist (a source outside the catalog, an unknown scope)."""

    code = "INVALID_CLIENT_SPEC"


class OAuthError(CodedError):
    """An RFC 6749 section 5.2 error of the token endpoint."""

    def __init__(self, error: str, description: str, *, status: int = 400) -> None:
        super().__init__(description)
        self.code = error
        self.description = description
        self.status = status


def invalid_client(description: str = "client authentication failed") -> OAuthError:
    # RFC 6749 5.2: invalid_client is 401 (the client could not be authenticated).
    return OAuthError("invalid_client", description, status=401)


def invalid_scope(description: str) -> OAuthError:
    return OAuthError("invalid_scope", description)

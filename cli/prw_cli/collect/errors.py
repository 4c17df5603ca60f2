"""What a collector is told when intake refuses or cannot be reached (docs/collectors.md: Errors and what to
retry)."""

from __future__ import annotations

import httpx

#: if_collector_bootstrap, if_heartbeat, ...: "401 CREDENTIAL_REVOKED — do not retry. Collector must stop".
CREDENTIAL_REVOKED = "CREDENTIAL_REVOKED"
#: RFC 6749 5.2, the token endpoint's answer to an unknown, wrong or revoked client.
INVALID_CLIENT = "invalid_client"


class IntakeError(RuntimeError):
    """A request that ended without success: an HTTP error status (``status``, the error body's ``code``), or a
    network failure (``status`` None, ``code`` the kind of failure), after ``attempts`` requests."""

    def __init__(
        self, step: str, status: int | None, code: str, message: str = "", *, attempts: int = 1
    ) -> None:
        self.step = step
        self.status = status
        self.code = code
        self.attempts = attempts
        where = f"{status} {code}" if status is not None else code
        super().__init__(f"{step}: {where}" + (f" ({message})" if message else ""))

    @classmethod
    def from_response(cls, step: str, response: httpx.Response, attempts: int) -> IntakeError:
        code, message = error_of(response)
        kind = CredentialRevoked if code in (CREDENTIAL_REVOKED, INVALID_CLIENT) else cls
        return kind(step, response.status_code, code, message, attempts=attempts)


class CredentialRevoked(IntakeError):
    """The client was revoked or superseded (``401 CREDENTIAL_REVOKED``), or the token endpoint no longer knows
    it (``401 invalid_client``): the run must stop and the operator be alerted; retrying cannot help."""


def error_of(response: httpx.Response) -> tuple[str, str]:
    """(code, message) of the platform's error body, the token endpoint's RFC 6749 body, or a bare status."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            return str(error.get("code") or response.status_code), str(error.get("message") or "")
        if isinstance(error, str):  # RFC 6749 section 5.2
            return error, str(body.get("error_description") or "")
        if "detail" in body:  # a route this server does not have (FastAPI's default 404)
            return "NOT_FOUND" if response.status_code == 404 else str(response.status_code), str(
                body["detail"]
            )
    return str(response.status_code), response.reason_phrase


def transport_kind(error: httpx.TransportError) -> str:
    """A short, stable name for a network failure, for reports: connect_error, read_timeout, ..."""
    name = type(error).__name__
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


__all__ = ["CREDENTIAL_REVOKED", "CredentialRevoked", "IntakeError", "error_of", "transport_kind"]

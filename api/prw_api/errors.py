"""One error type and one renderer for every HTTP edge (STYLE.md: "Errors are one type ... rendered in one
handler, using the seed's codes verbatim").

The body is always ``{"error": {"code", "message", "retryable"}}`` (``ErrorBody``). Core errors (intake, auth,
storage, database, product queries) carry their seed code, status and retryability, and are converted to an
``ApiError`` here; FastAPI's request validation errors become 422 with the origin's code (VALIDATION_FAILED,
if_capture_submit; the product origin's query errors are INVALID_QUERY), and a 503 always has ``Retry-After``.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from prw_platform.errors import (
    AmbiguousCommit,
    AuthError,
    CredentialRevoked,
    DatabaseError,
    DatabaseUnavailable,
    IntakeError,
    InvalidQuery,
    InvalidToken,
    MissingScope,
    StorageError,
)

#: Seconds a client waits before retrying a 503 (if_capture_submit: "resubmit ... honoring Retry-After").
RETRY_AFTER_SECONDS = 2

_HTTP_CODES = {
    401: "INVALID_TOKEN",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}


class ErrorDetail(BaseModel):
    code: str
    message: str
    retryable: bool


class ErrorBody(BaseModel):
    """The one error body of every origin, as ``render`` writes it."""

    error: ErrorDetail


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retryable = retryable
        self.headers = dict(headers or {})


def from_core_error(error: Exception) -> ApiError:
    """The ApiError of a core error; the core already chose the seed's code and status."""
    if isinstance(error, DatabaseUnavailable | AmbiguousCommit):
        # if_capture_submit: 503 STORAGE_UNAVAILABLE, retry with the same Idempotency-Key. An ambiguous commit is
        # safe to retry for the same reason: the key finds the receipt if the first attempt committed.
        return ApiError(
            503, "STORAGE_UNAVAILABLE", "the database is unavailable; retry later", retryable=True
        )
    if isinstance(error, IntakeError | AuthError | StorageError):
        headers = _bearer_challenge(error)
        return ApiError(error.status, error.code, str(error), retryable=error.retryable, headers=headers)
    if isinstance(error, InvalidQuery):
        return ApiError(422, error.code, str(error))
    return ApiError(500, "INTERNAL", "internal error")


def render(request: Request, error: ApiError) -> JSONResponse:
    headers = dict(error.headers)
    if error.status == 503:
        headers.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
    body = ErrorBody(error=ErrorDetail(code=error.code, message=error.message, retryable=error.retryable))
    return JSONResponse(body.model_dump(), status_code=error.status, headers=headers)


def install_error_handlers(app: FastAPI, *, validation_code: str = "VALIDATION_FAILED") -> None:
    """``validation_code`` is the code of a request FastAPI rejects before the route runs (a 422)."""

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return render(request, exc)

    async def core_error(request: Request, exc: Exception) -> JSONResponse:
        return render(request, from_core_error(exc))

    async def validation_failed(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return render(request, ApiError(422, validation_code, _summary(exc)))

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        return render(request, ApiError(exc.status_code, code, str(exc.detail), headers=exc.headers))

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, validation_failed)
    app.add_exception_handler(StarletteHTTPException, http_error)
    for core in (IntakeError, AuthError, StorageError, DatabaseError, InvalidQuery):
        app.add_exception_handler(core, core_error)


def _bearer_challenge(error: Exception) -> dict[str, str]:
    # RFC 6750 3: a 401/403 of a bearer-protected resource says why in WWW-Authenticate.
    if isinstance(error, InvalidToken | CredentialRevoked):
        return {"WWW-Authenticate": 'Bearer error="invalid_token"'}
    if isinstance(error, MissingScope):
        return {"WWW-Authenticate": 'Bearer error="insufficient_scope"'}
    return {}


def _summary(error: RequestValidationError) -> str:
    parts = []
    for item in error.errors()[:10]:
        where = ".".join(str(p) for p in item.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {item.get('msg', 'invalid')}")
    return "; ".join(parts) or "the request is not valid"

"""One error type and one renderer for every HTTP edge (STYLE.md: "Errors are one type ... rendered in one
handler, using the seed's codes verbatim").

The body is always ``{"error": {"code", "message", "retryable"}}`` (``ErrorBody``). Every core error is a
``CodedError`` carrying its seed code, status and retryability, converted to an ``ApiError`` here by one handler;
FastAPI's request validation errors become 422 with the origin's code (VALIDATION_FAILED, if_capture_submit; the
product origin's query errors are INVALID_QUERY), and a 503 is always retryable, with ``Retry-After``.

A value the database refuses (``InvalidData``: a data exception the validation did not foresee) is the origin's
422 as well, never a 500. What is left, an unexpected failure, is a 500 ``INTERNAL`` whose body also carries the
request's id (``request_id``, the ``X-Request-Id`` header of every response), logged with its traceback, so an
operator finds the one log entry a caller reports.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from prw_platform.errors import (
    AmbiguousCommit,
    CodedError,
    CredentialRevoked,
    DatabaseUnavailable,
    InvalidData,
    InvalidToken,
    MissingScope,
)

log = logging.getLogger(__name__)

#: Seconds a client waits before retrying a 503 (if_capture_submit: "resubmit ... honoring Retry-After").
RETRY_AFTER_SECONDS = 2

#: The code of a request body above the configured limit (no seed code: only if_artifact_upload's bytes have one,
#: ARTIFACT_TOO_LARGE). Documented in docs/collectors.md and docs/analysts.md.
PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
#: The code of an unexpected failure (no seed code; documented with the others).
INTERNAL = "INTERNAL"

_HTTP_CODES = {
    401: "INVALID_TOKEN",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: PAYLOAD_TOO_LARGE,
    415: "UNSUPPORTED_MEDIA_TYPE",
}


class ErrorDetail(BaseModel):
    code: str
    message: str
    retryable: bool
    #: Only on a 500: the request's id, as in the ``X-Request-Id`` header and the server log.
    request_id: str | None = None


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


class RefusedBody(StarletteHTTPException):
    """A request body refused while the route reads it: above its limit (413), or JSON the platform does not parse
    (422, ``code`` None: the origin's validation code). An ``HTTPException`` so that FastAPI's body reading passes
    it on untouched instead of turning it into a 400."""

    def __init__(self, status: int, message: str, *, code: str | None = None) -> None:
        super().__init__(status_code=status, detail=message)
        self.code = code


#: if_capture_submit: 503 STORAGE_UNAVAILABLE, retry with the same Idempotency-Key. An ambiguous commit is safe to
#: retry for the same reason: the key finds the receipt if the first attempt committed.
DATABASE_UNAVAILABLE = ApiError(
    503, "STORAGE_UNAVAILABLE", "the database is unavailable; retry later", retryable=True
)


def from_core_error(
    error: Exception,
    *,
    validation_code: str = "VALIDATION_FAILED",
    database_unavailable: ApiError = DATABASE_UNAVAILABLE,
) -> ApiError:
    """The ApiError of a core error: its seed code (``http_code`` where the edge's seed names it otherwise),
    status and retryability. The database's own failures are the origin's: unreachable is its
    ``database_unavailable``, a refused value its ``validation_code`` (if_capture_submit: "Nothing persisted").
    Anything else, a ``CodedError`` of status 500 included, is an unexpected 500."""
    if isinstance(error, DatabaseUnavailable | AmbiguousCommit):
        return database_unavailable
    if isinstance(error, InvalidData):
        return ApiError(422, validation_code, f"the database cannot store a value of this request: {error}")
    if isinstance(error, CodedError) and error.status != 500:
        code = error.http_code or error.code
        retryable = error.retryable or error.status == 503
        return ApiError(error.status, code, str(error), retryable=retryable, headers=_bearer_challenge(error))
    return ApiError(500, INTERNAL, "internal error")


def request_id_of(scope: Scope) -> str | None:
    """The id ``RequestIdMiddleware`` gave this request."""
    state = scope.get("state")
    found = state.get("request_id") if isinstance(state, dict) else None
    return found if isinstance(found, str) else None


def error_response(scope: Scope, error: ApiError) -> JSONResponse:
    headers = dict(error.headers)
    if error.status == 503:
        headers.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
    detail = ErrorDetail(code=error.code, message=error.message, retryable=error.retryable)
    if error.status == 500:
        detail.request_id = request_id_of(scope)
    body = ErrorBody(error=detail)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=error.status, headers=headers)


def internal_error(scope: Scope, exc: BaseException) -> JSONResponse:
    """The 500 of an unexpected failure, logged with its traceback and the request id the caller sees."""
    request_id = request_id_of(scope)
    log.error(
        "unexpected error in %s %s (request_id=%s)",
        scope.get("method"),
        scope.get("path"),
        request_id,
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    return error_response(scope, ApiError(500, INTERNAL, f"internal error; request id {request_id}"))


def render(request: Request, error: ApiError) -> JSONResponse:
    return error_response(request.scope, error)


def install_error_handlers(
    app: FastAPI,
    *,
    validation_code: str = "VALIDATION_FAILED",
    database_unavailable: ApiError = DATABASE_UNAVAILABLE,
) -> None:
    """``validation_code`` is the code of a request FastAPI rejects before the route runs (a 422), and of a value
    the database refuses; ``database_unavailable`` the answer while the database cannot be reached."""

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return render(request, exc)

    async def core_error(request: Request, exc: Exception) -> JSONResponse:
        error = from_core_error(
            exc, validation_code=validation_code, database_unavailable=database_unavailable
        )
        if error.status == 500:
            return internal_error(request.scope, exc)
        return render(request, error)

    async def validation_failed(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return render(request, ApiError(422, validation_code, validation_summary(exc)))

    async def refused_body(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RefusedBody)
        code = exc.code or (validation_code if exc.status_code == 422 else _HTTP_CODES[exc.status_code])
        return render(request, ApiError(exc.status_code, code, str(exc.detail)))

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        return render(request, ApiError(exc.status_code, code, str(exc.detail), headers=exc.headers))

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, validation_failed)
    app.add_exception_handler(RefusedBody, refused_body)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(CodedError, core_error)


def _bearer_challenge(error: Exception) -> dict[str, str]:
    # RFC 6750 3: a 401/403 of a bearer-protected resource says why in WWW-Authenticate.
    if isinstance(error, InvalidToken | CredentialRevoked):
        return {"WWW-Authenticate": 'Bearer error="invalid_token"'}
    if isinstance(error, MissingScope):
        return {"WWW-Authenticate": 'Bearer error="insufficient_scope"'}
    return {}


def validation_summary(error: RequestValidationError) -> str:
    parts = []
    for item in error.errors()[:10]:
        where = ".".join(str(p) for p in item.get("loc", ()) if p != "body") or "body"
        message = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {message}")
    return "; ".join(parts) or "the request is not valid"

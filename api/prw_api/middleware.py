"""HTTP mechanics every origin installs before any route runs: pure ASGI middleware (no ``BaseHTTPMiddleware``,
which would buffer and re-wrap every request), so a refusal costs no body read, no authentication, no database.

Outermost first:

- ``RequestIdMiddleware``: every response carries ``X-Request-Id``; handlers and logs find it in the scope.
- ``UnexpectedErrorMiddleware``: an exception no handler took is logged with that id and answered as the
  platform's 500 body, instead of uvicorn's plain-text 500 and a dropped connection.
- ``BodySizeLimitMiddleware``: a body above its route's limit is 413 before it is read: at once when
  Content-Length announces it, else as soon as the streamed (chunked) bytes pass the limit.
- ``RequestTargetGuardMiddleware``: a path or query string PostgreSQL text cannot hold (a NUL), or that is not
  UTF-8 once percent-decoded, is the origin's 422.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote_to_bytes

from fastapi import FastAPI
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prw_api.errors import (
    PAYLOAD_TOO_LARGE,
    ApiError,
    RefusedBody,
    error_response,
    internal_error,
    request_id_of,
)
from prw_platform.config import Settings
from prw_platform.inputs import unstorable_character

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-Id"


class RequestIdMiddleware:
    """A fresh id per request: in ``scope["state"]["request_id"]`` (``request.state.request_id``) and in the
    ``X-Request-Id`` response header. Generated here, never taken from the caller, so a log line cannot be forged
    into another request's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        await self.app(scope, receive, send_with_id)


class UnexpectedErrorMiddleware:
    """The last resort: an unexpected exception becomes ``500 INTERNAL`` in the platform's body, with the request
    id, logged with its traceback (``prw_api.errors.internal_error``). The connection stays usable."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, send_tracking)
        except Exception as exc:
            if started:
                # Too late for a body of our own: log it with the id, let the server close the connection.
                log.error("error after the response started (request_id=%s)", request_id_of(scope))
                raise
            await internal_error(scope, exc)(scope, receive, send)


@dataclass(frozen=True, slots=True)
class BodyLimit:
    max_bytes: int
    #: The code of the 413: PAYLOAD_TOO_LARGE, or a route's seed code (if_artifact_upload: ARTIFACT_TOO_LARGE).
    code: str = PAYLOAD_TOO_LARGE


@dataclass(frozen=True, slots=True)
class RouteBodyLimit:
    """The limit of one route instead of the default, e.g. the artifact PUT, which streams bytes up to the
    artifact limit."""

    method: str
    #: The route's path template, as the router declares it (``/v1/artifacts/uploads/{upload_id}``).
    path: str
    limit: BodyLimit
    _path_regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_path_regex", compile_path(self.path)[0])

    def matches(self, scope: Scope) -> bool:
        return scope["method"] == self.method and self._path_regex.match(scope["path"]) is not None


class BodySizeLimitMiddleware:
    """413 for a body above the limit of its route, before a byte of it is read when Content-Length announces it,
    and as soon as the received bytes pass the limit when it is streamed without one. The route never sees more
    than the limit, so the process never holds more."""

    def __init__(self, app: ASGIApp, *, default: BodyLimit, routes: Sequence[RouteBodyLimit] = ()) -> None:
        self.app = app
        self.default = default
        self.routes = tuple(routes)

    def limit_for(self, scope: Scope) -> BodyLimit:
        return next((route.limit for route in self.routes if route.matches(scope)), self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope)
        announced = _content_length(scope)
        if announced is not None and announced > limit.max_bytes:
            refusal = ApiError(413, limit.code, _too_large(limit, f"Content-Length {announced}"))
            await error_response(scope, refusal)(scope, receive, send)
            return

        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit.max_bytes:
                    # An HTTPException: FastAPI's body reading passes it on, the app's handler renders it.
                    raise RefusedBody(413, _too_large(limit, "the streamed body"), code=limit.code)
            return message

        async def send_tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, send_tracking)
        except RefusedBody as refused:
            # Raised where no exception handler runs (e.g. a middleware inside this one read the body).
            if started:
                raise
            error = ApiError(refused.status_code, refused.code or PAYLOAD_TOO_LARGE, str(refused.detail))
            await error_response(scope, error)(scope, receive, send)


class RequestTargetGuardMiddleware:
    """The origin's 422 for a path or query string the platform cannot store or compare: a NUL (PostgreSQL text
    cannot hold it) or bytes that are not UTF-8 once percent-decoded (RFC 3986 2.5), for every route at once."""

    def __init__(self, app: ASGIApp, *, validation_code: str) -> None:
        self.app = app
        self.validation_code = validation_code

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw_path = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogatepass")
            for part, raw in (("path", raw_path), ("query string", scope.get("query_string", b""))):
                problem = _undecodable_or_unstorable(raw)
                if problem is not None:
                    refusal = ApiError(422, self.validation_code, f"the {part} {problem}")
                    await error_response(scope, refusal)(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def install_input_hardening(
    app: FastAPI,
    settings: Settings,
    *,
    validation_code: str,
    route_limits: Sequence[RouteBodyLimit] = (),
) -> None:
    """Install the middleware of this module on ``app``, outermost first as the module docstring lists them.
    ``route_limits`` are the routes whose body limit is not ``settings.max_request_body_bytes``."""
    # Starlette wraps in reverse: the middleware added last is the outermost.
    app.add_middleware(RequestTargetGuardMiddleware, validation_code=validation_code)
    app.add_middleware(
        BodySizeLimitMiddleware, default=BodyLimit(settings.max_request_body_bytes), routes=route_limits
    )
    app.add_middleware(UnexpectedErrorMiddleware)
    app.add_middleware(RequestIdMiddleware)


def _content_length(scope: Scope) -> int | None:
    value = Headers(scope=scope).get("content-length")
    # The HTTP server already refused a malformed Content-Length; a value it let through is digits.
    return int(value) if value is not None and value.isdigit() else None


def _too_large(limit: BodyLimit, what: str) -> str:
    return f"{what} is above the limit of {limit.max_bytes} bytes for this route"


def _undecodable_or_unstorable(raw: bytes) -> str | None:
    try:
        text = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 once percent-decoded"
    return unstorable_character(text)

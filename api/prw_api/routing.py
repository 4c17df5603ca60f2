"""The route class of every router (``APIRouter(route_class=PlatformRoute)``): FastAPI's ``APIRoute`` whose request
parses a JSON body the way the platform accepts it, before any dependency (authentication included) runs.

FastAPI's own parsing answers a body that is not UTF-8, that nests deeper than the interpreter's recursion
limit (a ``RecursionError``), or that holds an integer of more than 4300 digits with an undocumented 400; a NUL or
a lone surrogate (``"\\ud800"``) in any string reaches the route. Here each is the origin's documented 422
(``RefusedBody``, rendered by ``prw_api.errors``: if_capture_submit's VALIDATION_FAILED on intake, INVALID_QUERY
on the product origin): RFC 8259 8.1 JSON is UTF-8; nesting is bounded by
``Settings.max_json_depth``; ``NaN`` and ``Infinity`` are not JSON; every string and field name must be text
PostgreSQL can store (``prw_platform.inputs``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

from fastapi import Request, Response
from fastapi.routing import APIRoute

from prw_api.errors import RefusedBody
from prw_platform.config import Settings
from prw_platform.inputs import unstorable_character


def parse_json_body(body: bytes, *, max_depth: int) -> Any:
    """The JSON value of ``body``, or ``RefusedBody(422)`` saying why the platform does not accept it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _refused(
            f"the body is not UTF-8 (RFC 8259 8.1): invalid byte at offset {error.start}"
        ) from error
    try:
        value = json.loads(text, parse_constant=_not_json)
    except RecursionError as error:
        raise _refused(f"the JSON body is nested deeper than {max_depth} levels") from error
    except json.JSONDecodeError as error:
        raise _refused(
            f"the body is not JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from error
    except ValueError as error:
        raise _refused(f"the body is not JSON the platform accepts: {error}") from error
    _check_value(value, max_depth)
    return value


def _check_value(value: Any, max_depth: int) -> None:
    """Depth and storable text in one iterative walk (no recursion, whatever the depth)."""
    pending: list[tuple[Any, int, str]] = [(value, 0, "")]
    while pending:
        current, depth, where = pending.pop()
        if isinstance(current, str):
            problem = unstorable_character(current)
            if problem is not None:
                raise _refused(f"{where or 'the body'}: {problem}")
        elif isinstance(current, dict | list):
            if depth >= max_depth:
                raise _refused(f"the JSON body is nested deeper than {max_depth} levels")
            if isinstance(current, dict):
                for key, item in current.items():
                    problem = unstorable_character(key)
                    if problem is not None:
                        raise _refused(f"a field name under {where or 'the body'} {problem}")
                    pending.append((item, depth + 1, f"{where}.{key}" if where else key))
            else:
                pending.extend((item, depth + 1, f"{where}[{index}]") for index, item in enumerate(current))


def _not_json(constant: str) -> NoReturn:
    raise ValueError(f"{constant} is not a JSON number (RFC 8259 6)")


def _refused(message: str) -> RefusedBody:
    return RefusedBody(422, message)


class PlatformRequest(Request):
    """A request whose ``json()`` is ``parse_json_body`` with the app's ``Settings.max_json_depth``."""

    _json: Any

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            settings: Settings = self.app.state.settings
            self._json = parse_json_body(await self.body(), max_depth=settings.max_json_depth)
        return self._json


class PlatformRoute(APIRoute):
    """``APIRoute`` handing its handler a ``PlatformRequest`` (FastAPI's documented custom request pattern)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def platform_handler(request: Request) -> Response:
            return await handler(PlatformRequest(request.scope, request.receive))

        return platform_handler

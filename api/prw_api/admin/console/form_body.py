"""The console's form bodies, held to the rules the JSON API holds its bodies to (``prw_api.routing``): every field
name and value is UTF-8 once percent-decoded and text PostgreSQL can store (``prw_platform.inputs``).

Starlette's form parser replaces bytes that are not UTF-8 with U+FFFD and passes a NUL on to the database; here
either is the console's 422 page before any field reaches a route. The console's forms are all
``application/x-www-form-urlencoded``; a multipart body (which Starlette decodes with a Latin-1 fallback) is 415.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from fastapi import Request
from starlette.types import Message, Receive

from prw_platform.inputs import unstorable_character

_URLENCODED = "application/x-www-form-urlencoded"


class FormRefused(Exception):
    """A form body the console does not accept: ``status`` 415 or 422, and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def checked_form_request(request: Request) -> Request:
    """``request`` with its body read and checked (``FormRefused`` when refused), replayed to the route."""
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type.startswith("multipart/"):
        raise FormRefused(415, f"the console's forms are sent as {_URLENCODED}, not {media_type}")
    body = await request.body()
    if media_type == _URLENCODED:
        problem = form_problem(body)
        if problem is not None:
            raise FormRefused(422, problem)
    return Request(request.scope, _replaying(body, request))


def form_problem(body: bytes) -> str | None:
    """Why an urlencoded ``body`` is refused, naming the field; None when every name and value is storable text."""
    for field in body.split(b"&"):
        raw_name, _, raw_value = field.partition(b"=")
        try:
            name = _decoded(raw_name)
        except UnicodeDecodeError:
            return "a field name is not UTF-8 once percent-decoded"
        if (problem := unstorable_character(name)) is not None:
            return f"a field name {problem}"
        try:
            value = _decoded(raw_value)
        except UnicodeDecodeError:
            return f"the field {name!r} is not UTF-8 once percent-decoded"
        if (problem := unstorable_character(value)) is not None:
            return f"the field {name!r} {problem}"
    return None


def _decoded(raw: bytes) -> str:
    return unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")


def _replaying(body: bytes, request: Request) -> Receive:
    """An ASGI ``receive`` that hands the route the body already read, then the connection's own messages."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await request.receive()

    return receive

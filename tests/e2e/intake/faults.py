"""An ASGI wrapper that injects transport faults in front of the real intake app, served by uvicorn on loopback:
answers of its own (429 with Retry-After, 503, 400), connections dropped before the app sees the request, and
connections dropped after the app processed it but before its answer reaches the client."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: A fault's name: "429", "503", "400", "drop_before", "drop_after", or a callable run before passing through.
Fault = str | Callable[[], None]


class InjectedDrop(Exception):
    """Raised after the response started: uvicorn closes the connection without finishing the response."""


@dataclass
class Faults:
    """``plan[(method, route, subject)]`` lists the faults of that request's next occurrences; an empty list (or no
    entry) passes through. The subject is a capture's native_record_id, a declare's sha256, or "*" (any)."""

    app: ASGIApp
    plan: dict[tuple[str, str, str], list[Fault]] = field(default_factory=dict)
    seen: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        route = "/v1/artifacts/uploads/{id}" if path.startswith("/v1/artifacts/uploads/") else path
        if method == "PUT":  # abort mid-request: do not read the body at all
            fault = self._next((method, route, "*"))
            if fault == "drop_before":
                await _drop(send)
            await self._pass(fault, scope, receive, send)
            return
        body = await _read(receive)
        subject = _subject(route, body)
        fault = self._next((method, route, subject))
        if fault is None and subject != "*":
            fault = self._next((method, route, "*"))
        replay = _replay(body)
        if fault == "drop_before":
            await _drop(send)
        await self._pass(fault, scope, replay, send)

    def _next(self, key: tuple[str, str, str]) -> Fault | None:
        with self.lock:
            self.seen[key] += 1
            faults = self.plan.get(key)
            return faults.pop(0) if faults else None

    async def _pass(self, fault: Fault | None, scope: Scope, receive: Receive, send: Send) -> None:
        if callable(fault):
            fault()
            fault = None
        if fault in ("429", "503", "400"):
            status = int(str(fault))
            code = {429: "RATE_LIMITED", 503: "STORAGE_UNAVAILABLE", 400: "BAD_REQUEST"}[status]
            headers = [(b"content-type", b"application/json")]
            if status == 429:
                headers.append((b"retry-after", b"1"))
            elif status == 503:
                headers.append((b"retry-after", b"0"))
            body = json.dumps({"error": {"code": code, "message": "injected", "retryable": status != 400}})
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body.encode()})
            return
        if fault == "drop_after":
            held: list[Message] = []

            async def hold(message: Message) -> None:
                held.append(message)

            await self.app(scope, receive, hold)
            await send(held[0])  # the status line and headers, then nothing: the answer never arrives whole
            raise InjectedDrop("connection dropped after the capture was processed")
        await self.app(scope, receive, send)


async def _read(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _subject(route: str, body: bytes) -> str:
    try:
        document = json.loads(body)
    except ValueError:
        return "*"
    if route == "/v1/captures":
        return str(document.get("native_record_id"))
    if route == "/v1/artifacts/uploads":
        return str(document.get("sha256"))
    return "*"


async def _drop(send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"100")]})
    raise InjectedDrop("connection dropped before the request reached the app")

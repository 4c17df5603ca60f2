"""A model provider that misbehaves on purpose: an OpenAI-compatible ``POST /v1/chat/completions`` on loopback.

Outside the platform (the LLM provider), so a fake is allowed, and it is a real HTTP server: the provider client
runs its real httpx code path (timeouts, status codes, headers, bodies). A test scripts the next answers in order
(``then``); when the script is empty the server answers with ``default`` (a function of the request body). Every
request body is kept (``requests``) so a test can check what the platform sent.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    #: The assistant message's content (a string: JSON or not); None with status 200 means an empty message.
    content: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: A raw body instead of a chat completion (an answer that is not a completion at all).
    raw_body: bytes | None = None


def completion(content: Any) -> Reply:
    """A 200 chat completion whose message content is ``content`` as JSON."""
    return Reply(200, json.dumps(content))


@dataclass
class LlmServer:
    base_url: str
    model: str = "fake-model-1"
    script: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    default: Callable[[dict[str, Any]], Reply] = lambda body: Reply(503)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def then(self, *replies: Reply) -> LlmServer:
        with self.lock:
            self.script.extend(replies)
        return self

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            self.requests.append(body)
            if self.script:
                return self.script.popleft()
        return self.default(body)


def _handler(server: LlmServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            body["_authorization"] = self.headers.get("authorization")
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": "not found"}', {})
                return
            reply = server.next_reply(body)
            if reply.raw_body is not None:
                payload = reply.raw_body
            elif reply.status == 200:
                payload = json.dumps(
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": server.model,
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content}}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    }
                ).encode()
            else:
                payload = json.dumps({"error": {"message": f"status {reply.status}"}}).encode()
            self._send(reply.status, payload, reply.headers)

        def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def running_llm_server() -> Iterator[LlmServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server = LlmServer(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    httpd.RequestHandlerClass = _handler(server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()

"""Serve an ASGI app with uvicorn in a background thread on a loopback port (e2e tests, ``prw demo``)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn
from starlette.types import ASGIApp


class BackgroundServer:
    """``with BackgroundServer(app) as server: httpx.get(server.url + "/v1/...")``.

    The socket is bound before uvicorn starts (port 0: the kernel picks a free port), so there is no window in
    which another process can take the port. ``start_timeout`` is a deadline for the app's startup (its lifespan
    opens database pools), long enough for a machine running a test suite beside it."""

    def __init__(
        self, app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0, start_timeout: float = 60.0
    ) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.host, self.port = self._socket.getsockname()[:2]
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name=f"uvicorn-{self.port}", daemon=True)
        self._start_timeout = start_timeout

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()

    def _serve(self) -> None:
        self._server.run(sockets=[self._socket])

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

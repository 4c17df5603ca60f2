"""App factories for ``prw serve`` (uvicorn ``factory=True``, several worker processes).

Uvicorn imports this module in each worker process and calls the factory there, so every worker builds its own
``Platform`` from ``Settings()`` (the ``PRW_*`` environment it inherited): its own pools, nothing shared across
processes, nothing built at import. The app's lifespan closes the platform when the worker stops (after uvicorn
has finished the requests in flight). Pools open without waiting for the database, so a worker starts while
PostgreSQL is unreachable and its ``GET /readyz`` answers 503 until it is back.

Every response of a served app names the worker that made it (``X-Served-By: <pid>``), as every log line does
(``log_config``): an operator matches a response to its worker's log.
"""

from __future__ import annotations

import copy
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from prw_api import compose
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings

SERVED_BY_HEADER = "X-Served-By"

#: ``prw serve <app>``: the factory of each app, as uvicorn imports it in every worker.
FACTORIES = {
    "intake": "prw_api.factory:intake_app",
    "product": "prw_api.factory:product_app",
    "admin": "prw_api.factory:admin_app",
}


def intake_app() -> FastAPI:
    """The intake origin of this worker process."""
    return _served(lambda platform, lifespan: compose.intake_app(platform, lifespan=lifespan))


def product_app() -> FastAPI:
    """The product origin of this worker process, bound to ``PRW_PRODUCT_TENANT_ID`` / ``PRW_PRODUCT_CATALOG_ID``."""
    return _served(lambda platform, lifespan: compose.product_app(platform, lifespan=lifespan))


def admin_app() -> FastAPI:
    """The admin origin of this worker process (operators log in at ``PRW_OPERATOR_OIDC__ISSUER``)."""
    return _served(lambda platform, lifespan: compose.admin_app(platform, lifespan=lifespan))


def _served(build: Callable[[Platform, Any], FastAPI]) -> FastAPI:
    platform = bootstrap(Settings(), wait_for_database=False)

    @asynccontextmanager
    async def closing(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            # Uvicorn runs this after the in-flight requests finished (or its graceful timeout passed).
            platform.close()

    try:
        app = build(platform, closing)
    except BaseException:
        platform.close()
        raise
    app.add_middleware(ServedByMiddleware)
    return app


class ServedByMiddleware:
    """``X-Served-By: <pid>`` on every response: which worker process answered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.pid = str(os.getpid())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_pid(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[SERVED_BY_HEADER] = self.pid
            await send(message)

        await self.app(scope, receive, send_with_pid)


def log_config(level: str = "INFO") -> dict[str, Any]:
    """Uvicorn's logging configuration with the process id on every line (the parent's and each worker's), and
    the platform's own loggers (``prw_api``, ``prw_platform``) through the same handler."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    prefix = "%(asctime)s pid=%(process)d "
    config["formatters"]["default"]["fmt"] = prefix + "%(levelprefix)s %(name)s: %(message)s"
    config["formatters"]["access"]["fmt"] = (
        prefix + '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s'
    )
    for formatter in ("default", "access"):
        config["formatters"][formatter]["use_colors"] = False
    for logger in ("prw_api", "prw_platform"):
        config["loggers"][logger] = {"handlers": ["default"], "level": level, "propagate": False}
    return config

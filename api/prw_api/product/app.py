"""The product origin: the public product API (seed 003: "Product service API", if_product_query)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import Lifespan

from prw_api import health
from prw_api.errors import install_error_handlers
from prw_api.middleware import install_input_hardening
from prw_api.product.ratelimit import RateLimitMiddleware
from prw_api.product.routes import classes, items, merchants, shipping, sources
from prw_platform.config import Settings
from prw_platform.errors import InvalidQuery
from prw_platform.services import PublicCatalog, RateLimiter


def create_app(
    settings: Settings,
    catalog: PublicCatalog,
    *,
    limiter: RateLimiter | None = None,
    lifespan: Lifespan[FastAPI] | None = None,
) -> FastAPI:
    """``catalog`` is the one released (tenant, catalog) this deployment serves (``Platform.public_catalog``);
    ``limiter`` the per-client rate limiter (``Platform.public_rate_limiter``; None: no limit here);
    ``lifespan`` is the server's (``prw_api.factory`` closes the platform with it)."""

    @asynccontextmanager
    async def serving(app: FastAPI) -> AsyncIterator[None]:
        try:
            if lifespan is None:
                yield
            else:
                async with lifespan(app):
                    yield
        finally:
            # The async reads' pool belongs to this server's event loop (prw_platform.db.async_reads).
            await catalog.close_async_reads()

    app = FastAPI(
        title="PRW product",
        summary="Public product API: released items and the listings they own (if_product_query)",
        version="1",
        lifespan=serving,
    )
    app.state.settings = settings
    app.state.catalog = catalog
    # Looked up per probe (the service is the readiness check: PublicCatalog.ready).
    app.state.ready = lambda: catalog.ready()
    install_error_handlers(app, validation_code=InvalidQuery.code)
    # Only the shipping evaluation takes a body; every body is held to the JSON limit. A NUL in a path or filter
    # is 422 INVALID_QUERY.
    install_input_hardening(app, settings, validation_code=InvalidQuery.code)
    if limiter is not None:
        # Outermost: a refused request costs no parsing, no database.
        app.add_middleware(RateLimitMiddleware, limiter=limiter)
    app.include_router(health.router)
    app.include_router(items.router)
    app.include_router(sources.router)
    app.include_router(merchants.router)
    app.include_router(shipping.router)
    app.include_router(classes.router)
    return app

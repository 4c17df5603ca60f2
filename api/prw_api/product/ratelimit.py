"""if_product_query 429 RATE_LIMITED: the per-client limiter (``prw_platform.services.RateLimiter``) in front of
every public route. The client is the peer address (uvicorn puts the load balancer's ``X-Forwarded-For`` there
for the trusted addresses of ``--forwarded-allow-ips``). Probes are never limited."""

from __future__ import annotations

import math

from starlette.types import ASGIApp, Receive, Scope, Send

from prw_api.errors import ApiError, error_response
from prw_platform.services import RateLimiter

RATE_LIMITED = "RATE_LIMITED"
_UNLIMITED_PATHS = frozenset({"/healthz", "/readyz"})


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, *, limiter: RateLimiter) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in _UNLIMITED_PATHS:
            client = scope.get("client")
            wait = self.limiter.check(client[0] if client else "unknown")
            if wait is not None:
                retry_after = str(max(1, math.ceil(wait)))
                refusal = ApiError(
                    429,
                    RATE_LIMITED,
                    f"too many requests from this client; retry after {retry_after} s",
                    retryable=True,
                    headers={"Retry-After": retry_after},
                )
                await error_response(scope, refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)

"""Per-client rate limiting of the public API (if_product_query: 429 RATE_LIMITED, retry after Retry-After).

Pluggable: the product app takes any ``RateLimiter``; the composition root builds ``TokenBucketLimiter`` from
``PRW_PRODUCT_RATE_LIMIT_PER_SECOND`` / ``PRW_PRODUCT_RATE_LIMIT_BURST`` (none when the rate is unset: the seed
puts rate limiting at the edge, so a deployment behind a limiting proxy needs none here). A limiter shared by
several processes (a Redis or a proxy's) implements the same one method.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Protocol, runtime_checkable

#: Clients remembered at most (least recently seen forgotten first): memory stays bounded under many addresses.
MAX_TRACKED_CLIENTS: Final = 100_000


@runtime_checkable
class RateLimiter(Protocol):
    def check(self, client: str) -> float | None:
        """Take one request of ``client`` (an address or an API key): None when it may proceed, else the seconds
        to wait before retrying (the 429's Retry-After). Must not raise, and must be safe across threads."""
        ...


class TokenBucketLimiter:
    """``rate`` requests per second per client, bursts of up to ``burst``; in one process."""

    def __init__(self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limit needs a positive rate and a burst of at least 1")
        self._rate, self._burst, self._clock = rate, float(burst), clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, client: str) -> float | None:
        with self._lock:
            now = self._clock()
            tokens, seen = self._buckets.pop(client, (self._burst, now))
            tokens = min(self._burst, tokens + (now - seen) * self._rate)
            wait = None if tokens >= 1 else (1 - tokens) / self._rate
            self._buckets[client] = (tokens - 1 if wait is None else tokens, now)
            if len(self._buckets) > MAX_TRACKED_CLIENTS:
                self._buckets.popitem(last=False)
            return wait

"""The collector's retry policy (if_source_fetch, if_collector_bootstrap, if_artifact_upload, if_capture_submit,
if_receipt_get): exponential backoff with full jitter (base 1 s, cap 5 min, 8 attempts) that honours Retry-After;
no 4xx is retried but 408 and 429; a capture is resubmitted with the same Idempotency-Key.

The sleep and the random source are parameters, so tests run the policy without waiting and with known draws.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

#: The statuses worth another attempt: request timeout, rate limited, and every server-side failure.
RETRYABLE_4XX = frozenset({408, 429})


def is_retryable_status(status: int) -> bool:
    """408, 429 and 5xx; never another 4xx (fix the request or alert the operator instead)."""
    return status in RETRYABLE_4XX or 500 <= status <= 599


def parse_retry_after(
    value: str | None, now: Callable[[], datetime] = lambda: datetime.now(UTC)
) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (RFC 9110 10.2.3: delay-seconds or an HTTP-date); None
    when absent or malformed."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now()).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    """Full-jitter exponential backoff: before attempt ``n + 1`` wait a uniform draw in
    ``[0, min(cap, base * 2**(n-1))]``, or the server's ``Retry-After`` when that is longer (itself at most
    ``cap``). ``attempts`` counts every request, the first one included."""

    base_seconds: float = 1.0
    cap_seconds: float = 300.0
    attempts: int = 8
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    random: Callable[[], float] = field(default=_random.random, compare=False)

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.base_seconds < 0 or self.cap_seconds < 0:
            raise ValueError("a retry policy needs attempts >= 1 and non-negative delays")

    def backoff(self, failures: int) -> float:
        """The full-jitter delay after the ``failures``-th failed attempt (1-based)."""
        exponent = min(max(failures, 1) - 1, 62)
        ceiling = min(self.cap_seconds, self.base_seconds * 2.0**exponent)
        return self.random() * ceiling

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        """Seconds to wait before the next attempt; ``Retry-After`` is a floor (the server knows best)."""
        jittered = self.backoff(failures)
        if retry_after is None:
            return jittered
        return max(jittered, min(retry_after, self.cap_seconds))


__all__ = ["RETRYABLE_4XX", "RetryPolicy", "is_retryable_status", "parse_retry_after"]

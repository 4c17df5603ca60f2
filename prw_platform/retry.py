"""The platform's one retry/backoff policy for deliveries that failed for a retryable reason.

Both queue consumers use it (if_resolution_job "backoff with delay", if_accepted_change "retry DB_UNAVAILABLE"):
the delay is ``base_seconds`` doubled per earlier delivery of the message, at most ``max_seconds`` (the queue
port's limit is 900 s). Deterministic: the queue's receive limit (ADR-009: DLQ after ``max_receives``), not
jitter, bounds the attempts.
"""

from __future__ import annotations

from dataclasses import dataclass

from prw_platform.queues.port import MAX_DELAY_SECONDS


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    base_seconds: int = 5
    max_seconds: int = 900

    def __post_init__(self) -> None:
        if self.base_seconds < 0 or not 0 <= self.max_seconds <= MAX_DELAY_SECONDS:
            raise ValueError(f"retry delays must lie in 0..{MAX_DELAY_SECONDS} s")

    def delay(self, receive_count: int) -> int:
        """Seconds before delivery ``receive_count + 1`` (``receive_count`` counts this failed delivery)."""
        exponent = min(max(receive_count, 1) - 1, 16)
        return min(self.max_seconds, self.base_seconds * (1 << exponent))


__all__ = ["RetryPolicy"]

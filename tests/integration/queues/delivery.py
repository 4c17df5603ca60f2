"""Helpers for queue tests: the backend under test, and polling with a deadline (never a bare sleep: each poll
is a receive that long-polls up to 1 s, so a test waits only as long as the backend needs)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from prw_platform.queues import Queue, Received

#: Generous on purpose: a slow machine must not fail a correct backend. Tests never assert how long it took.
DEADLINE_SECONDS = 30.0


@dataclass(frozen=True)
class QueueBackend:
    kind: str
    #: make(max_receives=..., visibility_timeout=...) -> a new, empty queue with a unique name.
    make: Callable[..., Queue]
    #: PostgreSQL never hands out a message twice while it is invisible; SQS standard queues may (the AWS
    #: guide: "the visibility timeout isn't a guarantee against receiving a message twice"), and moto does.
    exclusive_delivery: bool


def receive_next(
    queue: Queue, *, visibility_timeout: int, max_messages: int = 1, timeout: float = DEADLINE_SECONDS
) -> list[Received]:
    """Receive until at least one message arrives, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = queue.receive(max_messages, visibility_timeout=visibility_timeout, wait_seconds=1)
        if got:
            return got
    raise AssertionError(f"no message on {queue.name} within {timeout} s")


def receive_one(queue: Queue, *, visibility_timeout: int) -> Received:
    got = receive_next(queue, visibility_timeout=visibility_timeout)
    assert len(got) == 1
    return got[0]


def drain(queue: Queue, *, expected: int, batch: int = 10, visibility_timeout: int = 120) -> list[Received]:
    """Receive (without acking) until ``expected`` messages were delivered."""
    received: list[Received] = []
    deadline = time.monotonic() + DEADLINE_SECONDS
    while len(received) < expected:
        assert time.monotonic() < deadline, f"only {len(received)} of {expected} messages arrived"
        received.extend(queue.receive(batch, visibility_timeout=visibility_timeout, wait_seconds=1))
    return received

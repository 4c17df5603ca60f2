"""The platform's one clock: a callable returning an aware UTC ``datetime``.

Every service takes its clock from the composition root (``Platform.clock``), so a test (or a replay) can pin time
for a whole process by building the platform with another clock; nothing calls ``datetime.now`` on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


__all__ = ["Clock", "utc_now"]

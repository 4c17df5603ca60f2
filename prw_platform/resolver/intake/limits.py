"""Intake limits as a value (the service's configuration, independent of how settings are read)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True, slots=True)
class IntakeLimits:
    max_artifact_bytes: int = 25 * 1024 * 1024
    upload_ttl: timedelta = timedelta(seconds=300)
    max_artifacts_per_capture: int = 16
    #: An ``observed_at`` later than the server's clock by more than this is refused (collectors' clock skew).
    clock_skew_tolerance: timedelta = timedelta(seconds=300)
    #: if_capture_submit: "Dedupe window PROP 7 days". Within it a key replays or conflicts; after it, the same
    #: key starts a new capture with a new receipt (migration 0009: the key's next ``key_generation``).
    idempotency_window: timedelta = timedelta(days=7)

"""Intake limits (``PRW_INTAKE_*``), read by the composition root like ``prw_platform.config``."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from prw_platform.config import Settings
from prw_platform.resolver.intake.limits import IntakeLimits


class IntakeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PRW_INTAKE_", extra="ignore")

    #: if_artifact_upload: 413 ARTIFACT_TOO_LARGE above this (PROP limit; the seed leaves the number open).
    max_artifact_bytes: int = 25 * 1024 * 1024
    max_artifacts_per_capture: int = 16
    #: if_capture_submit: "Dedupe window PROP 7 days" (``PRW_INTAKE_IDEMPOTENCY_WINDOW_SECONDS``).
    idempotency_window_seconds: int = Field(default=7 * 24 * 3600, gt=0)
    #: How long intake reuses a catalog's current history epoch read from the control plane
    #: (``PRW_INTAKE_EPOCH_CACHE_SECONDS``; 0 reads it on every capture). The bound, and why fencing stays
    #: correct, are in ``prw_platform.resolver.intake.service.control_plane_epochs``.
    epoch_cache_seconds: float = Field(default=5.0, ge=0, le=60)

    def limits(self, settings: Settings) -> IntakeLimits:
        # if_artifact_upload: "The presigned URL expires after 300 s, so a slow upload re-declares": one TTL
        # (``s3.presign_ttl_seconds``) for the presigned URL and for the streamed upload_id alike.
        return IntakeLimits(
            max_artifact_bytes=self.max_artifact_bytes,
            upload_ttl=timedelta(seconds=settings.s3.presign_ttl_seconds),
            max_artifacts_per_capture=self.max_artifacts_per_capture,
            clock_skew_tolerance=timedelta(seconds=settings.clock_skew_tolerance_seconds),
            idempotency_window=timedelta(seconds=self.idempotency_window_seconds),
        )

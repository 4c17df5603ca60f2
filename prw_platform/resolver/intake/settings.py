"""Intake limits (``PRW_INTAKE_*``), read by the composition root like ``prw_platform.config``."""

from __future__ import annotations

from datetime import timedelta

from pydantic_settings import BaseSettings, SettingsConfigDict

from prw_platform.resolver.intake.limits import IntakeLimits


class IntakeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PRW_INTAKE_", extra="ignore")

    #: if_artifact_upload: 413 ARTIFACT_TOO_LARGE above this (PROP limit; the seed leaves the number open).
    max_artifact_bytes: int = 25 * 1024 * 1024
    #: if_artifact_upload: "The presigned URL expires after 300 s, so a slow upload re-declares."
    upload_ttl_seconds: int = 300
    max_artifacts_per_capture: int = 16

    def limits(self) -> IntakeLimits:
        return IntakeLimits(
            max_artifact_bytes=self.max_artifact_bytes,
            upload_ttl=timedelta(seconds=self.upload_ttl_seconds),
            max_artifacts_per_capture=self.max_artifacts_per_capture,
        )

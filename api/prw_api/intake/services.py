"""What the intake origin needs from the core, built once by the composition root."""

from __future__ import annotations

from dataclasses import dataclass

from prw_platform.auth import CollectorAuthService, TokenSettings
from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.resolver.intake import (
    IntakeContext,
    IntakeService,
    IntakeSettings,
    JobEnqueuer,
    control_plane_epochs,
)
from prw_platform.storage import ObjectStore, build_object_store


@dataclass(frozen=True)
class IntakeApiServices:
    intake: IntakeService
    auth: CollectorAuthService


def build_intake_services(
    settings: Settings,
    *,
    resolver_db: Database,
    control_db: Database,
    enqueuer: JobEnqueuer,
    store: ObjectStore | None = None,
    intake_settings: IntakeSettings | None = None,
    token_settings: TokenSettings | None = None,
) -> IntakeApiServices:
    """``resolver_db`` acts as ``resolver_app``; ``control_db`` holds the history epochs."""
    limits = (intake_settings or IntakeSettings()).limits(settings)
    context = IntakeContext(
        db=resolver_db,
        store=store or build_object_store(settings),
        epochs=control_plane_epochs(control_db),
        enqueuer=enqueuer,
        limits=limits,
        evidence_bucket=settings.evidence_bucket,
    )
    auth = CollectorAuthService.from_settings(settings, resolver_db, token_settings)
    return IntakeApiServices(IntakeService(context), auth)

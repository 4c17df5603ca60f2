"""What the intake functions depend on, passed in by the composition root (never import-time globals)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Database
from prw_platform.resolver.intake.jobs import JobEnqueuer
from prw_platform.resolver.intake.limits import IntakeLimits
from prw_platform.storage.keys import EVIDENCE_BUCKET
from prw_platform.storage.port import ObjectStore

#: (tenant_id, catalog_id) -> the catalog's current history epoch (``prw_platform.resolver.catalogs``).
EpochSource = Callable[[str, str], str]


@dataclass(frozen=True)
class IntakeContext:
    #: A ``resolver_app`` database: every transaction is tenant-scoped by row-level security (INV-06).
    db: Database
    store: ObjectStore
    epochs: EpochSource
    enqueuer: JobEnqueuer
    limits: IntakeLimits = field(default_factory=IntakeLimits)
    evidence_bucket: str = EVIDENCE_BUCKET
    clock: Clock = utc_now

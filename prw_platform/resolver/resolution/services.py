"""What the resolution consumer depends on, built by the composition root (``Platform.resolution_services``), never from
import-time globals."""

from __future__ import annotations

from dataclasses import dataclass, field

from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Database
from prw_platform.plugins import PluginRegistry
from prw_platform.resolver.decisions import StreamLocator
from prw_platform.resolver.intake.jobs import JobEnqueuer
from prw_platform.resolver.resolution.profiles import ProfilePolicy
from prw_platform.retry import RetryPolicy
from prw_platform.storage import ObjectStore

#: The consumer's name in ``resolver.consumer_inbox``.
CONSUMER = "resolution"


@dataclass(frozen=True, slots=True)
class ResolutionServices:
    #: Acts as ``resolver_app``: every transaction is tenant-scoped by row-level security (INV-06).
    resolver_db: Database
    store: ObjectStore
    registry: PluginRegistry
    streams: StreamLocator
    clock: Clock = utc_now
    profiles: ProfilePolicy = field(default_factory=ProfilePolicy)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    consumer: str = CONSUMER
    #: Sends a finished stage's next job to that stage's queue (``QueueJobEnqueuer`` with the stage queues).
    #: None: the next job's row is committed ``pending`` and the pending-job sweeper sends it (AW-02).
    enqueuer: JobEnqueuer | None = None

"""What both sides of a platform share: settings, a database pool per role and timeout class (if_db), the ports
(object store, queues bound to the role of the side that uses them, ADR-009; plugin registry), the one clock and
retry policy, the operator read models, and closing it all. Everything is created on first use and cached, so a
process pays only for what it uses (``prw worker relay`` opens no product pool).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from types import TracebackType
from typing import Self

from prw_platform.auth import SigningKey, TokenSettings
from prw_platform.auth.service import load_signing_key
from prw_platform.clock import Clock, utc_now
from prw_platform.config import Settings
from prw_platform.contracts import StreamKey
from prw_platform.db import roles
from prw_platform.db.database import Database, ready_all
from prw_platform.db.locate import DatabaseUrls
from prw_platform.db.migrate import MigrationStatus
from prw_platform.plugins import PluginRegistry, get_plugin_manager
from prw_platform.queues import (
    ACCEPTED_CHANGES,
    RESOLUTION_REPLAYS,
    RESOLUTION_STAGE_QUEUES,
    Queue,
    build_queue,
)
from prw_platform.reports import OperatorReports
from prw_platform.resolver.catalogs import current_stream
from prw_platform.resolver.intake import IntakeSettings, QueueJobEnqueuer
from prw_platform.resolver.intake.fleet import FleetPolicy
from prw_platform.retry import RetryPolicy
from prw_platform.storage import ObjectStore, build_object_store


@dataclass
class Shared:
    """Settings, pools and ports of one process. Close it (or use it as a context manager) to release pools."""

    settings: Settings
    urls: DatabaseUrls
    migrations: tuple[MigrationStatus, ...] = ()
    #: The one clock every service reads.
    clock: Clock = utc_now
    intake_settings: IntakeSettings = field(default_factory=IntakeSettings)
    token_settings: TokenSettings = field(default_factory=TokenSettings)
    #: False: pools open without waiting for a first connection, so an API server starts (and its readiness
    #: route answers 503) while the database is unreachable; requests wait for a connection up to the pool timeout.
    wait_for_database: bool = True
    #: What ``close`` releases, the last opened first: pools, HTTP clients.
    _opened: ExitStack = field(default_factory=ExitStack, repr=False)
    #: Every pool opened so far: what ``ready`` asks.
    _pools: list[Database] = field(default_factory=list, repr=False)

    # -- Database pools, one per service role and timeout class (if_db). -----------------------------------------
    def _database(self, role: str | None, name: str, *, api: bool = False, control: bool = False) -> Database:
        """A pool of ``role`` on the main (or the control) database, with API (5 s) or consumer (30 s) timeouts."""
        s = self.settings
        db = Database(
            self.urls.control if control else self.urls.main,
            role=role,
            statement_timeout_ms=s.statement_timeout_api_ms if api else s.statement_timeout_consumer_ms,
            max_size=s.db_pool_max_size,
            application_name=f"prw-{name}",
        ).open(wait=self.wait_for_database)
        self._opened.callback(db.close)
        self._pools.append(db)
        return db

    def ready(self, timeout_s: float = 2.0) -> None:
        """Readiness of this process: every pool it has opened answers ``SELECT 1``, all within ``timeout_s``;
        ``DatabaseUnavailable`` otherwise. An API origin's services open their pools when they are built (the
        control database's too, for the history epochs), so these are the pools its requests use."""
        ready_all(tuple(self._pools), timeout_s)

    @cached_property
    def resolver_db(self) -> Database:
        return self._database(roles.RESOLVER_APP, "resolver")

    @cached_property
    def resolver_api_db(self) -> Database:
        return self._database(roles.RESOLVER_APP, "resolver-api", api=True)

    @cached_property
    def sweeper_db(self) -> Database:
        """resolver_sweeper: reads pending resolution jobs of every tenant and marks them enqueued, nothing else."""
        return self._database(roles.RESOLVER_SWEEPER, "sweeper")

    @cached_property
    def relay_db(self) -> Database:
        return self._database(roles.RESOLVER_RELAY, "relay")

    @cached_property
    def pruner_db(self) -> Database:
        """resolver_pruner: retention rows of every stream; deletes published outbox rows, nothing else."""
        return self._database(roles.RESOLVER_PRUNER, "pruner")

    @cached_property
    def product_db(self) -> Database:
        return self._database(roles.PRODUCT_APP, "product")

    @cached_property
    def product_api_db(self) -> Database:
        """The public reads of the product API."""
        return self._database(roles.PRODUCT_APP, "product-api", api=True)

    @cached_property
    def control_db(self) -> Database:
        """The control plane (history epochs); issuing an epoch is an operator action, so this is the owner."""
        return self._database(None, "control", api=True, control=True)

    @cached_property
    def operator_db(self) -> Database:
        """prw_operator: reads every tenant's rows (Dagster assets and checks, reports), writes nothing."""
        return self._database(roles.PRW_OPERATOR, "operator")

    # -- Ports. -----------------------------------------------------------------------------------------------
    @cached_property
    def store(self) -> ObjectStore:
        return build_object_store(self.settings)

    @cached_property
    def registry(self) -> PluginRegistry:
        return PluginRegistry.from_manager(get_plugin_manager())

    # Queues, each bound to the role of the side that uses it (ADR-009).
    @cached_property
    def resolution_queue(self) -> Queue:
        """resolution-jobs: the extract stage's queue, the one intake sends to."""
        return self.resolution_stage_queues["extract"]

    @cached_property
    def resolution_stage_queues(self) -> dict[str, Queue]:
        """if_resolution_job's queue of each stage (extract, normalize, identity), all resolver_app's."""
        return {
            stage: build_queue(self.settings, spec.name, db=self.resolver_db)
            for stage, spec in RESOLUTION_STAGE_QUEUES.items()
        }

    @cached_property
    def resolution_jobs(self) -> QueueJobEnqueuer:
        """Sends a resolution job to the queue of its stage (intake, the stages handing on, the sweeper)."""
        return QueueJobEnqueuer(self.resolution_queue, self.resolution_stage_queues)

    @cached_property
    def replay_queue(self) -> Queue:
        """if_replay_job: resolution-replays, produced by the admin API and consumed by the replay stage."""
        return build_queue(self.settings, RESOLUTION_REPLAYS.name, db=self.resolver_db)

    @cached_property
    def accepted_changes_out(self) -> Queue:
        """The relay's end of the accepted-change queue (send only)."""
        return build_queue(self.settings, ACCEPTED_CHANGES.name, db=self.relay_db)

    @cached_property
    def accepted_changes_in(self) -> Queue:
        """The product consumer's end of the accepted-change queue."""
        return build_queue(self.settings, ACCEPTED_CHANGES.name, db=self.product_db)

    # -- Policies, keys and read models both sides use. --------------------------------------------------------
    @cached_property
    def retry(self) -> RetryPolicy:
        """The one retry/backoff policy of both queue consumers."""
        return RetryPolicy(self.settings.retry_base_seconds, self.settings.retry_max_seconds)

    def streams(self, tenant_id: str, catalog_id: str) -> StreamKey:
        """The stream decisions write to now: the catalog at the control plane's current history epoch."""
        return current_stream(self.control_db, tenant_id, catalog_id)

    @cached_property
    def token_signing_key(self) -> SigningKey:
        """The token signing key; the platform's other signing secrets are derived from it, one per purpose."""
        return load_signing_key(self.settings, self.token_settings)

    @cached_property
    def reports(self) -> OperatorReports:
        """Operator read models across tenants and both sides, through prw_operator (read-only)."""
        s = self.settings
        return OperatorReports(
            self.operator_db,
            clock=self.clock,
            fleet=FleetPolicy(
                failing_after=s.collector_failing_after,
                alert_after=timedelta(seconds=s.collector_alert_after_seconds),
            ),
            gap_alert_after=timedelta(seconds=s.gap_alert_after_seconds),
            failed_file_alert_after=timedelta(seconds=s.catalog_file_failed_alert_seconds),
        )

    def close(self) -> None:
        self._opened.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

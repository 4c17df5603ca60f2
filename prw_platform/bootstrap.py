"""The composition root: ``bootstrap(settings) -> Platform`` builds every service once, from settings.

Nothing in the core reads settings or connects at import time, and no edge assembles a service: the CLI, the APIs
and the Dagster code location call ``bootstrap`` and use the services of the ``Platform`` it returns (intake,
collector auth, resolution, decisions, relay, product apply, public catalog, sweeper, provisioning, operator
reports, collector registration and heartbeats), the one clock, the one retry policy and the registry of stages (``prw_platform.runtime``).

Each service acts as its own database role (if_db): the resolver as ``resolver_app``, the relay as
``resolver_relay``, the product side as ``product_app``; a queue on the PostgreSQL backend is bound to the role of
the side that uses it. Services, pools and queues are created on first use and cached, so a process pays only for
what it uses (``prw worker relay`` opens no product pool); a worker prepares its stages before starting threads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from types import TracebackType

import httpx

from prw_platform.auth import CollectorAuthService, CollectorClients, SigningKey, TokenSettings
from prw_platform.auth.keys import derived_secret
from prw_platform.auth.operators import OperatorSessions
from prw_platform.auth.service import load_signing_key
from prw_platform.clock import Clock, utc_now
from prw_platform.config import Settings
from prw_platform.contracts import StreamKey
from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.db.locate import DatabaseUrls, locate_databases
from prw_platform.db.migrate import MigrationStatus, migrate_all
from prw_platform.fencing import EpochFencing
from prw_platform.llm import DisabledProvider, LlmProvider
from prw_platform.llm.openai_compatible import OpenAICompatibleProvider
from prw_platform.operations import AdminReads
from prw_platform.pipeline import default_stages
from prw_platform.plugins import PluginRegistry, get_plugin_manager
from prw_platform.plugins.query import QueryVocabulary
from prw_platform.product.consumer.driver import ProductApply
from prw_platform.product.gaps import ExportSource, GapCloser, HttpExportSource
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.items import CursorCodec
from prw_platform.product.public.pictures import PictureLinks
from prw_platform.product.ratelimit import RateLimiter, TokenBucketLimiter
from prw_platform.product.rebuild import HttpSnapshotSource, ProductRebuild, SnapshotSource
from prw_platform.product.rebuild.cleanup import RebuildCleanup
from prw_platform.product.retention_report import ProgressReporter, ProgressSink
from prw_platform.provisioning import CatalogProvisioning
from prw_platform.queues import (
    ACCEPTED_CHANGES,
    CATALOG_FILE_CLEANUP,
    RESOLUTION_REPLAYS,
    RESOLUTION_STAGE_QUEUES,
    Queue,
    build_queue,
)
from prw_platform.queues.operations import DeadLetterOperations
from prw_platform.reports import OperatorReports
from prw_platform.resolver.assist.service import AssistPolicy, AssistService
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec, current_stream
from prw_platform.resolver.decisions import DecisionService, MerchantService
from prw_platform.resolver.exports.events import ExportService
from prw_platform.resolver.exports.snapshots import (
    ExportLinks,
    ExportSnapshot,
    SnapshotExports,
    finished_exports,
)
from prw_platform.resolver.files.cleanup import FileCleanup, FileSweep
from prw_platform.resolver.files.service import CatalogFiles, FileSettings
from prw_platform.resolver.improvements.replays import ReplayService
from prw_platform.resolver.improvements.service import ImprovementService
from prw_platform.resolver.intake import (
    IntakeContext,
    IntakeService,
    IntakeSettings,
    PendingJobSweeper,
    QueueJobEnqueuer,
    control_plane_epochs,
    receipts,
)
from prw_platform.resolver.intake.fleet import FleetPolicy
from prw_platform.resolver.intake.workers import CollectorService, WorkerPolicy
from prw_platform.resolver.resolution import ResolutionServices
from prw_platform.resolver.resolution.batch import ResolutionConsumer
from prw_platform.resolver.resolution.dry_run import DryRunService
from prw_platform.resolver.resolution.matching import CATALOG_SOURCE, LISTING_SOURCE, MatchingBench
from prw_platform.resolver.review import EvidenceLinks, ReviewQueue
from prw_platform.resolver.stream.relay import Relay
from prw_platform.resolver.stream.retention import (
    Pruner,
    RetentionControl,
    RetentionPolicy,
    RetentionStatus,
    retention_status,
)
from prw_platform.retry import RetryPolicy
from prw_platform.runtime.stages import StageRegistry
from prw_platform.storage import ObjectStore, build_object_store


@dataclass(frozen=True, slots=True)
class _InProcessProgressSink:
    """The product's ``ProgressSink`` bound to the resolver's retention service in the same process (the
    composition root is the one place that may join the two sides)."""

    retention: RetentionControl

    def report_progress(self, stream: StreamKey, consumer: str, position: int) -> int:
        return self.retention.report_progress(stream, consumer, position).acknowledged_position


@dataclass
class Platform:
    """Every long-lived service of one process. Close it (or use it as a context manager) to release pools."""

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
    _databases: list[Database] = field(default_factory=list, repr=False)
    _catalogs: dict[tuple[str, str], PublicCatalog] = field(default_factory=dict, repr=False)
    _closers: list[Callable[[], None]] = field(default_factory=list, repr=False)

    # -- Database pools, one per service role and timeout class (if_db). -----------------------------------------
    def _database(
        self, url: str, role: str | None, timeout_ms: int, name: str, *, check_on_checkout: bool = False
    ) -> Database:
        db = Database(
            url,
            role=role,
            statement_timeout_ms=timeout_ms,
            max_size=self.settings.db_pool_max_size,
            application_name=f"prw-{name}",
            check_on_checkout=check_on_checkout,
        ).open(wait=self.wait_for_database)
        self._databases.append(db)
        return db

    @cached_property
    def resolver_db(self) -> Database:
        """resolver_app, consumer timeouts (30 s)."""
        return self._database(
            self.urls.main, roles.RESOLVER_APP, self.settings.statement_timeout_consumer_ms, "resolver"
        )

    @cached_property
    def resolver_api_db(self) -> Database:
        """resolver_app, API timeouts (5 s)."""
        return self._database(
            self.urls.main, roles.RESOLVER_APP, self.settings.statement_timeout_api_ms, "resolver-api"
        )

    @cached_property
    def sweeper_db(self) -> Database:
        """resolver_sweeper: reads pending resolution jobs of every tenant and marks them enqueued, nothing else."""
        return self._database(
            self.urls.main, roles.RESOLVER_SWEEPER, self.settings.statement_timeout_consumer_ms, "sweeper"
        )

    @cached_property
    def relay_db(self) -> Database:
        return self._database(
            self.urls.main, roles.RESOLVER_RELAY, self.settings.statement_timeout_consumer_ms, "relay"
        )

    @cached_property
    def pruner_db(self) -> Database:
        """resolver_pruner: retention rows of every stream; deletes published outbox rows, nothing else."""
        return self._database(
            self.urls.main, roles.RESOLVER_PRUNER, self.settings.statement_timeout_consumer_ms, "pruner"
        )

    @cached_property
    def product_db(self) -> Database:
        return self._database(
            self.urls.main, roles.PRODUCT_APP, self.settings.statement_timeout_consumer_ms, "product"
        )

    @cached_property
    def product_api_db(self) -> Database:
        # Public reads only, each retried on a broken connection: no liveness round trip per checkout.
        return self._database(
            self.urls.main,
            roles.PRODUCT_APP,
            self.settings.statement_timeout_api_ms,
            "product-api",
            check_on_checkout=False,
        )

    @cached_property
    def control_db(self) -> Database:
        """The control plane (history epochs); issuing an epoch is an operator action, so this is the owner."""
        return self._database(self.urls.control, None, self.settings.statement_timeout_api_ms, "control")

    @cached_property
    def operator_db(self) -> Database:
        """prw_operator: reads every tenant's rows (Dagster assets and checks, reports), writes nothing."""
        return self._database(
            self.urls.main, roles.PRW_OPERATOR, self.settings.statement_timeout_consumer_ms, "operator"
        )

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
    def accepted_changes_out(self) -> Queue:
        """The relay's end of the accepted-change queue (send only)."""
        return build_queue(self.settings, ACCEPTED_CHANGES.name, db=self.relay_db)

    @cached_property
    def accepted_changes_in(self) -> Queue:
        """The product consumer's end of the accepted-change queue."""
        return build_queue(self.settings, ACCEPTED_CHANGES.name, db=self.product_db)

    @cached_property
    def dead_letters(self) -> DeadLetterOperations:
        """The dead-letter queues an operator looks at and re-drives, each through its consumer's end."""
        return DeadLetterOperations(
            {
                **{RESOLUTION_STAGE_QUEUES[s].name: q for s, q in self.resolution_stage_queues.items()},
                RESOLUTION_REPLAYS.name: self.replay_queue,
                ACCEPTED_CHANGES.name: self.accepted_changes_in,
                CATALOG_FILE_CLEANUP.name: self.files_cleanup.queue,
            },
            not_redriven={
                CATALOG_FILE_CLEANUP.name: "a dead-lettered cleanup is a failed file: retry it with POST"
                " /v1/files/{file_id}/retry (docs/operators/files.md), then discard the entry",
                ACCEPTED_CHANGES.name: "the relay alone sends accepted changes, and gap closure re-fetches a"
                " dead-lettered position from the export stream (docs/operators/gaps.md); discard the entry",
            },
        )

    # -- Policies. --------------------------------------------------------------------------------------------
    @cached_property
    def retry(self) -> RetryPolicy:
        """The one retry/backoff policy of both queue consumers."""
        return RetryPolicy(self.settings.retry_base_seconds, self.settings.retry_max_seconds)

    def streams(self, tenant_id: str, catalog_id: str) -> StreamKey:
        """The stream decisions write to now: the catalog at the control plane's current history epoch."""
        return current_stream(self.control_db, tenant_id, catalog_id)

    # -- Services. --------------------------------------------------------------------------------------------
    @cached_property
    def intake(self) -> IntakeService:
        """AW-02 for the intake API: resolver_app with API timeouts; jobs go to the resolution queue after
        commit (the sweeper re-enqueues a job whose send failed)."""
        return IntakeService(
            IntakeContext(
                db=self.resolver_api_db,
                store=self.store,
                epochs=control_plane_epochs(
                    self.control_db, cache_seconds=self.intake_settings.epoch_cache_seconds
                ),
                enqueuer=self.resolution_jobs,
                limits=self.intake_settings.limits(self.settings),
                evidence_bucket=self.settings.evidence_bucket,
                clock=self.clock,
            )
        )

    @cached_property
    def collectors(self) -> CollectorService:
        """Collector registration, leases and heartbeats (if_collector_bootstrap, if_heartbeat) for the intake
        API: resolver_app with API timeouts, the platform's clock."""
        return CollectorService(
            self.resolver_api_db,
            policy=WorkerPolicy(
                lease=timedelta(seconds=self.settings.collector_lease_seconds),
                clock_skew_tolerance=timedelta(seconds=self.settings.clock_skew_tolerance_seconds),
            ),
            clock=self.clock,
        )

    @cached_property
    def collector_auth(self) -> CollectorAuthService:
        """The token endpoint's grant and bearer authentication (if_collector_bootstrap)."""
        return CollectorAuthService.from_settings(
            self.settings, self.resolver_api_db, self.token_settings, clock=self.clock
        )

    @cached_property
    def operator_sessions(self) -> OperatorSessions:
        """if_operator_session: the admin origin's server-side sessions (resolver_app, API timeouts)."""
        oidc = self.settings.operator_oidc
        return OperatorSessions(
            self.resolver_api_db,
            idle=timedelta(seconds=oidc.session_idle_seconds),
            absolute=timedelta(seconds=oidc.session_absolute_seconds),
            clock=self.clock,
        )

    @cached_property
    def llm_provider(self) -> LlmProvider:
        """if_llm_extract / if_llm_review: an OpenAI-compatible provider when configured, else disabled."""
        llm = self.settings.llm
        if llm.provider == "disabled":
            return DisabledProvider()
        if not llm.base_url or not llm.model:
            raise ValueError("PRW_LLM__PROVIDER=openai needs PRW_LLM__BASE_URL and PRW_LLM__MODEL")
        provider = OpenAICompatibleProvider(
            llm.base_url,
            llm.model,
            llm.api_key.get_secret_value() if llm.api_key else None,
            timeout_seconds=llm.timeout_seconds,
            max_retries=llm.max_retries,
        )
        self._closers.append(provider.close)
        return provider

    @cached_property
    def assist(self) -> AssistService:
        """The ``assist`` stage: LLM proposals and advice that annotate review cases (DEC-02: never decide)."""
        llm = self.settings.llm
        return AssistService(
            self.resolver_db,
            self.operator_db,
            self.store,
            self.llm_provider,
            AssistPolicy(
                calls_per_tenant_per_day=llm.calls_per_tenant_per_day,
                tenant_budgets=dict(llm.tenant_budgets),
                advice_min_score=llm.advice_min_score,
                advice_max_score=llm.advice_max_score,
            ),
            clock=self.clock,
        )

    @cached_property
    def exports(self) -> ExportService:
        """The export stream for the product principal (GET /v1/exports/events): resolver_app, API timeouts."""
        return ExportService(self.resolver_api_db, clock=self.clock)

    @cached_property
    def retention_policy(self) -> RetentionPolicy:
        settings = self.settings
        return RetentionPolicy(
            retention_age=timedelta(seconds=settings.retention_age_seconds),
            lease_ttl=timedelta(seconds=settings.retention_lease_ttl_seconds),
            blocked_alert_after=timedelta(seconds=settings.retention_blocked_alert_seconds),
            lease_warn_before=timedelta(seconds=settings.retention_lease_warn_seconds),
        )

    @cached_property
    def retention(self) -> RetentionControl:
        """Retention control in one tenant (progress reports, leases): resolver_app, consumer timeouts."""
        return RetentionControl(self.resolver_db, self.retention_policy, clock=self.clock)

    @cached_property
    def pruner(self) -> Pruner:
        """AW-03 "Prune" across every stream, as ``resolver_pruner`` (deletes published outbox rows only)."""
        return Pruner(self.pruner_db, self.retention_policy, clock=self.clock)

    def retention_status(self, tenant_id: str | None = None) -> list[RetentionStatus]:
        """Every stream's retention, blocked retention and leases near expiry (prw_operator, read-only)."""
        return retention_status(self.operator_db, self.retention_policy, self.clock(), tenant_id=tenant_id)

    @cached_property
    def snapshot_exports(self) -> SnapshotExports:
        """Snapshot exports (if_projection_bootstrap): the API and the ``exports`` stage as resolver_app (consumer
        timeouts: a snapshot reads a whole catalog), pending exports found through ``resolver_pruner``, objects
        in the exports bucket, links signed with a key derived from the token signing key."""
        secret = derived_secret(self.token_signing_key, "prw export links v1")
        return SnapshotExports(
            self.resolver_db,
            self.pruner_db,
            self.store,
            self.settings.exports_bucket,
            ExportLinks(self.store, self.settings.exports_bucket, secret, clock=self.clock),
            current_epoch=lambda tenant, catalog: self.streams(tenant, catalog).history_epoch,
            policy=self.retention_policy,
            clock=self.clock,
        )

    def finished_exports(self, since: datetime) -> list[ExportSnapshot]:
        """Exports finished (ready or failed) since ``since``, every tenant (prw_operator, read-only)."""
        return finished_exports(self.operator_db, since)

    @cached_property
    def progress_reporter(self) -> ProgressReporter:
        """The live consumer's durable progress to resolver retention control, after its commit: over HTTP as
        the product principal when an export URL is configured, else in process (one deployment, one database)."""
        return ProgressReporter(self.operator_db, self.product_db, sink_factory=lambda: self._progress_sink())

    def _progress_sink(self) -> ProgressSink:
        source = self.export_source
        if isinstance(source, HttpExportSource):
            return source
        return _InProcessProgressSink(self.retention)

    @cached_property
    def clients(self) -> CollectorClients:
        """Provisioning and revocation of collector clients (an operator action)."""
        return CollectorClients(self.resolver_db, clock=self.clock)

    @cached_property
    def catalogs(self) -> CatalogProvisioning:
        """Tenants, catalogs, sources and their streams on both sides (an operator action)."""
        return CatalogProvisioning(self.resolver_db, self.control_db, self.product_db, clock=self.clock)

    @cached_property
    def resolution(self) -> ResolutionConsumer:
        """The extract stage's consumer (if_resolution_job) over the resolution-jobs queue."""
        return self.resolution_stage("extract")

    def resolution_stage(self, stage: str) -> ResolutionConsumer:
        """The consumer of one resolution stage (extract, normalize, identity) over that stage's queue."""
        return self._resolution_consumers[stage]

    @cached_property
    def _resolution_consumers(self) -> dict[str, ResolutionConsumer]:
        services = ResolutionServices(
            resolver_db=self.resolver_db,
            store=self.store,
            registry=self.registry,
            streams=self.streams,
            clock=self.clock,
            retry=self.retry,
            enqueuer=self.resolution_jobs,
        )
        return {stage: ResolutionConsumer(q, services) for stage, q in self.resolution_stage_queues.items()}

    @cached_property
    def decisions(self) -> DecisionService:
        """AW-01 for callers with a command and a catalog (reviewer decisions)."""
        return DecisionService(
            self.resolver_api_db,
            self.streams,
            lambda pin: self.registry.profile(pin).definitions,
            # if_receipt_get: the capture's receipt moves in_review -> accepted with the human decision.
            case_decided=lambda conn, tenant, capture, now: receipts.record_decision(
                conn, tenant, capture, review=False, now=now
            ),
            clock=self.clock,
        )

    @cached_property
    def review_queue(self) -> ReviewQueue:
        """if_review_read for the admin origin: resolver_app with API timeouts; cursors and evidence links are
        signed with a key derived from the token signing key (the same in every worker process)."""
        secret = derived_secret(self.token_signing_key, "prw review v1")
        return ReviewQueue(self.resolver_api_db, EvidenceLinks(self.store, secret, clock=self.clock), secret)

    @cached_property
    def catalog_files(self) -> CatalogFiles:
        """Seed 004: pictures of items and product classes through the managed file pipeline (the admin origin)."""
        http = httpx.Client(timeout=self.file_settings.url_timeout_seconds)
        self._closers.append(http.close)
        return CatalogFiles(
            self.resolver_api_db,
            self.store,
            self.clock,
            self.file_settings,
            http=http,
            cleanup_queue=build_queue(self.settings, CATALOG_FILE_CLEANUP.name, db=self.resolver_api_db),
            streams=self.streams,
        )

    @cached_property
    def files_sweep(self) -> FileSweep:
        """Seed 004's scheduled sweep: resolver_sweeper across tenants, sending on catalog-file-cleanup."""
        queue = build_queue(self.settings, CATALOG_FILE_CLEANUP.name, db=self.sweeper_db)
        return FileSweep(self.sweeper_db, queue, self.store, self.clock)

    @cached_property
    def files_cleanup(self) -> FileCleanup:
        """Seed 004's cleanup consumer: settles each file in its tenant (resolver_app)."""
        queue = build_queue(self.settings, CATALOG_FILE_CLEANUP.name, db=self.resolver_db)
        return FileCleanup(self.resolver_db, queue, self.store, self.clock, self.retry)

    @cached_property
    def file_settings(self) -> FileSettings:
        s = self.settings
        return FileSettings(
            bucket=s.catalog_files_bucket,
            url_allow=tuple(s.catalog_file_url_allow),
            max_bytes=s.catalog_file_max_bytes,
            cleanup_delay=timedelta(seconds=s.catalog_file_cleanup_delay_seconds),
        )

    @cached_property
    def merchants(self) -> MerchantService:
        """Operator decisions on merchants, source bindings and shipping policies (AW-01, an operator action)."""
        return MerchantService(self.resolver_db, self.streams, clock=self.clock)

    def matching_bench(self, tenant_id: str, catalog_id: str) -> MatchingBench:
        """``prw eval matching``: a catalog of its own for one benchmark run, provisioned here (safe to repeat)."""
        sources = (
            SourceSpec(CATALOG_SOURCE, "evaluation catalog"),
            SourceSpec(LISTING_SOURCE, "evaluation listings"),
        )
        self.catalogs.provision(
            CatalogSpec(tenant_id, catalog_id, f"matching evaluation {catalog_id}", sources=sources)
        )
        return MatchingBench(
            self.resolver_db,
            self.decisions,
            self.streams,
            self.registry,
            tenant_id=tenant_id,
            catalog_id=catalog_id,
        )

    @cached_property
    def relay(self) -> Relay:
        """AW-03: the outbox to the accepted-change queue."""
        return Relay(self.relay_db, self.accepted_changes_out, clock=self.clock)

    @cached_property
    def product_apply(self) -> ProductApply:
        """AW-04: the accepted-change queue into the product projection. A dead-lettered delivery asks the gap
        closer to fetch its stream at once."""
        return ProductApply(
            self.accepted_changes_in,
            self.product_db,
            retry=self.retry,
            on_dead_letter=self.gap_closer.request,
        )

    @cached_property
    def export_source(self) -> ExportSource | None:
        """The resolver's export stream as the product principal (``PRW_EXPORTS_URL`` + client credentials);
        None when not configured."""
        settings = self.settings
        if not (settings.exports_url and settings.exports_client_id and settings.exports_client_secret):
            return None
        source = HttpExportSource(
            settings.exports_url,
            settings.exports_client_id,
            settings.exports_client_secret.get_secret_value(),
        )
        self._closers.append(source.close)
        return source

    @cached_property
    def snapshot_source(self) -> SnapshotSource | None:
        """The export API for a rebuild (snapshot exports, leases, the retained tail) with the export stream's
        credentials; None when not configured."""
        source = self.export_source
        return HttpSnapshotSource(source) if isinstance(source, HttpExportSource) else None

    @cached_property
    def product_rebuild(self) -> ProductRebuild:
        """Issue 10 item 3: rebuild a catalog's projection into an isolated generation, then cut over."""
        return ProductRebuild(
            self.product_db,
            source_factory=lambda: self.snapshot_source,
            gap_source_factory=lambda: self.export_source,
            clock=self.clock,
            stale_after=timedelta(seconds=self.settings.rebuild_stale_after_seconds),
            cleanup_chunk_rows=self.settings.rebuild_cleanup_chunk_rows,
        )

    @cached_property
    def epoch_fencing(self) -> EpochFencing:
        """Issue 10 item 4: fence restored history (``prw epoch fence``, the Dagster ``epoch_fence`` job)."""
        return EpochFencing(
            self.resolver_db, self.control_db, self.product_db, self.product_rebuild, clock=self.clock
        )

    @cached_property
    def rebuild_cleanup(self) -> RebuildCleanup:
        """The ``rebuild-cleanup`` stage: finished rebuilds found through prw_operator, generations dropped as
        product_app in their tenant."""
        return RebuildCleanup(
            self.product_rebuild,
            self.operator_db,
            timedelta(seconds=self.settings.rebuild_cleanup_after_seconds),
        )

    @cached_property
    def gap_closer(self) -> GapCloser:
        """Gap closure (issue 9): due streams from the operator read model, fetched over HTTP, applied as
        product_app. The source is looked up on first use, so ``prw worker apply`` builds no HTTP client."""
        return GapCloser(
            self.product_db,
            source=None,
            streams=lambda: self.reports.stream_progress(),
            fetch_after=timedelta(seconds=self.settings.gap_fetch_after_seconds),
            head_check=timedelta(seconds=self.settings.gap_head_check_seconds),
            clock=self.clock,
            source_factory=lambda: self.export_source,
        )

    @cached_property
    def sweeper(self) -> PendingJobSweeper:
        """AW-02: re-enqueue jobs left pending after their capture committed."""
        return PendingJobSweeper(
            self.sweeper_db,
            self.resolution_jobs,
            timedelta(seconds=self.settings.sweep_pending_after_seconds),
        )

    def public_catalog(self, tenant_id: str | None = None, catalog_id: str | None = None) -> PublicCatalog:
        """The released catalog the product API serves: the deployment's binding (``PRW_PRODUCT_TENANT_ID``,
        ``PRW_PRODUCT_CATALOG_ID``) unless a caller that binds another deployment names it."""
        key = (tenant_id or self.settings.product_tenant_id, catalog_id or self.settings.product_catalog_id)
        if key not in self._catalogs:
            vocabulary = QueryVocabulary.from_registry(self.registry)
            self._catalogs[key] = PublicCatalog(
                self.product_api_db, *key, vocabulary, self.product_cursors, self.picture_links
            )
        return self._catalogs[key]

    @cached_property
    def picture_links(self) -> PictureLinks:
        """Signed links of released pictures (seed 004): the bytes are read from the managed store's catalog-files
        bucket, links signed with a key derived from the token signing key (the same in every worker process)."""
        return PictureLinks(
            self.store,
            self.settings.catalog_files_bucket,
            derived_secret(self.token_signing_key, "prw product pictures v1"),
            ttl=timedelta(seconds=self.settings.product_picture_link_ttl_seconds),
            clock=self.clock,
        )

    @cached_property
    def product_cursors(self) -> CursorCodec:
        """The public API's cursor signer: ``PRW_PRODUCT_CURSOR_SECRET``, else a key derived from the token
        signing key (the same in every worker process of a deployment)."""
        secret = self.settings.product_cursor_secret
        if secret is not None:
            return CursorCodec(secret.get_secret_value().encode())
        return CursorCodec(derived_secret(self.token_signing_key, "prw product cursor v1"))

    @cached_property
    def token_signing_key(self) -> SigningKey:
        return load_signing_key(self.settings, self.token_settings)

    @cached_property
    def public_rate_limiter(self) -> RateLimiter | None:
        """if_product_query 429 RATE_LIMITED: the per-client limiter of the product API, if one is configured."""
        rate = self.settings.product_rate_limit_per_second
        return None if rate is None else TokenBucketLimiter(rate, self.settings.product_rate_limit_burst)

    @cached_property
    def reports(self) -> OperatorReports:
        """Operator read models across tenants, through prw_operator (read-only)."""
        return OperatorReports(
            self.operator_db,
            clock=self.clock,
            fleet=FleetPolicy(
                failing_after=self.settings.collector_failing_after,
                alert_after=timedelta(seconds=self.settings.collector_alert_after_seconds),
            ),
            gap_alert_after=timedelta(seconds=self.settings.gap_alert_after_seconds),
            failed_file_alert_after=timedelta(seconds=self.settings.catalog_file_failed_alert_seconds),
        )

    @cached_property
    def improvements(self) -> ImprovementService:
        """Issue 12: operators create, approve and abandon improvements (resolver_app, API timeouts)."""
        return ImprovementService(self.resolver_api_db, self.registry, clock=self.clock)

    @cached_property
    def replay_queue(self) -> Queue:
        """if_replay_job: resolution-replays, produced by the admin API and consumed by the replay stage."""
        return build_queue(self.settings, RESOLUTION_REPLAYS.name, db=self.resolver_db)

    def _replay_service(self, db: Database) -> ReplayService:
        services = ResolutionServices(
            resolver_db=db,
            store=self.store,
            registry=self.registry,
            streams=self.streams,
            clock=self.clock,
            retry=self.retry,
        )
        return ReplayService(
            db,
            self.replay_queue,
            self.registry,
            self.streams,
            DryRunService(services),
            self.retry,
            clock=self.clock,
            enqueuer=self.resolution_jobs,
        )

    @cached_property
    def replays(self) -> ReplayService:
        """``POST /v1/improvements/{id}/replays`` and the replay reads (resolver_app, API timeouts)."""
        return self._replay_service(self.resolver_api_db)

    @cached_property
    def replay_consumer(self) -> ReplayService:
        """The ``replay`` stage: dry-run diffs of pinned re-resolutions (resolver_app, consumer timeouts)."""
        return self._replay_service(self.resolver_db)

    @cached_property
    def admin_reads(self) -> AdminReads:
        """if_admin_read for the active tenant: fleet, receipts, improvements, resolution dry runs (no writes)."""
        dry_runs = DryRunService(
            ResolutionServices(
                resolver_db=self.resolver_api_db,
                store=self.store,
                registry=self.registry,
                streams=self.streams,
                clock=self.clock,
                retry=self.retry,
            )
        )
        return AdminReads(self.reports, self.resolver_api_db, dry_runs)

    @cached_property
    def stages(self) -> StageRegistry:
        """Every background path of the platform (``prw_platform.pipeline``), run by ``prw_platform.runtime``."""
        return default_stages()

    # -- Lifecycle. -------------------------------------------------------------------------------------------
    def close(self) -> None:
        while self._closers:
            self._closers.pop()()
        while self._databases:
            self._databases.pop().close()

    def __enter__(self) -> Platform:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def bootstrap(
    settings: Settings | None = None,
    *,
    migrate: bool = False,
    clock: Clock = utc_now,
    intake_settings: IntakeSettings | None = None,
    token_settings: TokenSettings | None = None,
    wait_for_database: bool = True,
) -> Platform:
    """Locate (or start) the databases and, with ``migrate=True``, bring them to the newest schema.
    ``wait_for_database=False``: see ``Platform.wait_for_database`` (what ``prw serve`` workers use)."""
    settings = settings or Settings()
    urls = locate_databases(settings)
    migrations = tuple(migrate_all(urls.main, urls.control)) if migrate else ()
    return Platform(
        settings=settings,
        urls=urls,
        migrations=migrations,
        clock=clock,
        intake_settings=intake_settings or IntakeSettings(),
        token_settings=token_settings or TokenSettings(),
        wait_for_database=wait_for_database,
    )

"""The resolver's services for curating a catalog: managed catalog files (seed 004), improvements and their
replays, LLM assistance on review cases (DEC-02: never decide), and the admin origin's reads.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cached_property

import httpx

from prw_platform.composition.resolver import ResolverServices
from prw_platform.db.database import Database
from prw_platform.llm import DisabledProvider, LlmProvider
from prw_platform.llm.openai_compatible import OpenAICompatibleProvider
from prw_platform.operations import AdminReads
from prw_platform.queues import CATALOG_FILE_CLEANUP, build_queue
from prw_platform.resolver.assist.service import AssistPolicy, AssistService
from prw_platform.resolver.files.cleanup import FileCleanup, FileSweep
from prw_platform.resolver.files.service import CatalogFiles, FileSettings
from prw_platform.resolver.improvements.replays import ReplayService
from prw_platform.resolver.improvements.service import ImprovementService
from prw_platform.resolver.resolution.dry_run import DryRunService


class CurationServices(ResolverServices):
    # -- Catalog files (seed 004). ---------------------------------------------------------------------------
    @cached_property
    def catalog_files(self) -> CatalogFiles:
        """Pictures of items and product classes through the managed file pipeline (the admin origin)."""
        s = self.settings
        settings = FileSettings(
            bucket=s.catalog_files_bucket,
            url_allow=tuple(s.catalog_file_url_allow),
            max_bytes=s.catalog_file_max_bytes,
            cleanup_delay=timedelta(seconds=s.catalog_file_cleanup_delay_seconds),
        )
        http = httpx.Client(timeout=settings.url_timeout_seconds)
        self._opened.callback(http.close)
        return CatalogFiles(
            self.resolver_api_db,
            self.store,
            self.clock,
            settings,
            http=http,
            cleanup_queue=build_queue(self.settings, CATALOG_FILE_CLEANUP.name, db=self.resolver_api_db),
            streams=self.streams,
        )

    @cached_property
    def files_sweep(self) -> FileSweep:
        """The scheduled sweep: resolver_sweeper across tenants, sending on catalog-file-cleanup."""
        queue = build_queue(self.settings, CATALOG_FILE_CLEANUP.name, db=self.sweeper_db)
        return FileSweep(self.sweeper_db, queue, self.store, self.clock)

    @cached_property
    def files_cleanup(self) -> FileCleanup:
        """The cleanup consumer: settles each file in its tenant (resolver_app)."""
        queue = build_queue(self.settings, CATALOG_FILE_CLEANUP.name, db=self.resolver_db)
        return FileCleanup(self.resolver_db, queue, self.store, self.clock, self.retry)

    # -- Improvements and replays. ---------------------------------------------------------------------------
    @cached_property
    def improvements(self) -> ImprovementService:
        """Operators create, approve and abandon improvements (resolver_app, API timeouts)."""
        return ImprovementService(self.resolver_api_db, self.registry, clock=self.clock)

    def _replay_service(self, db: Database) -> ReplayService:
        return ReplayService(
            db,
            self.replay_queue,
            self.registry,
            self.streams,
            DryRunService(self.resolution_services(db)),
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

    # -- LLM assistance (if_llm_extract, if_llm_review). -----------------------------------------------------
    @cached_property
    def llm_provider(self) -> LlmProvider:
        """An OpenAI-compatible provider when configured, else disabled."""
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
        self._opened.callback(provider.close)
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
    def admin_reads(self) -> AdminReads:
        """if_admin_read for the active tenant: fleet, receipts, improvements, resolution dry runs (no writes)."""
        return AdminReads(
            self.reports, self.resolver_api_db, DryRunService(self.resolution_services(self.resolver_api_db))
        )

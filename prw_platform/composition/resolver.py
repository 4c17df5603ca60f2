"""The resolver side's services, each acting as its resolver role: intake and collectors, resolution's stages,
decisions and review, the relay and the pending-job sweeper (AW-01..03), and the stream's export API, snapshot
exports and retention (AW-03 Prune, if_projection_bootstrap).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cached_property

from prw_platform.auth import CollectorAuthService, CollectorClients
from prw_platform.auth.keys import derived_secret
from prw_platform.auth.operators import OperatorSessions
from prw_platform.composition.shared import Shared
from prw_platform.db.database import Database
from prw_platform.resolver.decisions import DecisionService, MerchantService
from prw_platform.resolver.exports.events import ExportService
from prw_platform.resolver.exports.snapshots import (
    ExportLinks,
    ExportSnapshot,
    SnapshotExports,
    finished_exports,
)
from prw_platform.resolver.intake import (
    IntakeContext,
    IntakeService,
    JobEnqueuer,
    PendingJobSweeper,
    control_plane_epochs,
    receipts,
)
from prw_platform.resolver.intake.workers import CollectorService, WorkerPolicy
from prw_platform.resolver.resolution import ResolutionServices
from prw_platform.resolver.resolution.batch import ResolutionConsumer
from prw_platform.resolver.resolution.generations import IdentityGenerations
from prw_platform.resolver.review import EvidenceLinks, ReviewQueue
from prw_platform.resolver.stream.relay import Relay
from prw_platform.resolver.stream.retention import (
    Pruner,
    RetentionControl,
    RetentionPolicy,
    RetentionStatus,
    retention_status,
)


class ResolverServices(Shared):
    # -- Collectors and intake (AW-02). ----------------------------------------------------------------------
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
    def clients(self) -> CollectorClients:
        """Provisioning and revocation of collector clients (an operator action)."""
        return CollectorClients(self.resolver_db, clock=self.clock)

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
    def sweeper(self) -> PendingJobSweeper:
        """AW-02: re-enqueue jobs left pending after their capture committed."""
        return PendingJobSweeper(
            self.sweeper_db,
            self.resolution_jobs,
            timedelta(seconds=self.settings.sweep_pending_after_seconds),
        )

    # -- Resolution (if_resolution_job). ---------------------------------------------------------------------
    def resolution_services(self, db: Database, enqueuer: JobEnqueuer | None = None) -> ResolutionServices:
        """Resolution over ``db``; without ``enqueuer`` (dry runs, replays) a stage hands no job on."""
        return ResolutionServices(
            db, self.store, self.registry, self.streams, clock=self.clock, retry=self.retry, enqueuer=enqueuer
        )

    def resolution_stage(self, stage: str) -> ResolutionConsumer:
        """The consumer of one resolution stage (extract, normalize, identity) over that stage's queue."""
        return self._resolution_consumers[stage]

    @cached_property
    def _resolution_consumers(self) -> dict[str, ResolutionConsumer]:
        services = self.resolution_services(self.resolver_db, self.resolution_jobs)
        return {stage: ResolutionConsumer(q, services) for stage, q in self.resolution_stage_queues.items()}

    # -- Decisions and review (AW-01), the relay (AW-03). ----------------------------------------------------
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
    def identity_generations(self) -> IdentityGenerations:
        """Calibrated identity generations per catalog and the live precision of scoring rules (an operator
        action: ``prw identity``)."""
        return IdentityGenerations(self.resolver_db, self.registry, clock=self.clock)

    @cached_property
    def merchants(self) -> MerchantService:
        """Operator decisions on merchants, source bindings and shipping policies (AW-01, an operator action)."""
        return MerchantService(self.resolver_db, self.streams, clock=self.clock)

    @cached_property
    def review_queue(self) -> ReviewQueue:
        """if_review_read for the admin origin: resolver_app with API timeouts; cursors and evidence links are
        signed with a key derived from the token signing key (the same in every worker process)."""
        secret = derived_secret(self.token_signing_key, "prw review v1")
        return ReviewQueue(self.resolver_api_db, EvidenceLinks(self.store, secret, clock=self.clock), secret)

    @cached_property
    def relay(self) -> Relay:
        """AW-03: the outbox to the accepted-change queue."""
        return Relay(self.relay_db, self.accepted_changes_out, clock=self.clock)

    # -- The stream's exports and retention (AW-03 Prune, if_projection_bootstrap). ---------------------------
    @cached_property
    def exports(self) -> ExportService:
        """The export stream for the product principal (GET /v1/exports/events): resolver_app, API timeouts."""
        return ExportService(self.resolver_api_db, clock=self.clock)

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

"""Collector instances: registration, leases and heartbeats (if_collector_bootstrap, if_heartbeat). This module
owns ``resolver.collector_instance`` and ``resolver.collector_heartbeat`` (migration 0008).

Registration records capabilities and a lease, grants nothing and starts no machine: it upserts
one row keyed by the stable instance and returns its lease (90 s, DEC-05). A heartbeat renews the lease and
carries a run report; a missed heartbeat shows as an expired lease, not as lost data: an instance whose lease
has lapsed is ``silent``, one whose consecutive failed runs are above the configured threshold ``failing``
(``lease_state``, computed from the lease and the platform clock, no background job).

Every check compares the request with the token's binding (``CollectorPrincipal``), never trusts it:

* if_collector_bootstrap: scope ``workers:register`` (403 MISSING_SCOPE); ``instance_id`` = token sub (403
  INSTANCE_SCOPE_DENIED); ``worker_id`` = provisioned worker (403 ATTRIBUTION_DENIED); ``targets`` within the
  source grants (403 SOURCE_SCOPE_DENIED); an instance no operator provisioned (404 NOT_FOUND); the database
  unreachable (503 UNAVAILABLE, retry: the upsert is idempotent).
* if_heartbeat: scope ``workers:heartbeat``; the path id must be the token's instance (403
  TENANT_SCOPE_DENIED); an instance that never registered (404 UNKNOWN_INSTANCE: register first).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TypeVar

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.auth import clients
from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import WORKERS_HEARTBEAT, WORKERS_REGISTER
from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Connection, Database
from prw_platform.db.errors import AmbiguousCommit, DatabaseUnavailable
from prw_platform.inputs import InvalidInput, check_not_in_future
from prw_platform.resolver.intake.errors import (
    AttributionDenied,
    InstanceScopeDenied,
    IntakeUnavailable,
    NotFound,
    SourceScopeDenied,
    TenantScopeDenied,
    UnknownInstance,
    ValidationFailed,
)
from prw_platform.resolver.intake.requests import Heartbeat, Registration, canonical_sha256

T = TypeVar("T")

#: if_heartbeat Delivery: "Lease 90 s (DEC-05, OPEN thresholds)".
LEASE_SECONDS = 90


class LeaseState(StrEnum):
    ACTIVE = "active"
    #: The lease lapsed: no heartbeat for longer than the lease.
    SILENT = "silent"
    #: Heartbeats arrive, but more consecutive runs failed than the configured threshold.
    FAILING = "failing"


def lease_state(
    lease_expires_at: datetime, consecutive_failures: int, now: datetime, failing_after: int
) -> LeaseState:
    """Silent first: an instance that stopped reporting says nothing about its runs any more."""
    if lease_expires_at <= now:
        return LeaseState.SILENT
    if consecutive_failures > failing_after:
        return LeaseState.FAILING
    return LeaseState.ACTIVE


@dataclass(frozen=True, slots=True)
class WorkerPolicy:
    lease: timedelta = timedelta(seconds=LEASE_SECONDS)
    #: How far after the server's clock a heartbeat's ``at`` may be (collectors' clock skew); later is 422.
    clock_skew_tolerance: timedelta = timedelta(seconds=300)


@dataclass(frozen=True, slots=True)
class Lease:
    """A registered instance and its lease, as ``POST /v1/workers/register`` returns it."""

    tenant_id: str
    catalog_id: str
    worker_id: str
    instance_id: str
    targets: list[str]
    registered_at: datetime
    lease_expires_at: datetime


@dataclass(frozen=True, slots=True)
class Registered:
    lease: Lease
    #: True on the first registration (201); False on a re-register (200).
    created: bool
    lease_seconds: int


@dataclass(frozen=True, slots=True)
class HeartbeatAck:
    """if_heartbeat's answer: the instance's counters and lease after the heartbeat."""

    instance_id: str
    consecutive_failures: int
    last_success_at: datetime | None
    lease_expires_at: datetime
    #: False for a duplicate (same instance and ``at``): "A duplicate is recorded once".
    recorded: bool


@dataclass(frozen=True, slots=True)
class _Instance:
    tenant_id: str
    catalog_id: str
    worker_id: str
    instance_id: str
    targets: list[str]
    registered_at: datetime
    lease_expires_at: datetime
    registration_sha256: str
    consecutive_failures: int
    last_success_at: datetime | None

    def lease(self) -> Lease:
        return Lease(
            self.tenant_id,
            self.catalog_id,
            self.worker_id,
            self.instance_id,
            self.targets,
            self.registered_at,
            self.lease_expires_at,
        )

    def ack(self, *, recorded: bool) -> HeartbeatAck:
        return HeartbeatAck(
            self.instance_id, self.consecutive_failures, self.last_success_at, self.lease_expires_at, recorded
        )


class CollectorService:
    """Registration and heartbeats for the intake edge (``Platform.collectors``)."""

    def __init__(self, db: Database, *, policy: WorkerPolicy | None = None, clock: Clock = utc_now) -> None:
        self._db = db
        self.policy = policy or WorkerPolicy()
        self._clock = clock

    @property
    def lease_seconds(self) -> int:
        return int(self.policy.lease.total_seconds())

    def register(self, principal: CollectorPrincipal, registration: Registration) -> Registered:
        principal.require_scope(WORKERS_REGISTER)
        if registration.instance_id != principal.instance_id:
            raise InstanceScopeDenied("instance_id is not the token's stable instance")
        if registration.worker_id != principal.worker_id:
            raise AttributionDenied("worker_id is not the token's provisioned worker")
        outside = sorted(set(registration.targets) - principal.sources)
        if outside:
            raise SourceScopeDenied(f"targets outside the provisioned grants: {', '.join(outside)}")
        body = registration.canonical()
        sha256 = canonical_sha256(body)

        def work(conn: Connection) -> Registered:
            if not clients.instance_is_provisioned(conn, principal.tenant_id, principal.instance_id):
                raise NotFound(f"unknown server-side instance {principal.instance_id}")
            now = self._clock()
            created = _insert_instance(
                conn, principal, registration, body, sha256, now, now + self.policy.lease
            )
            if created is not None:
                return Registered(created.lease(), True, self.lease_seconds)
            existing = _locked_instance(conn, principal.tenant_id, principal.instance_id)
            assert existing is not None
            if existing.registration_sha256 == sha256 and existing.lease_expires_at > now:
                # "Re-registering with the same body returns 200 with the existing lease."
                return Registered(existing.lease(), False, self.lease_seconds)
            # A changed declaration (an upgrade, other targets) or a lapsed lease: the upsert records the body and
            # starts a new lease.
            updated = _update_instance(
                conn, principal, registration, body, sha256, now, now + self.policy.lease
            )
            return Registered(updated.lease(), False, self.lease_seconds)

        return self._run(work, principal.tenant_id)

    def heartbeat(
        self, principal: CollectorPrincipal, instance_id: str, heartbeat: Heartbeat
    ) -> HeartbeatAck:
        principal.require_scope(WORKERS_HEARTBEAT)
        if instance_id != principal.instance_id:
            raise TenantScopeDenied("the path's instance is not the token's bound instance")
        if heartbeat.instance_id is not None and heartbeat.instance_id != principal.instance_id:
            raise TenantScopeDenied("instance_id is not the token's bound instance")
        try:
            check_not_in_future(heartbeat.at, self._clock(), self.policy.clock_skew_tolerance)
        except InvalidInput as error:
            raise ValidationFailed(f"at: {error}") from error

        def work(conn: Connection) -> HeartbeatAck:
            now = self._clock()
            instance = _locked_instance(conn, principal.tenant_id, instance_id)
            if instance is None:
                raise UnknownInstance(f"instance {instance_id} is not registered: register first")
            run = heartbeat.run
            failures = instance.consecutive_failures
            last_success = instance.last_success_at
            if run is not None and run.outcome == "failed":
                failures += 1
            elif run is not None:
                failures = 0
                succeeded_at = run.finished_at or heartbeat.at
                last_success = max(last_success, succeeded_at) if last_success else succeeded_at
            inserted = conn.execute(
                """INSERT INTO resolver.collector_heartbeat (tenant_id, instance_id, at, received_at,
                       run_started_at, run_finished_at, run_outcome, error_code, error_retryable, pages_fetched,
                       captures_submitted, failures, consecutive_failures)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (tenant_id, instance_id, at) DO NOTHING""",
                (
                    principal.tenant_id,
                    instance_id,
                    heartbeat.at,
                    now,
                    run.started_at if run else None,
                    run.finished_at if run else None,
                    run.outcome if run else None,
                    run.error.code if run and run.error else None,
                    run.error.retryable if run and run.error else None,
                    run.pages_fetched if run else None,
                    run.captures_submitted if run else None,
                    Jsonb(dict(run.failures) if run else {}),
                    failures,
                ),
            ).rowcount
            if inserted == 0:
                # if_heartbeat: "Keyed by (instance_id, at). A duplicate is recorded once."
                return instance.ack(recorded=False)
            with conn.cursor(row_factory=class_row(_Instance)) as cur:
                renewed = cur.execute(
                    """UPDATE resolver.collector_instance
                        SET lease_expires_at = %s, last_heartbeat_at = %s, consecutive_failures = %s,
                            last_success_at = %s
                        WHERE tenant_id = %s AND instance_id = %s
                        RETURNING tenant_id, catalog_id, worker_id, instance_id, targets, registered_at, lease_expires_at,
                           registration_sha256, consecutive_failures, last_success_at""",
                    (now + self.policy.lease, now, failures, last_success, principal.tenant_id, instance_id),
                ).fetchone()
            assert renewed is not None
            return renewed.ack(recorded=True)

        return self._run(work, principal.tenant_id)

    def _run(self, work: Callable[[Connection], T], tenant_id: str) -> T:
        try:
            return self._db.run(work, tenant_id=tenant_id)
        except (DatabaseUnavailable, AmbiguousCommit) as error:
            # if_collector_bootstrap: 503 UNAVAILABLE, retry. Both calls are idempotent (upsert; (instance, at)).
            raise IntakeUnavailable(f"the resolver database is unavailable; retry later ({error})") from error


def _insert_instance(
    conn: Connection,
    principal: CollectorPrincipal,
    registration: Registration,
    body: dict[str, object],
    sha256: str,
    now: datetime,
    lease_expires_at: datetime,
) -> _Instance | None:
    with conn.cursor(row_factory=class_row(_Instance)) as cur:
        return cur.execute(
            """INSERT INTO resolver.collector_instance (tenant_id, instance_id, catalog_id, worker_id, version,
                    runtime, runtime_kind, execution_region, egress, targets, capabilities, registration_sha256,
                    registered_at, updated_at, lease_expires_at)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                ON CONFLICT (tenant_id, instance_id) DO NOTHING
                RETURNING tenant_id, catalog_id, worker_id, instance_id, targets, registered_at, lease_expires_at,
                           registration_sha256, consecutive_failures, last_success_at""",
            (
                principal.tenant_id,
                principal.instance_id,
                *_declaration(principal, registration, body, sha256),
                now,
                now,
                lease_expires_at,
            ),
        ).fetchone()


def _update_instance(
    conn: Connection,
    principal: CollectorPrincipal,
    registration: Registration,
    body: dict[str, object],
    sha256: str,
    now: datetime,
    lease_expires_at: datetime,
) -> _Instance:
    with conn.cursor(row_factory=class_row(_Instance)) as cur:
        row = cur.execute(
            """UPDATE resolver.collector_instance
                SET catalog_id = %s, worker_id = %s, version = %s, runtime = %s, runtime_kind = %s,
                    execution_region = %s, egress = %s, targets = %s, capabilities = %s, registration_sha256 = %s,
                    updated_at = %s, lease_expires_at = %s
                WHERE tenant_id = %s AND instance_id = %s
                RETURNING tenant_id, catalog_id, worker_id, instance_id, targets, registered_at, lease_expires_at,
                           registration_sha256, consecutive_failures, last_success_at""",
            (
                *_declaration(principal, registration, body, sha256),
                now,
                lease_expires_at,
                principal.tenant_id,
                principal.instance_id,
            ),
        ).fetchone()
    assert row is not None
    return row


def _declaration(
    principal: CollectorPrincipal, registration: Registration, body: dict[str, object], sha256: str
) -> tuple[object, ...]:
    return (
        principal.catalog_id,
        principal.worker_id,
        registration.version,
        registration.runtime,
        registration.runtime_kind,
        Jsonb(body["execution_region"]) if "execution_region" in body else None,
        Jsonb(body["egress"]) if "egress" in body else None,
        body["targets"],
        body["capabilities"],
        sha256,
    )


def _locked_instance(conn: Connection, tenant_id: str, instance_id: str) -> _Instance | None:
    with conn.cursor(row_factory=class_row(_Instance)) as cur:
        return cur.execute(
            """SELECT tenant_id, catalog_id, worker_id, instance_id, targets, registered_at, lease_expires_at,
                           registration_sha256, consecutive_failures, last_success_at
                FROM resolver.collector_instance
                WHERE tenant_id = %s AND instance_id = %s FOR UPDATE""",
            (tenant_id, instance_id),
        ).fetchone()

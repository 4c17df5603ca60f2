"""Retention control and the pruner (seed 000 AW-03 "Prune", seed 003 if_accepted_change
Delivery) on real parts: decisions committed by the decision service (AW-01), relayed (AW-03), applied by the
product consumer (AW-04), its progress reported by the ``progress`` stage, pruned by the ``prune`` stage, on a
clock the test moves."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.contracts import StreamKey
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.intake.errors import ValidationFailed
from prw_platform.resolver.stream.retention import LIVE_CONSUMER, ExportExpired
from prw_platform.runtime import Budget, drain, run_stage
from tests.e2e.product.decisions import create_and_map

TENANT, CATALOG, SOURCE = "ten_keep", "cat_keep", "src_keep_web"
AGE = timedelta(hours=1)


@dataclass
class MovableClock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def advance(self, by: timedelta) -> None:
        self.now += by


@dataclass
class Deployment:
    platform: Platform
    clock: MovableClock
    stream: StreamKey


@pytest.fixture
def deployment(deployment_settings: Settings) -> Iterator[Deployment]:
    clock = MovableClock(datetime.now(UTC))
    settings = deployment_settings.model_copy(
        update={"retention_age_seconds": int(AGE.total_seconds()), "retention_lease_ttl_seconds": 600}
    )
    with bootstrap(settings, clock=clock) as platform:
        provisioned = platform.catalogs.provision(
            CatalogSpec(TENANT, CATALOG, "Keep", "manual", (SourceSpec(SOURCE, "Keep web"),))
        )
        yield Deployment(platform, clock, provisioned.stream)


def decide(deployment: Deployment, items: int, start: int = 1) -> None:
    for n in range(start, start + items):  # 3 events each: item, listing, mapping
        deployment.platform.decisions.decide(create_and_map(CATALOG, SOURCE, "keep", n), TENANT, CATALOG)


def outbox_positions(platform: Platform, stream: StreamKey) -> list[int]:
    with psycopg.connect(platform.urls.main) as conn:
        rows = conn.execute(
            """SELECT position FROM resolver.outbox WHERE tenant_id = %s AND catalog_id = %s
               AND history_epoch = %s ORDER BY position""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch),
        ).fetchall()
    return [row[0] for row in rows]


def status(deployment: Deployment):  # type: ignore[no-untyped-def]
    (found,) = [s for s in deployment.platform.retention_status() if s.catalog_id == CATALOG]
    return found


def test_a_new_stream_registers_the_live_consumer_and_nothing_is_pruned_before_it_reports(
    deployment: Deployment,
) -> None:
    platform = deployment.platform
    decide(deployment, 2)
    run_stage(platform, "relay", Budget(batches=5))
    deployment.clock.advance(AGE * 2)

    report = run_stage(platform, "prune")

    assert report.taken == 0
    assert outbox_positions(platform, deployment.stream) == [1, 2, 3, 4, 5, 6]
    blocked = status(deployment)
    assert [(c.consumer, c.acknowledged_position, c.lag) for c in blocked.consumers] == [
        (LIVE_CONSUMER, 0, 6)
    ]
    # Published, aged events held back by the lagging consumer: reported, never silently dropped.
    assert blocked.blocked_by == f"consumer {LIVE_CONSUMER} at 0"
    assert blocked.blocked_since == deployment.clock.now
    assert not blocked.blocked_alert


def test_the_pruner_removes_the_published_aged_prefix_below_the_reported_progress_only(
    deployment: Deployment,
) -> None:
    platform = deployment.platform
    decide(deployment, 3)  # positions 1..9
    run_stage(platform, "relay", Budget(batches=5))
    deployment.clock.advance(AGE * 2)
    decide(deployment, 1, start=4)  # positions 10..12, committed now: young
    run_stage(platform, "relay", Budget(batches=5))
    decide(deployment, 1, start=5)  # 13..15 unpublished

    # The product consumer applies everything and reports its durable progress after its commit.
    drain(platform, stages=("apply", "progress"))
    assert status(deployment).consumers[0].acknowledged_position == 12
    # What was acknowledged is remembered durably: another process (a Dagster run) has nothing to report.
    with bootstrap(platform.settings) as another:
        assert not another.progress_reporter.has_work()

    pruned = run_stage(platform, "prune")

    # Below min(acknowledged 12) and published more than AGE ago: 1..9; 10..12 are too young, 13.. unpublished.
    assert pruned.taken == 9
    assert outbox_positions(platform, deployment.stream) == list(range(10, 16))
    after = status(deployment)
    assert (after.pruned_through, after.pruned_rows, after.blocked_by) == (9, 9, None)

    deployment.clock.advance(AGE * 2)
    run_stage(platform, "relay", Budget(batches=5))
    drain(platform, stages=("apply", "progress"))
    deployment.clock.advance(AGE * 2)
    assert run_stage(platform, "prune").taken == 5
    # The event AT the acknowledged position 15 is kept (the bound is exclusive).
    assert outbox_positions(platform, deployment.stream) == [15]
    assert status(deployment).pruned_through == 14


def test_a_lower_progress_report_is_ignored_and_logged(
    deployment: Deployment, caplog: pytest.LogCaptureFixture
) -> None:
    decide(deployment, 2)
    retention = deployment.platform.retention
    assert retention.report_progress(deployment.stream, LIVE_CONSUMER, 5).advanced
    with caplog.at_level(logging.WARNING, logger="prw_platform.resolver.stream.retention"):
        ack = retention.report_progress(deployment.stream, LIVE_CONSUMER, 3)
    assert (ack.acknowledged_position, ack.advanced) == (5, False)
    assert "below its acknowledged 5; ignored" in caplog.text
    # Nobody can have processed what was never committed.
    with pytest.raises(ValidationFailed):
        retention.report_progress(deployment.stream, LIVE_CONSUMER, 7)
    assert status(deployment).consumers[0].acknowledged_position == 5


def test_an_unexpired_lease_pins_retention_and_an_expired_one_neither_pins_nor_renews(
    deployment: Deployment,
) -> None:
    platform = deployment.platform
    decide(deployment, 4)  # 1..12
    run_stage(platform, "relay", Budget(batches=5))
    deployment.clock.advance(AGE * 2)
    platform.retention.report_progress(deployment.stream, LIVE_CONSUMER, 4)
    assert run_stage(platform, "prune").taken == 3  # 1..3
    lease = platform.retention.create_lease(deployment.stream, "rebuild")
    assert lease.pinned_at == 3  # pinned after the pruned-through cursor P
    platform.retention.report_progress(deployment.stream, LIVE_CONSUMER, 12)

    assert run_stage(platform, "prune").taken == 0
    held = status(deployment)
    assert held.blocked_by == f"lease {lease.lease_id} at 3"
    assert [lease_status.lease_id for lease_status in held.leases] == [lease.lease_id]

    # Renewed, it keeps pinning; near its expiry the report says so.
    deployment.clock.advance(timedelta(seconds=500))
    renewed = platform.retention.renew_lease(TENANT, lease.lease_id)
    assert renewed.expires_at == deployment.clock.now + timedelta(seconds=600)
    deployment.clock.advance(timedelta(seconds=400))
    assert status(deployment).leases[0].near_expiry
    assert run_stage(platform, "prune").taken == 0

    # Expired: it no longer pins, and cannot be revived.
    deployment.clock.advance(timedelta(seconds=300))
    assert status(deployment).leases == ()
    assert run_stage(platform, "prune").taken == 8  # 4..11, the event at 12 stays
    with pytest.raises(ExportExpired):
        platform.retention.renew_lease(TENANT, lease.lease_id)


def test_blocked_retention_raises_the_alert_after_the_configured_time(deployment: Deployment) -> None:
    platform = deployment.platform
    decide(deployment, 1)
    run_stage(platform, "relay", Budget(batches=5))
    deployment.clock.advance(AGE * 2)
    run_stage(platform, "prune")
    first = status(deployment).blocked_since
    deployment.clock.advance(timedelta(seconds=platform.settings.retention_blocked_alert_seconds + 1))
    run_stage(platform, "prune")
    blocked = status(deployment)
    assert blocked.blocked_since == first  # the first time it was seen blocked
    assert blocked.blocked_alert
    # Once the consumer reports, retention moves and the block clears.
    platform.retention.report_progress(deployment.stream, LIVE_CONSUMER, 3)
    assert run_stage(platform, "prune").taken == 2
    assert status(deployment).blocked_since is None


def test_a_retired_consumer_no_longer_holds_retention_and_cannot_report(deployment: Deployment) -> None:
    platform = deployment.platform
    decide(deployment, 1)
    run_stage(platform, "relay", Budget(batches=5))
    deployment.clock.advance(AGE * 2)
    platform.retention.report_progress(deployment.stream, "shadow_audit", 1)  # registers a second consumer
    platform.retention.report_progress(deployment.stream, LIVE_CONSUMER, 3)
    assert run_stage(platform, "prune").taken == 0  # shadow_audit at 1 holds everything
    assert status(deployment).blocked_by == "consumer shadow_audit at 1"
    assert platform.retention.retire_consumer(deployment.stream, "shadow_audit")
    assert run_stage(platform, "prune").taken == 2
    with pytest.raises(ValidationFailed):
        platform.retention.report_progress(deployment.stream, "shadow_audit", 3)


def test_delivery_and_ack_alone_are_not_progress(deployment: Deployment) -> None:
    """A lost delivery at position 1: the consumer receives, applies or parks and acks 2..6, yet its durable
    contiguous position stays 0, and so does what retention control acknowledges: nothing is pruned."""
    platform = deployment.platform
    decide(deployment, 2)
    run_stage(platform, "relay", Budget(batches=5))
    with psycopg.connect(platform.urls.main, autocommit=True) as conn:
        lost = conn.execute(
            "DELETE FROM queue.message WHERE queue_name = 'accepted-changes' AND (body->>'sequence')::int = 1"
        ).rowcount
    assert lost == 1
    applied = drain(platform, stages=("apply", "progress"))
    assert applied.taken["apply"] == 5
    assert applied.taken["progress"] == 0
    assert status(deployment).consumers[0].acknowledged_position == 0
    deployment.clock.advance(AGE * 2)
    assert run_stage(platform, "prune").taken == 0
    assert outbox_positions(platform, deployment.stream) == [1, 2, 3, 4, 5, 6]


def test_the_pruner_role_deletes_published_outbox_rows_only(deployment: Deployment) -> None:
    platform = deployment.platform
    decide(deployment, 1)  # 1..3, unpublished
    with platform.pruner_db.transaction() as conn:
        assert conn.execute("DELETE FROM resolver.outbox").rowcount == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege), platform.pruner_db.transaction() as conn:
        conn.execute("UPDATE resolver.outbox SET published_at = now()")
    with pytest.raises(psycopg.errors.InsufficientPrivilege), platform.pruner_db.transaction() as conn:
        conn.execute("UPDATE resolver.retention_consumer SET acknowledged_position = 3")
    assert outbox_positions(platform, deployment.stream) == [1, 2, 3]

"""The background stages as plain functions over a ``Platform``: what Dagster ops and ``prw worker`` both call.

resolution (if_resolution_job) -> decisions + outbox (AW-01) -> relay (AW-03) -> product apply (AW-04). Each
function does one bounded batch and returns its report; a loop (the worker) or a sensor-launched run (Dagster)
decides when to call it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from prw_platform.bootstrap import Platform
from prw_platform.product.consumer.driver import BatchReport as ApplyReport
from prw_platform.product.consumer.driver import process_accepted_changes
from prw_platform.queues import MAX_MESSAGES_PER_RECEIVE
from prw_platform.resolver.intake.jobs import QueueJobEnqueuer, SweepReport, sweep_pending_jobs
from prw_platform.resolver.relay import RelayResult, publish_to_queue, relay_batch
from prw_platform.resolver.resolution import ResolutionServices
from prw_platform.resolver.resolution.batch import BatchReport as ResolutionReport
from prw_platform.resolver.resolution.batch import process_resolution_jobs

STAGES = ("resolution", "relay", "apply")


def resolution_services(platform: Platform) -> ResolutionServices:
    return ResolutionServices.build(
        resolver_db=platform.resolver_db,
        control_db=platform.control_db,
        store=platform.store,
        registry=platform.registry,
    )


def resolve_batch(
    platform: Platform,
    services: ResolutionServices | None = None,
    max_messages: int = MAX_MESSAGES_PER_RECEIVE,
) -> ResolutionReport:
    """Take up to ``max_messages`` resolution jobs: extract, normalize, identity, decision or review case."""
    return process_resolution_jobs(
        platform.resolution_queue, services or resolution_services(platform), max_messages=max_messages
    )


def relay_outbox(platform: Platform, batch_size: int = 100) -> RelayResult:
    """Publish up to ``batch_size`` committed outbox rows to the accepted-change queue, then mark them."""
    return relay_batch(platform.relay_db, publish_to_queue(platform.accepted_changes_out), batch_size)


def apply_changes(platform: Platform, max_messages: int = MAX_MESSAGES_PER_RECEIVE) -> ApplyReport:
    """Apply up to ``max_messages`` accepted changes to the product projection; ack after each commit."""
    return process_accepted_changes(platform.accepted_changes_in, platform.product_db, max_messages)


def sweep_jobs(platform: Platform, older_than: timedelta = timedelta(seconds=60)) -> SweepReport:
    """AW-02: re-enqueue resolution jobs left pending (the send after commit failed or never ran)."""
    return sweep_pending_jobs(platform.sweeper_db, QueueJobEnqueuer(platform.resolution_queue), older_than)


@dataclass(frozen=True, slots=True)
class DrainReport:
    rounds: int
    resolved: int
    relayed: int
    applied: int

    @property
    def total(self) -> int:
        return self.resolved + self.relayed + self.applied


def drain(platform: Platform, *, max_rounds: int = 1000) -> DrainReport:
    """Run every stage until a whole round does nothing: the stream is drained (used by the demo and tests
    without Dagster; the Dagster path does the same through sensors)."""
    services = resolution_services(platform)
    resolved = relayed = applied = rounds = 0
    while rounds < max_rounds:
        rounds += 1
        r = resolve_batch(platform, services).received
        p = relay_outbox(platform).published
        a = apply_changes(platform).received
        resolved, relayed, applied = resolved + r, relayed + p, applied + a
        if r == p == a == 0:
            break
    return DrainReport(rounds, resolved, relayed, applied)

"""The collector fleet as operators see it (``prw workers``, the Dagster asset ``collector_fleet`` and its check):
each registered instance with its lease state at the platform clock's now, and whether it needs an operator.

"A missed heartbeat is visible as lease expiry, not data loss" (if_heartbeat): an instance is ``silent`` from the
moment its lease lapsed, ``failing`` from the heartbeat whose consecutive failed runs went above the threshold.
An instance that still has grants (an unrevoked client) and has been silent or failing for longer than
``alert_after`` is *overdue*: the asset check fails on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from prw_platform.resolver.intake.workers import LeaseState, lease_state
from prw_platform.resolver.reports import CollectorRow


@dataclass(frozen=True, slots=True)
class FleetPolicy:
    #: Consecutive failed runs above this mark an instance ``failing`` (``PRW_COLLECTOR_FAILING_AFTER``).
    failing_after: int = 3
    #: Silent or failing longer than this, with grants: the check fails (``PRW_COLLECTOR_ALERT_AFTER_SECONDS``).
    alert_after: timedelta = timedelta(minutes=15)


@dataclass(frozen=True, slots=True)
class CollectorStatus:
    instance: CollectorRow
    state: LeaseState
    #: Since when the instance is silent (its lease expiry) or failing; None while active.
    state_since: datetime | None
    overdue: bool


def fleet_status(rows: list[CollectorRow], now: datetime, policy: FleetPolicy) -> list[CollectorStatus]:
    statuses = []
    for row in rows:
        state = lease_state(row.lease_expires_at, row.consecutive_failures, now, policy.failing_after)
        since = {
            LeaseState.ACTIVE: None,
            LeaseState.SILENT: row.lease_expires_at,
            LeaseState.FAILING: row.failing_since or row.last_heartbeat_at,
        }[state]
        overdue = row.has_grants and since is not None and now - since > policy.alert_after
        statuses.append(CollectorStatus(row, state, since, overdue))
    return statuses

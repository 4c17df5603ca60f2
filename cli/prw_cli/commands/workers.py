"""``prw workers``: the collector fleet an operator watches (if_collector_bootstrap, if_heartbeat).

One row per registered instance, read through the operator reports (``Platform.reports``, the read-only
``prw_operator`` role): the lease state at the platform clock's now (active, silent: the lease lapsed, failing:
more consecutive failed runs than ``PRW_COLLECTOR_FAILING_AFTER``), the last heartbeat and the last run report.
The platform is imported when the command runs, not for ``--help``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from prw_platform.reports import CollectorStatus

_STATE_STYLE = {"active": "green", "silent": "yellow", "failing": "red"}


def workers(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """One row per registered collector instance: worker, sources, lease state (active/silent/failing), last
    heartbeat, consecutive failures and last run report.

    An instance is silent once its 90 s lease lapsed without a heartbeat, failing while more consecutive runs
    failed than PRW_COLLECTOR_FAILING_AFTER; "overdue" marks one with grants that has been so for longer than
    PRW_COLLECTOR_ALERT_AFTER_SECONDS (the collector_fleet asset check fails on it).
    """
    from rich.console import Console
    from rich.table import Table

    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap

    with bootstrap(load_settings()) as platform:
        fleet = platform.reports.collector_fleet()
    if as_json:
        typer.echo(json.dumps({"workers": [_document(status) for status in fleet]}, indent=2))
        return
    table = Table(title=f"collector instances ({len(fleet)})")
    for column in (
        "tenant",
        "instance",
        "worker",
        "sources",
        "lease",
        "last heartbeat",
        "failures",
        "last run",
    ):
        table.add_column(column, overflow="fold")
    for status in fleet:
        row = status.instance
        state = status.state.value + (" (overdue)" if status.overdue else "")
        table.add_row(
            row.tenant_id,
            row.instance_id,
            row.worker_id,
            " ".join(row.targets),
            f"[{_STATE_STYLE[status.state.value]}]{state}[/]",
            _when(row.last_heartbeat_at),
            str(row.consecutive_failures),
            _last_run(status),
        )
    Console(width=200).print(table)


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _last_run(status: CollectorStatus) -> str:
    row = status.instance
    if row.last_run_outcome is None:
        return "-"
    failures = " ".join(f"{kind}={count}" for kind, count in sorted((row.last_run_failures or {}).items()))
    parts = [
        row.last_run_outcome,
        f"pages={row.last_run_pages_fetched}",
        f"captures={row.last_run_captures_submitted}",
        failures,
        row.last_run_error_code or "",
    ]
    return " ".join(part for part in parts if part)


def _document(status: CollectorStatus) -> dict[str, Any]:
    row = status.instance
    return {
        "tenant_id": row.tenant_id,
        "catalog_id": row.catalog_id,
        "instance_id": row.instance_id,
        "worker_id": row.worker_id,
        "sources": list(row.targets),
        "capabilities": list(row.capabilities),
        "version": row.version,
        "runtime": row.runtime,
        "state": status.state.value,
        "state_since": _iso(status.state_since),
        "overdue": status.overdue,
        "has_grants": row.has_grants,
        "registered_at": _iso(row.registered_at),
        "lease_expires_at": _iso(row.lease_expires_at),
        "last_heartbeat_at": _iso(row.last_heartbeat_at),
        "consecutive_failures": row.consecutive_failures,
        "last_success_at": _iso(row.last_success_at),
        "last_run": None
        if row.last_run_outcome is None
        else {
            "at": _iso(row.last_run_at),
            "outcome": row.last_run_outcome,
            "pages_fetched": row.last_run_pages_fetched,
            "captures_submitted": row.last_run_captures_submitted,
            "failures": dict(row.last_run_failures or {}),
            "error_code": row.last_run_error_code,
        },
    }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")

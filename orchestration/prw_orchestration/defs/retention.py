"""Retention and snapshot exports in Dagster (seed 000 AW-03 "Prune"; seed 003 if_projection_bootstrap).

* ``prune_job`` (schedule ``prune_schedule``, the ``prune`` stage's cron): one op running the core runtime's
  ``prune`` stage, then recording a materialization of the ``retention`` asset with the pruned-through position P
  per stream, the rows removed and the consumer or lease that blocks each stream.
* ``retention`` asset: the state of retention per stream (P, the bound and its holder, consumer lags, live
  leases), with two checks: ``retention_not_blocked`` (fails when a stream has been blocked longer than
  ``PRW_RETENTION_BLOCKED_ALERT_SECONDS``: a lagging consumer is never silently dropped, it is reported) and
  ``retention_leases_not_expiring`` (warns when a live lease expires within ``PRW_RETENTION_LEASE_WARN_SECONDS``).
* ``exports_job`` (sensor ``exports_sensor`` on the ``exports`` stage's probe): builds requested snapshot exports
  and records each finished export as a materialization of the ``exports`` asset carrying its manifest.

The ops call ``run_stage`` like every generated stage job; the same stages run under ``prw worker``, and
``prw retention status|prune`` and ``prw export snapshot`` are the same operations from the command line.
"""

import json
from datetime import datetime
from typing import Any

import dagster as dg

from prw_orchestration.resources import PlatformResource
from prw_platform.pipeline import EXPORTS, PRUNE, default_stages
from prw_platform.runtime import Budget, has_work, run_stage
from prw_platform.services import RetentionStatus

GROUP = "retention"
RETENTION = dg.AssetKey("retention")
EXPORTS_ASSET = dg.AssetKey("exports")
#: Batches one run does at most (as the generated stage jobs).
BATCHES_PER_RUN = 20


def retention_metadata(statuses: list[RetentionStatus]) -> dict[str, Any]:
    """P, the holder and the leases of every stream, as the retention asset's metadata."""
    blocked = [s for s in statuses if s.blocked_by]
    return {
        "streams": len(statuses),
        "pruned_through": dg.MetadataValue.json(
            {f"{s.tenant_id}/{s.catalog_id}/{s.history_epoch}": s.pruned_through for s in statuses}
        ),
        "retained_events": sum(s.retained for s in statuses),
        "blocked_streams": len(blocked),
        "blocked_by": ", ".join(f"{s.tenant_id}/{s.catalog_id}: {s.blocked_by}" for s in blocked) or "none",
        "live_leases": sum(len(s.leases) for s in statuses),
        "per_stream": dg.MetadataValue.md(
            "| tenant | catalog | epoch | committed | pruned through | held by | blocked for s | leases |\n"
            "|---|---|---|---|---|---|---|---|\n"
            + "\n".join(
                f"| {s.tenant_id} | {s.catalog_id} | {s.history_epoch} | {s.committed_position} "
                f"| {s.pruned_through} | {s.held_by} | {s.blocked_seconds:.0f} | {len(s.leases)} |"
                for s in statuses
            )
        ),
    }


@dg.asset(
    key=RETENTION,
    group_name=GROUP,
    description="Outbox retention per stream (AW-03 Prune): the pruned-through cursor P, the bound and the consumer "
    "or lease holding it, consumer lags and live rebuild leases. Reading it writes nothing; prune_job records a "
    "materialization after every prune.",
)
def retention(platform: PlatformResource) -> dg.MaterializeResult[None]:
    return dg.MaterializeResult(metadata=retention_metadata(platform.platform.retention_status()))


@dg.asset_check(asset=retention, name="retention_not_blocked", blocking=False)
def retention_not_blocked(platform: PlatformResource) -> dg.AssetCheckResult:
    """Fails when published, aged events of a stream have been held back longer than the configured time by a
    consumer (that stopped reporting) or a lease (that is not released)."""
    statuses = platform.platform.retention_status()
    alerts = [s for s in statuses if s.blocked_alert]
    return dg.AssetCheckResult(
        passed=not alerts,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "blocked_too_long": len(alerts),
            "alert_after_seconds": int(
                platform.platform.retention_policy.blocked_alert_after.total_seconds()
            ),
            "streams": ", ".join(
                f"{s.tenant_id}/{s.catalog_id} blocked {s.blocked_seconds:.0f} s by {s.blocked_by}"
                for s in alerts
            )
            or "none",
        },
    )


@dg.asset_check(asset=retention, name="retention_leases_not_expiring", blocking=False)
def retention_leases_not_expiring(platform: PlatformResource) -> dg.AssetCheckResult:
    """Warns when a live rebuild lease expires soon: its rebuild must renew it, or restart from a new export."""
    statuses = platform.platform.retention_status()
    expiring = [(s, lease) for s in statuses for lease in s.leases_near_expiry]
    return dg.AssetCheckResult(
        passed=not expiring,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "expiring": len(expiring),
            "leases": ", ".join(
                f"{s.tenant_id}/{s.catalog_id} {lease.lease_id} ({lease.purpose}) in {lease.expires_in_seconds:.0f} s"
                for s, lease in expiring
            )
            or "none",
        },
    )


@dg.op(name="prune_outbox", description="AW-03 Prune: run the prune stage, record the retention asset.")
def prune_outbox(context: dg.OpExecutionContext, platform: PlatformResource) -> dg.Output[int]:
    report = run_stage(platform.platform, PRUNE, Budget(batches=BATCHES_PER_RUN))
    context.log.info(f"prune: {report.describe()} in {report.batches} batches")
    metadata = retention_metadata(platform.platform.retention_status())
    context.log_event(
        dg.AssetMaterialization(asset_key=RETENTION, metadata={"rows_removed": report.taken, **metadata})
    )
    return dg.Output(report.taken, metadata=report.metadata())


@dg.job(
    name="prune_job",
    description="Prune the outbox (AW-03) and record the retention asset.",
    tags={"prw/stage": PRUNE},
)
def prune_job() -> None:
    prune_outbox()


@dg.op(name="build_exports", description="Build requested snapshot exports (if_projection_bootstrap).")
def build_exports(context: dg.OpExecutionContext, platform: PlatformResource) -> dg.Output[int]:
    started = platform.platform.clock()
    report = run_stage(platform.platform, EXPORTS, Budget(batches=BATCHES_PER_RUN))
    context.log.info(f"exports: {report.describe()} in {report.batches} batches")
    for export in platform.platform.finished_exports(started):
        context.log_event(dg.AssetMaterialization(asset_key=EXPORTS_ASSET, metadata=export_metadata(export)))
    return dg.Output(report.taken, metadata=report.metadata())


def export_metadata(export: object) -> dict[str, Any]:
    from prw_platform.services import ExportSnapshot

    assert isinstance(export, ExportSnapshot)
    finished: datetime | None = export.finished_at
    return {
        "export_id": export.export_id,
        "tenant_id": export.tenant_id,
        "catalog_id": export.catalog_id,
        "status": export.status,
        "history_epoch": export.history_epoch or "",
        "position": export.position if export.position is not None else -1,
        "error": export.error_code or "",
        "finished_at": finished.isoformat() if finished else "",
        "manifest": dg.MetadataValue.json(json.loads(json.dumps(export.manifest or {}))),
    }


@dg.job(
    name="exports_job",
    description="Build requested snapshot exports; each one becomes a materialization of the exports asset.",
    tags={"prw/stage": EXPORTS},
)
def exports_job() -> None:
    build_exports()


prune_schedule = dg.ScheduleDefinition(
    name="prune_schedule",
    job=prune_job,
    cron_schedule=default_stages()[PRUNE].cron or "17 * * * *",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)


@dg.sensor(
    name="exports_sensor",
    job=exports_job,
    minimum_interval_seconds=5,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests an exports_job run when a snapshot export is pending.",
)
def exports_sensor(
    context: dg.SensorEvaluationContext, platform: PlatformResource
) -> dg.RunRequest | dg.SkipReason:
    if not has_work(platform.platform, EXPORTS):
        return dg.SkipReason("no pending export")
    running = context.instance.get_runs(
        filters=dg.RunsFilter(
            job_name="exports_job",
            statuses=[dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED],
        ),
        limit=1,
    )
    if running:
        return dg.SkipReason("an exports_job run is still queued or running")
    return dg.RunRequest()


exports = dg.AssetSpec(
    EXPORTS_ASSET,
    group_name=GROUP,
    description="Snapshot exports (if_projection_bootstrap): each finished export is a materialization carrying its "
    "manifest (history epoch, committed cursor W, lease, one checksummed object per aggregate type).",
)

RETENTION_ASSETS = (retention, exports)
RETENTION_CHECKS = (retention_not_blocked, retention_leases_not_expiring)
RETENTION_JOBS = (prune_job, exports_job)
RETENTION_SCHEDULES = (prune_schedule,)
RETENTION_SENSORS = (exports_sensor,)

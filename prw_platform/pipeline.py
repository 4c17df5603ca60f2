"""The platform's registered stages: every background path, in pipeline order.

resolution (if_resolution_job) -> decisions + outbox (AW-01, inside resolution) -> relay (AW-03) -> product
apply (AW-04); plus the pending-job sweeper (AW-02), driven by time. Each stage is a few lines over a service the
composition root built (``Platform.resolution``, ``.relay``, ``.product_apply``, ``.sweeper``); ``prw worker``,
``runtime.drain`` and the Dagster ops and sensors all run them through ``prw_platform.runtime``.

A later capability adds its stage to ``default_stages`` and appears in ``prw worker``, in Dagster and in the demo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from prw_platform.queues import MAX_MESSAGES_PER_RECEIVE
from prw_platform.runtime.stages import Batch, Stage, StageRegistry

if TYPE_CHECKING:
    from prw_platform.bootstrap import Platform

RESOLUTION: Final = "resolution"
RELAY: Final = "relay"
APPLY: Final = "apply"
SWEEPER: Final = "sweeper"
GAPS: Final = "gaps"
PROGRESS: Final = "progress"
PRUNE: Final = "prune"
EXPORTS: Final = "exports"

#: The relay publishes this many outbox rows per transaction.
RELAY_BATCH: Final = 100
#: The product consumer applies up to this many deliveries per receive round (one transaction per stream).
APPLY_BATCH: Final = 100
#: The gap closer closes at most this many streams per batch.
GAP_STREAMS: Final = 10
#: The progress reporter reports at most this many streams per batch.
PROGRESS_STREAMS: Final = 50
#: The pruner deletes at most this many outbox rows per batch (in transactions of ``retention.PRUNE_CHUNK``).
PRUNE_BATCH: Final = 100_000
#: The export job builds at most this many snapshot exports per batch.
EXPORT_BATCH: Final = 2
#: The sweeper re-enqueues at most this many pending jobs per transaction.
SWEEP_BATCH: Final = 100


def _resolve(platform: Platform, n: int) -> Batch:
    report = platform.resolution.run_batch(max_messages=min(n, MAX_MESSAGES_PER_RECEIVE))
    return Batch(
        report.received, {**report.statuses, "retried": report.retried, "unsettled": report.unsettled}
    )


def _relay(platform: Platform, n: int) -> Batch:
    result = platform.relay.run_batch(n)
    return Batch(result.published, {"published": result.published, "streams": len(result.streams)})


def _apply(platform: Platform, n: int) -> Batch:
    report = platform.product_apply.run_batch(max_messages=n)
    return Batch(
        report.received,
        {
            "applied": report.applied,
            "duplicate": report.ignored_duplicate,
            "stale": report.ignored_stale_revision,
            "old_epoch": report.ignored_old_epoch,
            "parked": report.parked,
            "released": report.released,
            "retried": report.retried,
            "ack_superseded": report.ack_superseded,
            **{f"dead_lettered {code}": k for code, k in report.dead_lettered.items()},
        },
    )


def _close_gaps(platform: Platform, n: int) -> Batch:
    report = platform.gap_closer.run_batch(max_streams=n)
    # Only a stream whose contiguous position moved is progress: counting the others would keep the stage
    # (and ``drain``) from idling.
    return Batch(
        sum(1 for c in report.closures if c.after > c.before),
        {
            "streams": report.streams,
            "fetched": report.fetched,
            "applied": report.applied,
            "advanced": report.advanced,
            "failed": report.failed,
        },
    )


def _report_progress(platform: Platform, n: int) -> Batch:
    report = platform.progress_reporter.run_batch(max_streams=n)
    # A failed report is not progress (the next round tries again); counting it would keep the stage busy.
    return Batch(
        report.reported, {"reported": report.reported, "advanced": report.advanced, "failed": report.failed}
    )


def _prune(platform: Platform, n: int) -> Batch:
    report = platform.pruner.run_batch(max_rows=n)
    return Batch(
        report.rows,
        {
            "rows": report.rows,
            "streams": sum(1 for s in report.streams if s.pruned),
            "blocked": len(report.blocked),
        },
    )


def _export(platform: Platform, n: int) -> Batch:
    done = platform.snapshot_exports.run_batch(max_exports=n)
    return Batch(
        len(done),
        {
            "ready": sum(1 for e in done if e.status == "ready"),
            "failed": sum(1 for e in done if e.status == "failed"),
        },
    )


def _sweep(platform: Platform, n: int) -> Batch:
    report = platform.sweeper.run_batch(limit=n)
    # A job whose send failed again is not progress: counting it would keep the sweeper from idling.
    return Batch(len(report.enqueued), {"enqueued": len(report.enqueued), "failed": len(report.failed)})


def default_stages() -> StageRegistry:
    return StageRegistry(
        (
            Stage(
                RESOLUTION,
                "Take resolution jobs: extract, normalize, identity, decision or review case.",
                run_batch=_resolve,
                has_work=lambda p: p.resolution.has_work(),
                prepare=lambda p: p.resolution,
                batch_size=MAX_MESSAGES_PER_RECEIVE,
            ),
            Stage(
                RELAY,
                "Publish committed outbox rows to the accepted-change queue, then mark them published (AW-03).",
                run_batch=_relay,
                has_work=lambda p: p.relay.has_work(),
                prepare=lambda p: p.relay,
                batch_size=RELAY_BATCH,
            ),
            Stage(
                APPLY,
                "Apply accepted changes to the product projection, one transaction per stream; ack after commit"
                " (AW-04).",
                run_batch=_apply,
                has_work=lambda p: p.product_apply.has_work(),
                prepare=lambda p: p.product_apply,
                batch_size=APPLY_BATCH,
            ),
            Stage(
                GAPS,
                "Close stream gaps (lost or dead-lettered deliveries) from the resolver's export stream (issue 9,"
                " AW-04).",
                run_batch=_close_gaps,
                has_work=lambda p: p.gap_closer.has_work(),
                prepare=lambda p: p.gap_closer,
                batch_size=GAP_STREAMS,
                idle_sleep=5.0,
            ),
            Stage(
                PROGRESS,
                "Report the live consumer's durable contiguous progress to resolver retention control, after the"
                " apply commit (issue 10, if_accepted_change).",
                run_batch=_report_progress,
                has_work=lambda p: p.progress_reporter.has_work(),
                prepare=lambda p: p.progress_reporter,
                batch_size=PROGRESS_STREAMS,
                idle_sleep=5.0,
            ),
            Stage(
                PRUNE,
                "AW-03 Prune: delete the contiguous prefix of published, aged outbox events no live consumer and no"
                " unexpired rebuild lease still needs (issue 10).",
                run_batch=_prune,
                has_work=lambda p: p.pruner.has_work(),
                prepare=lambda p: p.pruner,
                batch_size=PRUNE_BATCH,
                idle_sleep=300.0,
                pipeline=False,
                cron="17 * * * *",
            ),
            Stage(
                EXPORTS,
                "Build requested snapshot exports: lease pinned after P, one REPEATABLE READ snapshot at the"
                " committed cursor W, checksummed objects, manifest ready after a valid lease check"
                " (if_projection_bootstrap).",
                run_batch=_export,
                has_work=lambda p: p.snapshot_exports.has_work(),
                prepare=lambda p: p.snapshot_exports,
                batch_size=EXPORT_BATCH,
                idle_sleep=5.0,
                pipeline=False,
            ),
            Stage(
                SWEEPER,
                "AW-02: re-enqueue resolution jobs left pending after their capture committed.",
                run_batch=_sweep,
                has_work=lambda p: p.sweeper.has_work(),
                prepare=lambda p: p.sweeper,
                batch_size=SWEEP_BATCH,
                idle_sleep=30.0,
                pipeline=False,
                cron="*/5 * * * *",
            ),
        )
    )

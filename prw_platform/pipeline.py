"""The platform's registered stages: every background path, in pipeline order.

resolution (if_resolution_job's extract stage) -> normalize -> identity, with decisions + outbox (AW-01, inside
identity) -> relay (AW-03) -> product apply (AW-04); plus the pending-job sweeper (AW-02), driven by time. Each
stage is a few lines over a service the composition root built (``Platform.resolution_stage(...)``, ``.relay``,
``.product_apply``, ``.sweeper``); ``bootstrap`` registers them on the ``Platform``, and ``prw worker``,
``runtime.drain`` and the Dagster ops and sensors all run them through ``prw_platform.runtime``.

A later capability adds its stage to ``default_stages`` and appears in ``prw worker``, in Dagster and in the demo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from prw_platform.queues import MAX_MESSAGES_PER_RECEIVE
from prw_platform.runtime.stages import Batch, Stage, StageRegistry, stage_progress

if TYPE_CHECKING:
    from prw_platform.composition.platform import Platform
    from prw_platform.product.rebuild.records import RebuildRecord

#: if_resolution_job's extract stage keeps the name operators and their Dagster run history know.
RESOLUTION: Final = "resolution"
NORMALIZE: Final = "normalize"
IDENTITY: Final = "identity"
#: Each resolution stage and the ``resolution.job.v1`` stage it consumes.
RESOLUTION_STAGES: Final = {RESOLUTION: "extract", NORMALIZE: "normalize", IDENTITY: "identity"}
RELAY: Final = "relay"
APPLY: Final = "apply"
SWEEPER: Final = "sweeper"
GAPS: Final = "gaps"
PROGRESS: Final = "progress"
PRUNE: Final = "prune"
EXPORTS: Final = "exports"
REBUILD_CLEANUP: Final = "rebuild-cleanup"
ASSIST: Final = "assist"
REPLAY: Final = "replay"
#: Seed 004: the scheduled files sweep (concurrency one) and the cleanup consumer (at most two at once).
FILES_SWEEP: Final = "files-sweep"
FILES_CLEANUP: Final = "files-cleanup"


def _resolution_stage(name: str) -> Stage[Platform]:
    job_stage = RESOLUTION_STAGES[name]

    def run_batch(platform: Platform, n: int) -> Batch:
        consumer = platform.resolution_stage(job_stage)
        report = consumer.run_batch(max_messages=min(n, MAX_MESSAGES_PER_RECEIVE))
        return Batch(
            report.received, {**report.statuses, "retried": report.retried, "unsettled": report.unsettled}
        )

    return Stage(
        name,
        _RESOLUTION_DESCRIPTIONS[name],
        service=lambda p: p.resolution_stage(job_stage),
        run_batch=run_batch,
        batch_size=MAX_MESSAGES_PER_RECEIVE,
    )


_RESOLUTION_DESCRIPTIONS: Final = {
    RESOLUTION: "Extract (if_resolution_job): read and verify a capture's artifacts, run the adapter, store the"
    " claims; hand on to normalize.",
    NORMALIZE: "Normalize (if_resolution_job): run the class profile over the stored claims, store the normalized"
    " attributes; hand on to identity.",
    IDENTITY: "Identity (if_resolution_job, AW-01): under the stream cursor lock, a decision or a review case"
    " from the stored results; the receipt follows.",
}


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


def _clean_up_rebuilds(platform: Platform, n: int) -> Batch:
    def dropping(record: RebuildRecord, generation: int, removed: int) -> None:
        stage_progress(
            f"rebuild-cleanup: generation {generation} of {record.tenant_id}/{record.catalog_id} "
            f"({record.status} rebuild {record.rebuild_id}): {removed} rows dropped so far"
        )

    cleaned = platform.rebuild_cleanup.run_batch(limit=n, on_progress=dropping)
    return Batch(len(cleaned), {"generations_dropped": len(cleaned)})


def _sweep(platform: Platform, n: int) -> Batch:
    report = platform.sweeper.run_batch(limit=n)
    # A job whose send failed again is not progress: counting it would keep the sweeper from idling.
    return Batch(len(report.enqueued), {"enqueued": len(report.enqueued), "failed": len(report.failed)})


def _replay(platform: Platform, n: int) -> Batch:
    report = platform.replay_consumer.run_batch(max_messages=min(n, MAX_MESSAGES_PER_RECEIVE))
    return Batch(report.received, report.outcomes)


def _assist(platform: Platform, n: int) -> Batch:
    report = platform.assist.run_batch(limit=n)
    # Only a settled case is progress: a budget spent or a provider backing off must let the stage idle.
    return Batch(report.answered, dict(report.counts))


def _sweep_files(platform: Platform, n: int) -> Batch:
    report = platform.files_sweep.run_batch(limit=n)
    return Batch(
        len(report.claimed) + len(report.resent) + report.expired,
        {"claimed": len(report.claimed), "resent": len(report.resent), "retirement_over": report.expired},
    )


def _clean_up_files(platform: Platform, n: int) -> Batch:
    report = platform.files_cleanup.run_batch(max_messages=n)
    # A retried delivery is not progress (it is invisible until its backoff ends).
    return Batch(report.received - report.outcomes["retried"], dict(report.outcomes))


def default_stages() -> StageRegistry[Platform]:
    return StageRegistry(
        (
            _resolution_stage(RESOLUTION),
            _resolution_stage(NORMALIZE),
            _resolution_stage(IDENTITY),
            Stage(
                RELAY,
                "Publish committed outbox rows to the accepted-change queue, then mark them published (AW-03).",
                service=lambda p: p.relay,
                run_batch=_relay,
                batch_size=100,
            ),
            Stage(
                APPLY,
                "Apply accepted changes to the product projection, one transaction per stream; ack after commit"
                " (AW-04).",
                service=lambda p: p.product_apply,
                run_batch=_apply,
                batch_size=100,
            ),
            Stage(
                GAPS,
                "Close stream gaps (lost or dead-lettered deliveries) from the resolver's export stream"
                " (AW-04).",
                service=lambda p: p.gap_closer,
                run_batch=_close_gaps,
                batch_size=10,
                idle_sleep=5.0,
            ),
            Stage(
                PROGRESS,
                "Report the live consumer's durable contiguous progress to resolver retention control, after the"
                " apply commit (if_accepted_change).",
                service=lambda p: p.progress_reporter,
                run_batch=_report_progress,
                batch_size=50,
                idle_sleep=5.0,
            ),
            Stage(
                PRUNE,
                "AW-03 Prune: delete the contiguous prefix of published, aged outbox events no live consumer and no"
                " unexpired rebuild lease still needs.",
                service=lambda p: p.pruner,
                run_batch=_prune,
                batch_size=100_000,  # outbox rows, in transactions of ``retention.PRUNE_CHUNK``
                idle_sleep=300.0,
                pipeline=False,
                cron="17 * * * *",
            ),
            Stage(
                EXPORTS,
                "Build requested snapshot exports: lease pinned after P, one REPEATABLE READ snapshot at the"
                " committed cursor W, checksummed objects, manifest ready after a valid lease check"
                " (if_projection_bootstrap).",
                service=lambda p: p.snapshot_exports,
                run_batch=_export,
                batch_size=2,
                idle_sleep=5.0,
                pipeline=False,
            ),
            Stage(
                REBUILD_CLEANUP,
                "Drop the projection generations finished product rebuilds left (the replaced one after a cutover,"
                " a failed rebuild's own), once they are older than PRW_REBUILD_CLEANUP_AFTER_SECONDS; never the"
                " serving generation (if_projection_bootstrap).",
                service=lambda p: p.rebuild_cleanup,
                run_batch=_clean_up_rebuilds,
                batch_size=2,
                idle_sleep=300.0,
                pipeline=False,
                cron="41 * * * *",
            ),
            Stage(
                REPLAY,
                "Improvement replays (if_replay_job): re-run stored captures with pinned versions and record the"
                " diff; never re-fetch.",
                service=lambda p: p.replay_consumer,
                run_batch=_replay,
                batch_size=MAX_MESSAGES_PER_RECEIVE,
                pipeline=False,
            ),
            Stage(
                ASSIST,
                "Ask the LLM (if configured) for proposed claims and advice on open review cases; annotate only,"
                " never decide (if_llm_extract, if_llm_review, DEC-02).",
                service=lambda p: p.assist,
                run_batch=_assist,
                batch_size=5,  # review cases, each a model call of up to 60 s
                idle_sleep=30.0,
                pipeline=False,
            ),
            Stage(
                SWEEPER,
                "AW-02: re-enqueue resolution jobs left pending after their capture committed.",
                service=lambda p: p.sweeper,
                run_batch=_sweep,
                batch_size=100,
                idle_sleep=30.0,
                pipeline=False,
                cron="*/5 * * * *",
            ),
            Stage(
                FILES_SWEEP,
                "Seed 004: claim due detached and abandoned catalog files (discarding), one cleanup message each;"
                " delete retired bytes after thirty days.",
                service=lambda p: p.files_sweep,
                run_batch=_sweep_files,
                batch_size=100,
                idle_sleep=30.0,
                concurrency=1,
                pipeline=False,
                cron="*/5 * * * *",
            ),
            Stage(
                FILES_CLEANUP,
                "Seed 004: settle one catalog file per cleanup message (attached, discarded, or failed on the"
                " fifth receive).",
                service=lambda p: p.files_cleanup,
                run_batch=_clean_up_files,
                batch_size=MAX_MESSAGES_PER_RECEIVE,
                idle_sleep=5.0,
                concurrency=2,
                pipeline=False,
            ),
        )
    )

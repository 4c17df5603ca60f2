"""Assets that make the platform's state visible, and the invariants as asset checks. Each asset is a snapshot
of state owned by the core: materializing it reads, it never writes. The ``platform_state_job`` (and its
schedule) refreshes them and runs the checks."""

from typing import Any

import dagster as dg

from prw_orchestration.resources import PlatformResource
from prw_platform.services import FILE_STATES

GROUP = "platform_state"


@dg.asset(
    group_name=GROUP,
    description="Captures, receipts, resolution jobs (one per stage: extract, normalize, identity) and open review"
    " cases per tenant.",
)
def captures(platform: PlatformResource) -> dg.MaterializeResult[None]:
    counts = platform.platform.reports.capture_counts()
    metadata: dict[str, dg.RawMetadataValue] = {
        "captures": sum(c.captures for c in counts),
        "receipts": sum(c.receipts for c in counts),
        "jobs_pending": sum(c.jobs_pending for c in counts),
        "jobs_enqueued": sum(c.jobs_enqueued for c in counts),
        "jobs_completed": sum(c.jobs_completed for c in counts),
        "jobs_dead_lettered": sum(c.jobs_dead_lettered for c in counts),
        "open_review_cases": sum(c.open_review_cases for c in counts),
        "per_tenant": dg.MetadataValue.md(
            "| tenant | captures | receipts | jobs done | review cases |\n|---|---|---|---|---|\n"
            + "\n".join(
                f"| {c.tenant_id} | {c.captures} | {c.receipts} | {c.jobs_completed} | {c.open_review_cases} |"
                for c in counts
            )
        ),
    }
    return dg.MaterializeResult(metadata=metadata)


@dg.asset(
    group_name=GROUP,
    deps=[captures],
    description="The accepted-change streams: committed (cursor) and published (relayed) positions per stream.",
)
def accepted_change_stream(platform: PlatformResource) -> dg.MaterializeResult[None]:
    streams = platform.platform.reports.stream_statuses()
    return dg.MaterializeResult(
        metadata={
            "streams": len(streams),
            "committed_positions": sum(s.committed_position for s in streams),
            "published_positions": sum(s.published_through for s in streams),
            "unpublished": sum(s.unpublished for s in streams),
            "per_stream": dg.MetadataValue.md(
                "| tenant | catalog | epoch | committed | published through | unpublished |\n"
                "|---|---|---|---|---|---|\n"
                + "\n".join(
                    f"| {s.tenant_id} | {s.catalog_id} | {s.history_epoch} | {s.committed_position} "
                    f"| {s.published_through} | {s.unpublished} |"
                    for s in streams
                )
            ),
        }
    )


@dg.asset(
    group_name=GROUP,
    deps=[],
    description="Gap closure: per projected stream, the lag behind the committed stream, parked events and "
    "how long its first gap has been open. Observed (never materialized: it writes nothing).",
)
def product_gaps(platform: PlatformResource) -> dg.MaterializeResult[None]:
    gaps = platform.platform.reports.stream_gaps()
    return dg.MaterializeResult(
        metadata={
            "streams": len(gaps),
            "lag": sum(g.lag for g in gaps),
            "parked": sum(g.parked for g in gaps),
            "max_gap_age_seconds": round(max((g.gap_age_seconds for g in gaps), default=0.0), 1),
            "per_stream": dg.MetadataValue.md(
                "| tenant | catalog | epoch | applied | committed | lag | parked | gap age s |\n"
                "|---|---|---|---|---|---|---|---|\n"
                + "\n".join(
                    f"| {g.tenant_id} | {g.catalog_id} | {g.history_epoch} | {g.applied_position} "
                    f"| {g.committed_position} | {g.lag} | {g.parked} | {g.gap_age_seconds:.0f} |"
                    for g in gaps
                )
            ),
        }
    )


@dg.asset_check(asset=product_gaps, name="product_gap_age", blocking=False)
def product_gap_age(platform: PlatformResource) -> dg.AssetCheckResult:
    """Fails when a stream's gap has been open longer than ``PRW_GAP_ALERT_AFTER_SECONDS``: the gaps stage did
    not close it (export stream unreachable, credentials missing, or an event the consumer rejects)."""
    reports = platform.platform.reports
    overdue = [g for g in reports.stream_gaps() if g.overdue]
    return dg.AssetCheckResult(
        passed=not overdue,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "overdue": len(overdue),
            "alert_after_seconds": int(reports.gap_alert_after.total_seconds()),
            "streams": ", ".join(
                f"{g.tenant_id}/{g.catalog_id} gap open {g.gap_age_seconds:.0f} s, lag {g.lag}, parked {g.parked}"
                for g in overdue
            )
            or "none",
        },
    )


@dg.asset(
    group_name=GROUP,
    deps=[accepted_change_stream],
    description="The product projection per stream: applied (contiguous) position, lag behind the committed "
    "stream, parked events; and the public release.",
)
def product_projection(platform: PlatformResource) -> dg.MaterializeResult[None]:
    reports = platform.platform.reports
    progress = reports.stream_progress()
    committed = {
        (s.tenant_id, s.catalog_id, s.history_epoch): s.committed_position for s in reports.stream_statuses()
    }
    lags = {
        (p.tenant_id, p.catalog_id): p.lag(committed.get((p.tenant_id, p.catalog_id, p.history_epoch), 0))
        for p in progress
    }
    counts = reports.public_counts()
    return dg.MaterializeResult(
        metadata={
            "applied_position": sum(p.applied_position for p in progress),
            "lag": sum(lags.values()),
            "parked": sum(p.parked_count for p in progress),
            **counts,
            "per_stream": dg.MetadataValue.md(
                "| tenant | catalog | epoch | applied | lag | parked |\n|---|---|---|---|---|---|\n"
                + "\n".join(
                    f"| {p.tenant_id} | {p.catalog_id} | {p.history_epoch} | {p.applied_position} "
                    f"| {lags[(p.tenant_id, p.catalog_id)]} | {p.parked_count} |"
                    for p in progress
                )
            ),
        }
    )


@dg.asset_check(asset=accepted_change_stream, name="inv03_contiguous_positions", blocking=False)
def inv03_contiguous_positions(platform: PlatformResource) -> dg.AssetCheckResult:
    """INV-03: committed outbox positions are contiguous per (tenant, catalog, history_epoch), starting at 1."""
    streams = platform.platform.reports.stream_statuses()
    broken = [f"{s.tenant_id}/{s.catalog_id}/{s.history_epoch}" for s in streams if not s.contiguous]
    return dg.AssetCheckResult(
        passed=not broken,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"streams": len(streams), "broken": ", ".join(broken) or "none"},
    )


@dg.asset_check(asset=product_projection, name="inv01_one_mapping_one_owner", blocking=False)
def inv01_one_mapping_one_owner(platform: PlatformResource) -> dg.AssetCheckResult:
    """INV-01: a listing has at most one current item mapping, and one public item owner."""
    reports = platform.platform.reports
    duplicated = reports.listings_with_several_current_mappings()
    orphaned = reports.public_listings_without_public_owner()
    return dg.AssetCheckResult(
        passed=duplicated == 0 and orphaned == 0,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "listings_with_several_mappings": duplicated,
            "public_listings_without_public_owner": orphaned,
        },
    )


@dg.asset_check(asset=product_projection, name="inv08_projection_lag", blocking=False)
def inv08_projection_lag(platform: PlatformResource) -> dg.AssetCheckResult:
    """INV-08 as lag: the projection has applied every committed position of each stream (a WARN while it
    catches up or while an event is parked)."""
    reports = platform.platform.reports
    committed = {
        (s.tenant_id, s.catalog_id, s.history_epoch): s.committed_position for s in reports.stream_statuses()
    }
    progress = reports.stream_progress()
    lag = {
        f"{p.tenant_id}/{p.catalog_id}": p.lag(committed.get((p.tenant_id, p.catalog_id, p.history_epoch), 0))
        for p in progress
    }
    parked = sum(p.parked_count for p in progress)
    return dg.AssetCheckResult(
        passed=all(v == 0 for v in lag.values()) and parked == 0,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"total_lag": sum(lag.values()), "parked": parked, "streams": len(lag)},
    )


@dg.asset(
    group_name=GROUP,
    description="Registered collector instances: lease state (active, silent, failing), last heartbeat, "
    "consecutive failures and last run report (if_collector_bootstrap, if_heartbeat).",
)
def collector_fleet(platform: PlatformResource) -> dg.MaterializeResult[None]:
    fleet = platform.platform.reports.collector_fleet()
    by_state = {
        state: sum(1 for s in fleet if s.state.value == state) for state in ("active", "silent", "failing")
    }
    return dg.MaterializeResult(
        metadata={
            "instances": len(fleet),
            **by_state,
            "overdue": sum(1 for s in fleet if s.overdue),
            "per_instance": dg.MetadataValue.md(
                "| tenant | instance | worker | sources | lease | last heartbeat | failures |\n"
                "|---|---|---|---|---|---|---|\n"
                + "\n".join(
                    f"| {s.instance.tenant_id} | {s.instance.instance_id} | {s.instance.worker_id} "
                    f"| {' '.join(s.instance.targets)} | {s.state.value} | {s.instance.last_heartbeat_at or '-'} "
                    f"| {s.instance.consecutive_failures} |"
                    for s in fleet
                )
            ),
        }
    )


@dg.asset_check(asset=collector_fleet, name="collectors_reporting", blocking=False)
def collectors_reporting(platform: PlatformResource) -> dg.AssetCheckResult:
    """if_heartbeat: "A missed heartbeat is visible as lease expiry": fails when an instance with grants has been
    silent (lease lapsed) or failing longer than ``PRW_COLLECTOR_ALERT_AFTER_SECONDS``."""
    reports = platform.platform.reports
    overdue = [s for s in reports.collector_fleet() if s.overdue]
    return dg.AssetCheckResult(
        passed=not overdue,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "overdue": len(overdue),
            "alert_after_seconds": int(reports.fleet.alert_after.total_seconds()),
            "instances": ", ".join(
                f"{s.instance.tenant_id}/{s.instance.instance_id} {s.state.value} since {s.state_since}"
                for s in overdue
            )
            or "none",
        },
    )


@dg.asset(
    group_name=GROUP,
    description="The dead-letter queues of the resolution stages (resolution-jobs = extract, resolution-normalize, "
    "resolution-identity) and accepted-changes: entries, reasons and the oldest entry per queue (`prw dlq list`; "
    "`prw dlq redrive` puts entries back on their own stage's queue).",
)
def dead_letter_queues(platform: PlatformResource) -> dg.MaterializeResult[None]:
    summaries = platform.platform.dead_letters.summaries()
    return dg.MaterializeResult(
        metadata={
            "dead_letters": sum(s.dead for s in summaries),
            **{f"dead_letters_{s.queue.replace('-', '_')}": s.dead for s in summaries},
            "per_queue": dg.MetadataValue.md(
                "| queue | dead letters | reasons | oldest |\n|---|---|---|---|\n"
                + "\n".join(
                    f"| {s.queue} | {s.dead} | {', '.join(f'{r} {n}' for r, n in s.reasons.items()) or '-'} "
                    f"| {s.oldest_dead_lettered_at or '-'} |"
                    for s in summaries
                )
            ),
        }
    )


@dg.asset_check(asset=dead_letter_queues, name="dead_letter_queues_empty", blocking=False)
def dead_letter_queues_empty(platform: PlatformResource) -> dg.AssetCheckResult:
    """A dead-lettered message is work the platform could not do on its own: the check fails (a warning) while
    any dead-letter queue holds an entry, until an operator re-drives or accepts it (docs/operators/queues.md)."""
    holding = [s for s in platform.platform.dead_letters.summaries() if s.dead]
    return dg.AssetCheckResult(
        passed=not holding,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "queues": ", ".join(f"{s.queue} {s.dead} ({', '.join(s.reasons)})" for s in holding) or "none",
        },
    )


@dg.asset(
    group_name=GROUP,
    description="Improvement replays (if_replay_job): the newest replays with what their diffs change "
    "(captures whose claims, attributes or identity outcome change, new review cases, errors) and a sample of "
    "changed captures, so a reviewer can judge an upgrade before approving apply.",
)
def improvement_replays(platform: PlatformResource) -> dg.MaterializeResult[None]:
    return dg.MaterializeResult(metadata=replay_metadata(platform))


def replay_metadata(platform: PlatformResource) -> dict[str, Any]:
    """The ``improvement_replays`` asset's metadata; each ``replay_job`` run records it too (``defs.pipeline``)."""
    replays = platform.platform.reports.replay_summaries()
    latest = replays[0] if replays else None
    metadata: dict[str, dg.RawMetadataValue] = {
        "replays": len(replays),
        "queued": sum(1 for r in replays if r.status == "queued"),
        "per_replay": dg.MetadataValue.md(
            "| tenant | improvement | replay | mode | status | captures | settled | changed | claims | attributes "
            "| identity | new review cases | errors |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
            + "\n".join(
                f"| {r.tenant_id} | {r.improvement_id} | {r.replay_id} | {r.mode} | {r.status} | {r.captures} "
                f"| {r.settled} | {r.changed} | {r.claims_changed} | {r.attributes_changed} | {r.identity_changed} "
                f"| {r.new_review_cases} | {r.failed} |"
                for r in replays
            )
        ),
    }
    if latest is not None:
        metadata["latest_replay"] = latest.replay_id
        metadata["latest_changed_sample"] = dg.MetadataValue.json(latest.sample)
    return metadata


@dg.asset(
    group_name=GROUP,
    description="Managed catalog files (seed 004): how many in each of the eight states, the oldest due cleanup "
    "(the files sweep claims it) and the failed files waiting for an operator (GET /v1/files/failed).",
)
def catalog_files(platform: PlatformResource) -> dg.MaterializeResult[None]:
    counts = platform.platform.reports.catalog_files()
    return dg.MaterializeResult(
        metadata={
            **{f"state_{state}": counts.per_state.get(state, 0) for state in FILE_STATES},
            "oldest_due_at": str(counts.oldest_due_at or "-"),
            "failed": counts.failed,
            "oldest_failed_at": str(counts.oldest_failed_at or "-"),
        }
    )


@dg.asset_check(asset=catalog_files, name="failed_files_reviewed", blocking=False)
def failed_files_reviewed(platform: PlatformResource) -> dg.AssetCheckResult:
    """Fails when a failed file has waited longer than ``PRW_CATALOG_FILE_FAILED_ALERT_SECONDS`` for an operator
    to retry it (docs/operators/files.md)."""
    reports = platform.platform.reports
    waited = reports.failed_file_waited()
    limit = reports.failed_file_alert_after
    return dg.AssetCheckResult(
        passed=waited is None or waited <= limit,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "oldest_failed_waited_seconds": int(waited.total_seconds()) if waited is not None else 0,
            "alert_after_seconds": int(limit.total_seconds()),
        },
    )


@dg.asset(
    group_name=GROUP,
    deps=[captures],
    description="Likely duplicate items: per catalog, pairs of active items that are probably one product (title "
    "similarity, a shared model or part number, the same brand), for a reviewer to merge (/console/duplicates). "
    "Reads only.",
)
def likely_duplicate_items(platform: PlatformResource) -> dg.MaterializeResult[None]:
    report = platform.platform.reports.likely_duplicates()
    top = report.top(20)
    return dg.MaterializeResult(
        metadata={
            "pairs": report.pair_count,
            "catalogs_with_pairs": sum(1 for c in report.catalogs if c.pairs),
            "top_pairs": dg.MetadataValue.md(
                "| tenant | catalog | item | item | score | evidence |\n|---|---|---|---|---|---|\n"
                + "\n".join(
                    f"| {tenant} | {p.catalog_id} | {_cell(p.first.item_id, p.first.title)} "
                    f"| {_cell(p.second.item_id, p.second.title)} | {p.score:.2f} | {_cell(*p.evidence)} |"
                    for tenant, p in top
                )
            ),
        }
    )


#: Automatic mappings a catalog needs before its live precision is held to the promise (fewer say little).
LIVE_PRECISION_MINIMUM = 20
_BAR = 20


def _bar(share: float) -> str:
    filled = round(max(0.0, min(1.0, share)) * _BAR)
    return "█" * filled + "·" * (_BAR - filled)


def _curve(points: list[dict[str, Any]]) -> str:
    """A generation's band curve at margin 0 as a text plot: precision and coverage per probability threshold."""
    flat = sorted((p for p in points if p["margin"] == 0.0), key=lambda p: p["probability"])
    rows = []
    for threshold in (0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99):
        at = next((p for p in flat if p["probability"] >= threshold), None)
        if at is not None:
            rows.append(
                f"| ≥ {threshold:.2f} | {at['precision']:.3f} `{_bar(at['precision'])}` "
                f"| {at['coverage']:.3f} `{_bar(at['coverage'])}` | {at['right']}/{at['right'] + at['wrong']} |"
            )
    return "| threshold | precision | coverage | right/judged |\n|---|---|---|---|\n" + "\n".join(rows)


@dg.asset(
    group_name=GROUP,
    deps=[captures],
    description="Identity calibration per catalog: the scoring rule's generations (proposed, live), the labels "
    "each was fitted on, the precision and coverage its bands were estimated at (the latest one's curve as a "
    "plot), and the live precision since (automatic mappings a person later corrected). Reads only.",
)
def identity_calibration(platform: PlatformResource) -> dg.MaterializeResult[None]:
    core = platform.platform
    catalogs = sorted({(s.tenant_id, s.catalog_id) for s in core.reports.stream_statuses()})
    report = core.identity_generations.catalog_report(catalogs)
    rows = []
    for entry in report:
        live_generation, latest = entry.live_generation, entry.latest
        for rule in entry.live:
            rows.append(
                f"| {entry.tenant_id} | {entry.catalog_id} | {rule.rule} "
                f"| {live_generation.generation if live_generation else 1} "
                f"| {latest.generation if latest else '-'} ({latest.status if latest else 'shipped'}) "
                f"| {latest.labels.get('matches', 0) if latest else 0} "
                f"| {rule.automatic} | {rule.corrected} "
                f"| {'-' if rule.precision is None else f'{rule.precision:.3f}'} "
                f"| {'-' if rule.promise is None else f'{rule.promise:.3f}'} |"
            )
    metadata: dict[str, dg.RawMetadataValue] = {
        "catalogs": len(report),
        "generations": sum(len(entry.generations) for entry in report),
        "labelled_matches": sum(
            int(entry.latest.labels.get("matches", 0)) for entry in report if entry.latest is not None
        ),
        "automatic_mappings": sum(rule.automatic for entry in report for rule in entry.live),
        "corrected": sum(rule.corrected for entry in report for rule in entry.live),
        "per_catalog": dg.MetadataValue.md(
            "| tenant | catalog | rule | live generation | latest generation | labelled matches | automatic "
            "| corrected | live precision | promise |\n|---|---|---|---|---|---|---|---|---|---|\n"
            + "\n".join(rows)
        ),
    }
    newest = max(
        (entry.latest for entry in report if entry.latest is not None),
        key=lambda g: g.proposed_at,
        default=None,
    )
    if newest is not None:
        metadata["latest_curve"] = dg.MetadataValue.md(
            f"{newest.catalog_id}, generation {newest.generation} ({newest.status}, promise {newest.promise}):\n\n"
            + _curve(newest.curve)
        )
    return dg.MaterializeResult(metadata=metadata)


@dg.asset_check(asset=identity_calibration, name="identity_live_precision", blocking=False)
def identity_live_precision(platform: PlatformResource) -> dg.AssetCheckResult:
    """Warns when a catalog's automatic identity mappings, measured on later reviewer corrections, fall below the
    precision their band promises (at least ``LIVE_PRECISION_MINIMUM`` mappings; docs/operators/resolution.md)."""
    core = platform.platform
    catalogs = sorted({(s.tenant_id, s.catalog_id) for s in core.reports.stream_statuses()})
    below = [
        (entry, rule)
        for entry in core.identity_generations.catalog_report(catalogs)
        for rule in entry.live
        if rule.below_promise(LIVE_PRECISION_MINIMUM)
    ]
    return dg.AssetCheckResult(
        passed=not below,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "catalogs_below_promise": len(below),
            "below": dg.MetadataValue.md(
                "| tenant | catalog | rule | automatic | corrected | precision | promise |\n|---|---|---|---|---|---|---|\n"
                + "\n".join(
                    f"| {e.tenant_id} | {e.catalog_id} | {r.rule} | {r.automatic} | {r.corrected} "
                    f"| {r.precision:.3f} | {r.promise:.3f} |"
                    for e, r in below
                )
            ),
        },
    )


def _cell(*texts: str | None) -> str:
    """Texts for one markdown table cell: a pipe or a line break in a title would end the cell or the row."""
    return "; ".join(t for t in texts if t).replace("|", "\\|").replace("\n", " ")


STATE_ASSETS = (
    captures,
    accepted_change_stream,
    product_projection,
    product_gaps,
    collector_fleet,
    dead_letter_queues,
    improvement_replays,
    catalog_files,
    likely_duplicate_items,
    identity_calibration,
)
STATE_CHECKS = (
    product_gap_age,
    inv03_contiguous_positions,
    inv01_one_mapping_one_owner,
    inv08_projection_lag,
    collectors_reporting,
    dead_letter_queues_empty,
    failed_files_reviewed,
    identity_live_precision,
)

platform_state_job = dg.define_asset_job(
    "platform_state_job",
    selection=dg.AssetSelection.groups(GROUP),
    description="Refresh the platform-state assets and run the invariant checks.",
)
platform_state_schedule = dg.ScheduleDefinition(
    name="platform_state_schedule",
    job=platform_state_job,
    cron_schedule="*/10 * * * *",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)

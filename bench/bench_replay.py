"""Improvement replays: replayed captures per second beside fresh resolution of the same captures in
the same run.

    python bench/bench_replay.py [--captures 63] [--rounds 2] [--database-url URL] [--smoke]

The captures are the 63 real product pages bundled for the extraction evaluation
(tests/fixtures/eval/zyte_benchmark_dev), submitted over HTTP by a collector to the intake app on loopback. Each
round submits ``--captures`` new captures (distinct records), then times:

* **fresh**: the resolution stages (``runtime.drain`` over the pipeline's resolution stages, without relay and
  apply) until every capture of the round is resolved: extraction, normalization, identity, a decision or a
  review case, written;
* **replay**: an improvement pinning ``pa_schemaorg@1.1.0`` over exactly those captures, one dry-run replay
  (``POST /v1/improvements/{id}/replays``' service: fan-out of one message per capture), and the ``replay`` stage
  until the replay completes: the stored bytes re-read and verified, extraction, normalization and identity
  re-run read-only with the pins, the diff against the recorded results written.

Ratio = replayed captures/s over fresh captures/s (above 1: a replay costs less than resolving, as it writes
only its diff). The platform's overhead over the raw parse is ``bench_resolution.py``'s. Absolute numbers depend on the machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import time
import uuid
from datetime import UTC, datetime

from bench_extraction import DATASET
from bench_spine import (
    CATALOG,
    INSTANCE,
    SOURCE,
    TENANT,
    WORKER,
    provision,
    scratch_platform,
    server_admin_url,
)

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_cli.collector import Collector
from prw_cli.evaluation.extraction import load_dataset, read_page
from prw_platform.auth import ClientSpec, create_client
from prw_platform.auth.scopes import COLLECTOR_SCOPES
from prw_platform.bootstrap import Platform
from prw_platform.pipeline import APPLY, GAPS, RELAY
from prw_platform.runtime import Budget, drain, run_stage
from prw_platform.services import ImprovementDraft, Selection

PIN = "pa_schemaorg@1.1.0"


def resolution_stages(platform: Platform) -> list[str]:
    return [s for s in platform.stages.names(pipeline_only=True) if s not in (RELAY, APPLY, GAPS)]


def one_round(
    platform: Platform, collector: Collector, pages: list[bytes], label: str
) -> tuple[float, float, int]:
    observed = datetime.now(UTC).isoformat()
    capture_ids = []
    for n, data in enumerate(pages):
        submitted = collector.submit(
            source_id=SOURCE, native_record_id=f"{label}-{n}", observed_at=observed, data=data, url=None
        )
        capture_ids.append(submitted.capture_id)
    began = time.perf_counter()
    drain(platform, stages=resolution_stages(platform))
    fresh = time.perf_counter() - began

    improvement = platform.improvements.create(
        TENANT,
        ImprovementDraft(
            CATALOG, Selection(capture_ids=tuple(capture_ids)), f"bench {label}", adapter_version=PIN
        ),
        "operator:bench",
    )
    began = time.perf_counter()
    requested = platform.replays.request(
        TENANT, improvement.improvement.improvement_id, "dry_run", "operator:bench"
    )
    while True:
        report = run_stage(platform, "replay", Budget())
        view = platform.replays.view(TENANT, requested.replay.replay_id)
        if view.replay.status == "completed" or not report.taken:
            break
    replay = time.perf_counter() - began
    if view.replay.status != "completed":
        raise RuntimeError(f"replay {requested.replay.replay_id} did not complete: {view.replay}")
    return fresh, replay, len(capture_ids)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--captures", type=int, default=63)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--database-url")
    parser.add_argument(
        "--smoke", action="store_true", help="3 captures, 1 round: only checks that it still works"
    )
    args = parser.parse_args()
    if args.smoke:
        args.captures, args.rounds = 3, 1
    admin_url, where = server_admin_url(args.database_url)
    dataset = load_dataset(DATASET)
    if args.smoke:  # the smallest pages: the smoke run only checks that the script still works
        dataset = sorted(dataset, key=lambda p: p.path.stat().st_size)[: args.captures]
    pages = [read_page(p) for p in dataset]
    pages = [pages[i % len(pages)] for i in range(args.captures)]
    print(f"{args.rounds} rounds of {args.captures} real pages, {where}", flush=True)
    with scratch_platform(admin_url, "replay") as platform:
        provision(platform)
        client = create_client(
            platform.resolver_db, ClientSpec(TENANT, CATALOG, WORKER, INSTANCE, (SOURCE,), COLLECTOR_SCOPES)
        )
        with (
            BackgroundServer(compose.intake_app(platform)) as intake,
            Collector(intake.url, client.client_id, client.client_secret, worker_id=WORKER) as collector,
        ):
            run = uuid.uuid4().hex[:6]
            if not args.smoke:
                one_round(platform, collector, pages[:2], f"{run}-warmup")  # imports, pools, plugin registry
            fresh_total = replay_total = 0.0
            count = 0
            print(f"{'round':<8} {'captures':>9} {'fresh/s':>9} {'replayed/s':>11} {'ratio':>7}")
            for r in range(1, args.rounds + 1):
                fresh, replay, n = one_round(platform, collector, pages, f"{run}-{r}")
                fresh_total, replay_total, count = fresh_total + fresh, replay_total + replay, count + n
                print(
                    f"{r:<8} {n:>9} {n / fresh:>9.1f} {n / replay:>11.1f} {fresh / replay:>7.2f}", flush=True
                )
    print(
        f"\nreplay vs fresh resolution: {count / replay_total:.1f} vs {count / fresh_total:.1f} captures/s,"
        f" ratio {fresh_total / replay_total:.2f}"
    )


if __name__ == "__main__":
    main()

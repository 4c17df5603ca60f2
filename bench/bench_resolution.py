"""Staged resolution (if_resolution_job: extract -> normalize -> identity) on real pages, beside the raw adapter
parse of the same pages in the same run: captures resolved per second, and the platform's overhead as a ratio.

    python bench/bench_resolution.py [--copies 3] [--database-url URL] [--smoke]

The bundled development pages of Zyte's product extraction benchmark (tests/fixtures/eval/zyte_benchmark_dev,
63 real product pages) are stored as captures through the intake service (AW-02; not timed), ``--copies`` times
each under distinct record ids. Then, timed:

* ``raw parse`` (the baseline): for every capture, the adapter the registry selects, ``adapter.extract`` on the
  page's bytes in memory, nothing else;
* ``staged``: the three resolution stages drained one after another through the stage runtime
  (``run_stage(platform, stage, Budget())``, the path ``prw worker``, Dagster and the demo take): queue receive,
  capture re-read, verified object read, adapter, the extract transaction (results + inbox + next job sent in
  it), the claims read back, the profile, the normalize transaction, then identity under the stream cursor lock
  with the decision, receipt and outbox rows; each delivery acked after its commit.

It prints captures per second of each, each stage's share, and staged / raw parse: the platform's overhead.
Baseline and measurement alternate in rounds (one round = every capture once) so machine noise hits both; one
untimed parse pass first warms the adapter up.
Scratch databases (on a throwaway embedded server, or on the server of ``--database-url``) are dropped at the
end. Absolute numbers depend on the machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from bench_spine import scratch_platform, server_admin_url

from prw_cli.evaluation.extraction import load_dataset, read_page
from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import COLLECTOR_SCOPES
from prw_platform.bootstrap import Platform
from prw_platform.plugins import Artifact, CaptureView
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec, provision_catalog
from prw_platform.resolver.intake import ArtifactSelector, CaptureSubmission, UploadDeclaration
from prw_platform.runtime import Budget, run_stage

PAGES = Path(__file__).resolve().parents[1] / "tests/fixtures/eval/zyte_benchmark_dev"
TENANT, CATALOG, SOURCE = "ten_bench", "cat_bench", "src_bench_web"
STAGES = ("resolution", "normalize", "identity")
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def principal() -> CollectorPrincipal:
    return CollectorPrincipal(
        client_id="cc_0123456789abcdef",
        tenant_id=TENANT,
        catalog_id=CATALOG,
        worker_id="cw_bench",
        instance_id="ci_bench_01",
        sources=frozenset({SOURCE}),
        scopes=frozenset(COLLECTOR_SCOPES),
        token_id="tok_bench",
        expires_at=datetime.now(UTC) + timedelta(hours=1),
    )


def submit(platform: Platform, pages: list[tuple[str, str | None, bytes]], round_: int) -> int:
    """Store every page as a capture (upload once per digest, a new record id per round); the jobs are queued."""
    intake, who = platform.intake, principal()
    for n, (page_id, url, data) in enumerate(pages):
        sha256 = hashlib.sha256(data).hexdigest()
        declared = intake.declare_upload(
            who, UploadDeclaration(sha256=sha256, size=len(data), media_type="text/html", source_id=SOURCE)
        )
        if declared.upload_id is not None:
            upload = intake.open_upload(who, declared.upload_id)
            body = intake.upload_body(upload, len(data))
            body.feed(data)
            intake.complete_upload(who, upload, body)
        record = f"{page_id}-r{round_}"
        intake.submit_capture(
            who,
            f"cw_bench:{record}",
            CaptureSubmission(
                schema_version="capture/1",
                source_id=SOURCE,
                native_record_id=record,
                # The capture contract wants RFC 3986: percent-encode what some real page URLs carry raw.
                url=quote(url, safe=":/?#[]@!$&'()*+,;=%") if url else f"https://bench.example/p/{record}",
                observed_at=T0 + timedelta(seconds=round_ * 1000 + n),
                artifacts=(ArtifactSelector(sha256=sha256),),
            ),
        )
    return len(pages)


def raw_parse(platform: Platform, pages: list[tuple[str, str | None, bytes]]) -> float:
    """Seconds for the selected adapter's ``extract`` on every page, in memory."""
    registry = platform.registry
    began = time.perf_counter()
    for n, (page_id, url, data) in enumerate(pages):
        view = CaptureView(f"cap_raw_{n}", SOURCE, "text/html", url, T0, None)
        adapter = registry.select_adapter(view)
        if adapter is not None:
            digest = hashlib.sha256(data).hexdigest()
            try:
                adapter.extract(view, (Artifact(f"art_{page_id}", digest, "text/html", data),))
            except Exception:
                continue
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=3, help="rounds: every page this many times")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--smoke", action="store_true", help="the 5 smallest pages, 1 round")
    args = parser.parse_args()
    dataset = load_dataset(PAGES)
    if args.smoke:  # the 5 smallest pages: the smoke run only checks that the script still works
        dataset = sorted(dataset, key=lambda p: p.path.stat().st_size)[:5]
    pages = [(p.page_id, p.url, read_page(p)) for p in dataset]
    rounds = 1 if args.smoke else args.copies
    admin_url, where = server_admin_url(args.database_url)
    print(f"{where}; {len(pages)} real pages (zyte_benchmark_dev), {rounds} rounds", flush=True)
    raw_s = 0.0
    stage_s = dict.fromkeys(STAGES, 0.0)
    taken = dict.fromkeys(STAGES, 0)
    outcomes: dict[str, int] = {}
    with scratch_platform(admin_url, "resolution") as platform:
        provision_catalog(
            platform.resolver_db,
            platform.control_db,
            CatalogSpec(TENANT, CATALOG, "Bench catalog", "automatic", (SourceSpec(SOURCE, "Bench web"),)),
        )
        raw_parse(platform, pages)  # warm-up, not counted: imports, parser caches
        for round_ in itertools.count():
            if round_ == rounds:
                break
            submit(platform, pages, round_)
            raw_s += raw_parse(platform, pages)
            for stage in STAGES:
                began = time.perf_counter()
                report = run_stage(platform, stage, Budget())
                stage_s[stage] += time.perf_counter() - began
                taken[stage] += report.taken
                if stage == "identity":
                    for name, count in report.counts.items():
                        outcomes[name] = outcomes.get(name, 0) + count
            print(f"  round {round_ + 1}: {taken['identity']:,} captures resolved", flush=True)
    captures = len(pages) * rounds
    staged_s = sum(stage_s.values())
    print(f"\n{captures:,} captures; identity outcomes: {outcomes}")
    print(f"{'path':<44} {'captures/s':>11} {'ms/capture':>11} {'share':>7}")
    print(
        f"{'raw parse: adapter.extract in memory':<44} {captures / raw_s:>11,.1f} {raw_s / captures * 1000:>11,.1f}"
    )
    for stage in STAGES:
        label = f"  stage {stage}"
        seconds = stage_s[stage]
        print(
            f"{label:<44} {captures / seconds:>11,.1f} {seconds / captures * 1000:>11,.1f}"
            f" {seconds / staged_s:>7.0%}"
        )
    print(
        f"{'staged: extract -> normalize -> identity':<44} {captures / staged_s:>11,.1f} {staged_s / captures * 1000:>11,.1f}"
    )
    print(f"\nstaged / raw parse: {staged_s / raw_s:.2f} (the platform's overhead over the adapter's parse)")
    if taken["resolution"] != captures or taken["identity"] != captures:
        print(f"note: stages took {taken} of {captures} captures")


if __name__ == "__main__":
    main()

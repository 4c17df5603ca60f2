"""Benchmarks that cannot rot: every script in bench/ runs with ``--smoke`` (a tiny size, a few seconds) as a
subprocess, against the test's PostgreSQL server where it needs one, and must exit 0 and print its ratio line.
Nothing is timed or compared here: a refactor that breaks a benchmark fails the suite, not the next person who
wants a number."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.postgres import CONTROL, MAIN

ROOT = Path(__file__).resolve().parents[3]
RATIO = r"\d+\.\d+"
DEADLINE_S = 240


@pytest.fixture(autouse=True)
def _scratch_from_templates(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A smoke run on the test server clones its scratch databases from the suite's migrated templates
    (bench_spine.clone_templates) instead of migrating new ones: same schema, a fraction of the time."""
    if "pg_admin_url" in request.fixturenames:
        templates: dict[str, str] = request.getfixturevalue("pg_templates")
        monkeypatch.setenv("BENCH_TEMPLATE_MAIN", templates[MAIN])
        monkeypatch.setenv("BENCH_TEMPLATE_CONTROL", templates[CONTROL])


def run_bench(script: str, *args: str) -> str:
    # The benchmarks take every setting from their arguments, never from a test's PRW_* environment.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRW_")}
    completed = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--smoke", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


def assert_lines(output: str, *patterns: str) -> None:
    for pattern in patterns:
        assert re.search(pattern, output, re.MULTILINE), f"no line matching {pattern!r} in:\n{output}"


def test_bench_object_store_smoke_runs_the_filesystem_and_the_s3_store() -> None:
    output = run_bench("bench_object_store.py", "--s3")
    assert_lines(
        output,
        rf"^filesystem\s+4096\s+20\s+\d+\s+\d+\s+{RATIO}\s+\d+\s+{RATIO}$",
        rf"^s3 on moto \(not real S3\)\s+4096\s+10\s+\d+\s+\d+\s+{RATIO}$",
    )


def test_bench_queue_smoke_runs_on_the_test_server(pg_admin_url: str) -> None:
    output = run_bench("bench_queue.py", "--database-url", pg_admin_url)
    assert_lines(output, rf"^end to end\s+[\d,]+\s+[\d,]+\s+{RATIO}$")


def test_bench_spine_smoke_runs_throughput_and_latency_on_the_test_server(pg_admin_url: str) -> None:
    output = run_bench("bench_spine.py", "--database-url", pg_admin_url)
    assert_lines(
        output,
        rf"^relay \+ apply, end to end\s+[\d,]+\s+[\d,]+\s+{RATIO}$",
        rf"^workers, idle-sleep 0\.2 s(\s+[\d,]+){{3}}\s+{RATIO}\s+{RATIO}$",
    )


def test_bench_resolution_smoke_runs_the_three_stages_beside_the_raw_parse(pg_admin_url: str) -> None:
    output = run_bench("bench_resolution.py", "--database-url", pg_admin_url)
    assert_lines(
        output,
        r"^  stage identity\s+[\d,.]+\s+[\d,.]+\s+\d+%$",
        rf"^staged / raw parse: {RATIO} ",
    )


def test_bench_intake_smoke_serves_prw_and_the_bare_baseline_on_the_test_server(pg_admin_url: str) -> None:
    output = run_bench("bench_intake.py", "--database-url", pg_admin_url)
    assert_lines(
        output,
        r"^capture alone\s+4\s+prw\s+\d+\s+[\d,.]+\s+[\d.]+\s+[\d.]+$",
        rf"^ratio capture alone, 1 collector\(s\) \(prw / bare ops/s\): {RATIO} ",
        rf"^ratio upload \+ capture round, 4 collector\(s\) \(prw / bare ops/s\): {RATIO} ",
    )


@pytest.mark.parametrize("load", ["wrk", "threads"])
def test_bench_product_api_smoke_serves_prw_and_the_bare_baseline_on_the_test_server(
    pg_admin_url: str, load: str
) -> None:
    if load == "wrk" and shutil.which("wrk") is None:
        pytest.skip("wrk is not installed (./run tests installs it on Debian: apt-get install wrk)")
    output = run_bench("bench_product_api.py", "--database-url", pg_admin_url, "--load", load)
    assert f"load from {'wrk' if load == 'wrk' else 'Python threads'}" in output
    assert_lines(
        output,
        r"^item detail\s+32\s+prw\s+\d+\s+[\d,.]+\s+[\d.]+\s+[\d.]+$",
        rf"^ratio item detail, 1 client\(s\) \(prw / bare rps\): {RATIO}  p99 ratio {RATIO}",
        rf"^ratio filtered list, 32 client\(s\) \(prw / bare rps\): {RATIO}  p99 ratio {RATIO}",
    )


def test_bench_cli_smoke_times_prw_beside_the_bare_interpreter() -> None:
    output = run_bench("bench_cli.py")
    assert_lines(
        output,
        rf"^ratio prw --help / bare interpreter: {RATIO} ",
        rf"^ratio prw extract DIR / 3 separate runs of prw extract: {RATIO} ",
    )


def test_bench_extraction_smoke_times_the_parse_the_eval_and_the_command() -> None:
    output = run_bench("bench_extraction.py")
    assert_lines(
        output,
        r"^3 pages of tests/fixtures/eval/zyte_benchmark_dev$",
        rf"^parse, pa_schemaorg@1\.0\.0 \(baseline\)\s+{RATIO}\s+{RATIO}\s+1\.00$",
        rf"^parse, pa_schemaorg@1\.1\.0\s+{RATIO}\s+{RATIO}\s+{RATIO}$",
        rf"^parse, pa_schemaorg@2\.0\.0\s+{RATIO}\s+{RATIO}\s+{RATIO}$",
        rf"^eval in process, vs 2\.0\.0 parse\s+-\s+{RATIO}\s+{RATIO}$",
        rf"^prw eval extraction, vs in process\s+-\s+{RATIO}\s+{RATIO}$",
    )


def test_bench_matching_smoke_times_the_command_and_its_phases_beside_bare_sql(pg_admin_url: str) -> None:
    output = run_bench("bench_matching.py", "--database-url", pg_admin_url)
    assert_lines(
        output,
        r"^abt_buy valid: 20 listings against \d+ catalog rows, on PostgreSQL at --database-url \(pg_trgm: ",
        rf"^load catalog \(1\)\s+{RATIO}\s+{RATIO}\s+{RATIO}$",
        rf"^identify \(1\)\s+{RATIO}\s+{RATIO}\s+{RATIO}$",
        rf"^prw eval matching vs in process \(1\)\s+{RATIO}\s+{RATIO}\s+{RATIO}$",
        rf"^ratio prw eval matching / bare SQL baseline \(fastest round\): {RATIO}$",
        r"^scores: recall@1 [\d.]+, recall@5 [\d.]+ of \d+ labelled matches; automatic mappings \d+ ",
    )


def test_bench_identity_scale_smoke_identifies_beside_the_bare_nearest_title_query(pg_admin_url: str) -> None:
    output = run_bench("bench_identity_scale.py", "--database-url", pg_admin_url)
    assert_lines(
        output,
        r"^PostgreSQL at --database-url: 3,000 items \(2,444 benchmark records\), 150 listings$",
        rf"^platform candidate path\s+{RATIO} listings/s\s+recall@1 [\d.]+\s+recall@5 [\d.]+$",
        rf"^bare nearest-5 query\s+{RATIO} listings/s\s+recall@1 [\d.]+\s+recall@5 [\d.]+$",
        rf"^ratio platform / bare\s+{RATIO}$",
        r"^automatic mappings\s+\d+ of 150 listings: \d+ right, \d+ wrong",
    )


def test_bench_apply_smoke_relays_and_applies_a_shuffled_stream_without_divergence(pg_admin_url: str) -> None:
    output = run_bench("bench_apply.py", "--database-url", pg_admin_url, "--drops", "0.01")
    assert_lines(
        output,
        rf"^relay \+ apply, end to end\s+[\d,]+\s+[\d,]+\s+{RATIO}$",
        r"^divergence from the serial state: 0 rows; contiguous position 2,000 of 2,000; parked 0$",
    )


def test_bench_decisions_smoke_runs_one_and_eight_streams_beside_the_bare_writes(pg_admin_url: str) -> None:
    output = run_bench("bench_decisions.py", "--database-url", pg_admin_url)
    assert_lines(
        output,
        r"^\s+8 prw\s+\d+\s+[\d.]+\s+[\d,]+$",
        rf"^ratio 1 stream\(s\) \(prw / bare decisions/s\): {RATIO} ",
        rf"^ratio 8 stream\(s\) \(prw / bare decisions/s\): {RATIO} ",
    )


def test_bench_replay_smoke_replays_real_pages_beside_fresh_resolution(pg_admin_url: str) -> None:
    output = run_bench("bench_replay.py", "--database-url", pg_admin_url)
    assert_lines(
        output,
        rf"^replay vs fresh resolution: [\d.]+ vs [\d.]+ captures/s, ratio {RATIO}$",
    )


def test_bench_pruner_smoke_runs_on_the_test_server(pg_admin_url: str) -> None:
    output = run_bench("bench_pruner.py", "--database-url", pg_admin_url)
    assert_lines(output, rf"^prune [\d,]+ rows\s+[\d,]+\s+[\d,]+\s+{RATIO}$")


def test_bench_rebuild_smoke_runs_on_the_test_server(pg_admin_url: str) -> None:
    output = run_bench("bench_rebuild.py", "--database-url", pg_admin_url)
    assert_lines(output, rf"^rebuild/COPY rows/s ratio: {RATIO}$", r"^generation 1 -> 2, loaded 1000 rows$")

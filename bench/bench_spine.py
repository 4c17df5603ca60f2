"""The spine's two benchmarks, each against a baseline measured in the same run.

    python bench/bench_spine.py [--decisions 10000] [--captures 50] [--database-url URL] [--smoke]

(a) Relay + apply throughput. A scratch database is seeded with ``--decisions`` committed automatic decisions
    (``CreateItemAndMap`` rule decisions through the decision service, AW-01). The seeded catalog's release policy
    is manual by default, so each decision commits three events (item created, listing observed, mapping
    created); ``--release-policy automatic`` adds a release.authorized event to each, which made seeding about
    half as fast and the whole run about twice as long. Then, in interleaved rounds, the relay
    (``Platform.relay.run_batch``, AW-03) publishes the round's events to the PostgreSQL accepted-change queue and
    marks them, the baseline INSERTs the same number of rows of the same JSON event bodies into a plain table
    (100 rows per transaction, like one relay batch), and the product consumer (``Platform.product_apply``,
    AW-04) applies the round. Events per second of each, per round and overall, and the ratio to the baseline:
    what the relay's read + publish + mark, and the consumer's receive + epoch/inbox/revision checks + projection
    + progress + ack, cost over writing the bytes once.

(b) Capture -> public latency with the ``prw worker all`` loops running (in-process threads: the same
    ``WorkerLoop`` the command runs, at three ``--idle-sleep`` settings). One capture at a time goes over HTTP
    through the intake app (token, upload, POST /v1/captures -> 202) as a distinct synthetic schema.org JSON-LD
    product page with a unique GTIN; the clock runs from the 202 until the product app's GET /v1/items/{id} shows the item (polled every 5 ms).
    Baselines in the same run, in rotating blocks with the workers stopped: the bare HTTP round trip of the
    capture submit, and one synchronous ``runtime.drain`` pass (resolve, relay, apply back to back in the
    caller, until a round finds nothing). Latency / drain is the cost of running the stages as independent
    polling loops that hand over through queues, against calling them in sequence.

Scratch databases (on a throwaway embedded server, or on the server of ``--database-url``) are dropped at the
end. Absolute numbers depend on the machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import atexit
import itertools
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import psycopg
from psycopg import sql

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_cli.collector import Collector
from prw_platform.auth import ClientSpec, create_client
from prw_platform.auth.scopes import COLLECTOR_SCOPES
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection, Database
from prw_platform.db.urls import with_database
from prw_platform.pipeline import RELAY, default_stages
from prw_platform.plugins.types import NormalizedAttribute
from prw_platform.product.scopes import project_catalog
from prw_platform.resolver.catalogs import CatalogSpec, ReleasePolicy, SourceSpec, provision_catalog
from prw_platform.resolver.decisions import CreateItemAndMap, ItemFacts, ListingObservation, decide
from prw_platform.runtime import WorkerLoop, drain, stage_rounds

TENANT, CATALOG, SOURCE = "ten_bench", "cat_bench", "src_bench_web"
WORKER, INSTANCE = "cw_bench", "ci_bench_01"
BASELINE_TABLE = (
    "CREATE TABLE public.bench_event (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body json)"
)
BATCH = 100
POLL_S = 0.005


def gtin13(n: int) -> str:
    """A valid GTIN-13 (GS1 mod-10 check digit) for ``n``, in a prefix no real product uses (bench pages only)."""
    body = f"200{n:09d}"
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(body)))
    return body + str((10 - total % 10) % 10)


# --- scratch databases --------------------------------------------------------------------------------------


def server_admin_url(database_url: str | None) -> tuple[str, str]:
    if database_url:
        return with_database(database_url, "postgres"), "PostgreSQL at --database-url"
    from prw_platform.db.embedded import EmbeddedPostgres

    root = Path(tempfile.mkdtemp(prefix="prw-bench-spine-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)  # runs after the server's own atexit stop
    return EmbeddedPostgres(root / "pg", keep_running=False).start(), "embedded PostgreSQL (pgserver)"


def clone_templates(admin_url: str, name: str) -> None:
    """Create the scratch pair from migrated template databases when the caller names them (the test suite's
    smoke runs: ``BENCH_TEMPLATE_MAIN`` / ``BENCH_TEMPLATE_CONTROL``), instead of migrating two new databases;
    ``bootstrap(migrate=True)`` then finds them at head. Without them nothing happens here."""
    for db, kind in ((name, "MAIN"), (f"{name}_control", "CONTROL")):
        template = os.environ.get(f"BENCH_TEMPLATE_{kind}")
        if template:
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                        sql.Identifier(db), sql.Identifier(template)
                    )
                )


@contextmanager
def scratch_settings(admin_url: str, data_dir: Path, label: str) -> Iterator[Settings]:
    """Settings of a migrated main + control database pair of its own (cloned from templates when the caller names
    them, ``clone_templates``); both dropped afterwards."""
    name = f"prw_bench_{label}_{uuid.uuid4().hex[:8]}"
    settings = Settings(
        database_url=with_database(admin_url, name),
        control_database_url=with_database(admin_url, f"{name}_control"),
        data_dir=data_dir,
    )
    try:
        clone_templates(admin_url, name)
        bootstrap(settings, migrate=True).close()
        yield settings
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            for db in (name, f"{name}_control"):
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(db)))


@contextmanager
def scratch_platform(admin_url: str, label: str) -> Iterator[Platform]:
    """A scratch database pair (``scratch_settings``) and a temporary data dir, its platform; all dropped after."""
    data_dir = Path(tempfile.mkdtemp(prefix=f"prw-bench-{label}-"))
    try:
        with scratch_settings(admin_url, data_dir, label) as settings, bootstrap(settings) as platform:
            yield platform
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def provision(platform: Platform, release_policy: ReleasePolicy = "automatic") -> StreamKey:
    provisioned = provision_catalog(
        platform.resolver_db,
        platform.control_db,
        CatalogSpec(TENANT, CATALOG, "Bench catalog", release_policy, (SourceSpec(SOURCE, "Bench web"),)),
    )
    project_catalog(platform.product_db, TENANT, CATALOG, provisioned.stream.history_epoch)
    return provisioned.stream


# --- (a) relay + apply throughput -----------------------------------------------------------------------------


def create_command(n: int, observed_at: datetime, source: str = SOURCE) -> CreateItemAndMap:
    """An automatic create-item decision, built like tests/integration/resolver/decision_builders.py builds one;
    ``source`` is a source of the decision's catalog (``n`` unique in the tenant)."""
    return CreateItemAndMap(
        item=ItemFacts(
            profile="np_storage@2",
            title=f"Strata P5 {n} TB",
            brand="Corvana",
            gtin=gtin13(n).zfill(14),
            mpn=f"CVN-SP5-{n}T0",
            attributes=(
                NormalizedAttribute("storage:capacity", Decimal(n * 1000), 1, unit="GB"),
                NormalizedAttribute("storage:heatsink", False, 1),
            ),
        ),
        listing=ListingObservation(
            source_id=source,
            observed_at=observed_at,
            capture_id=f"cap_bench_{n:06d}",
            url=f"https://bench.example/p/{n}",
            native_record_id=f"rec_{n}",
            title=f"Strata P5 SSD {n}",
            price=Decimal("129.00"),
            currency="EUR",
            availability="in_stock",
        ),
        actor="rule:create_on_required_identifiers@1",
        rationale="no item has these identifiers; GTIN and brand + MPN present",
        idempotency_key=f"job:{source}:cap_bench_{n:06d}:identity:1",
    )


def seed_decisions(platform: Platform, stream: StreamKey, n: int) -> tuple[float, int]:
    """Commit ``n`` automatic decisions; (seconds, events committed)."""
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    began = lap = time.perf_counter()
    events = 0
    for i in range(n):
        events += len(
            decide(create_command(i, t0 + timedelta(seconds=i)), platform.resolver_db, stream).events
        )
        if (i + 1) % 1000 == 0:
            now = time.perf_counter()
            print(
                f"  seeded {i + 1:,} decisions ({events:,} events): {1000 / (now - lap):,.0f}/s", flush=True
            )
            lap = now
    return time.perf_counter() - began, events


def outbox_bodies(owner: Database) -> list[str]:
    return [
        str(r["body"])
        for r in owner.run(
            lambda conn: conn.execute(
                "SELECT body::text AS body FROM resolver.outbox ORDER BY position"
            ).fetchall()
        )
    ]


def run_relay(platform: Platform, count: int) -> None:
    published = 0
    while published < count:
        result = platform.relay.run_batch(min(BATCH, count - published))
        if result.drained:
            raise RuntimeError("the outbox ran dry before the round was relayed")
        published += result.published


def run_apply(platform: Platform, count: int, parked: list[int]) -> None:
    received = 0
    while received < count:
        report = platform.product_apply.run_batch()
        if report.received == 0:
            raise RuntimeError("the accepted-change queue ran dry before the round was applied")
        if report.retried or report.dead_lettered or report.ignored_duplicate:
            raise RuntimeError(f"unexpected apply outcome: {report}")
        # A delivery that overtook its dependency is parked and released by it (AW-04): normal, counted.
        parked.append(report.parked)
        received += report.received


def run_baseline(owner: Database, bodies: list[str]) -> None:
    for start in range(0, len(bodies), BATCH):
        rows = [(b,) for b in bodies[start : start + BATCH]]

        def insert(conn: Connection, rows: list[tuple[str]] = rows) -> None:
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO public.bench_event (body) VALUES (%s::json)", rows)

        owner.run(insert)


def throughput(admin_url: str, decisions: int, round_size: int, release_policy: ReleasePolicy) -> None:
    with (
        scratch_platform(admin_url, "throughput") as platform,
        # The owner (the server's superuser): it reads every stream's outbox and owns the baseline table.
        Database(platform.urls.main, role=None, max_size=2, application_name="prw-bench-owner") as owner,
    ):
        stream = provision(platform, release_policy)
        print(
            f"(a) seeding {decisions:,} automatic (rule) decisions, release policy {release_policy}",
            flush=True,
        )
        seed_seconds, events = seed_decisions(platform, stream, decisions)
        bodies = outbox_bodies(owner)
        assert len(bodies) == events
        owner.run(lambda conn: conn.execute(BASELINE_TABLE))
        elapsed = {"relay": 0.0, "apply": 0.0, "baseline": 0.0}
        parked: list[int] = []
        print(f"(a) relay, baseline and apply in rounds of {round_size:,} events", flush=True)
        for index, start in enumerate(range(0, events, round_size)):
            count = min(round_size, events - start)
            before = dict(elapsed)
            # The relay and the baseline take turns going first, so drift on a shared machine hits both alike.
            writers = ["relay", "baseline"]
            for name in writers[index % 2 :] + writers[: index % 2]:
                began = time.perf_counter()
                if name == "relay":
                    run_relay(platform, count)
                else:
                    run_baseline(owner, bodies[start : start + count])
                elapsed[name] += time.perf_counter() - began
            began = time.perf_counter()
            run_apply(platform, count, parked)
            elapsed["apply"] += time.perf_counter() - began
            print(
                f"  positions {start + 1:,}-{start + count:,}: "
                + ", ".join(f"{name} {count / (elapsed[name] - before[name]):,.0f}/s" for name in elapsed),
                flush=True,
            )
        rate = {name: events / seconds for name, seconds in elapsed.items()}
        end_to_end = 1 / (1 / rate["relay"] + 1 / rate["apply"])
        print(
            f"\n(a) {decisions:,} decisions -> {events:,} events ({events / decisions:.0f} per decision);"
            f" seeding through the decision service: {decisions / seed_seconds:,.0f} decisions/s"
            f" = {events / seed_seconds:,.0f} events/s (not interleaved); {sum(parked):,} deliveries parked and"
            " released on the way"
        )
        print(f"{'phase':<44} {'events/s':>10} {'baseline/s':>11} {'ratio':>7}")
        for label, value in (
            ("relay: read, publish to queue, mark (AW-03)", rate["relay"]),
            ("apply: receive, project, progress, ack (AW-04)", rate["apply"]),
            ("relay + apply, end to end", end_to_end),
        ):
            print(f"{label:<44} {value:>10,.0f} {rate['baseline']:>11,.0f} {value / rate['baseline']:>7.3f}")


# --- (b) capture -> public latency ----------------------------------------------------------------------------


def product_page(run: str, n: int) -> tuple[bytes, str]:
    """A schema.org JSON-LD product page with a unique EAN-13 (a strong identifier: the resolver creates an item);
    returns the page and the GTIN-14 the profile stores and the product API filters on."""
    gtin = gtin13(n)
    product = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": f"Bench desk lamp {run}-{n}",
        "brand": {"@type": "Brand", "name": "Benchworks"},
        "gtin13": gtin,
        "sku": f"BW-{run}-{n}",
        "offers": {
            "@type": "Offer",
            "price": f"{20 + n % 50}.99",
            "priceCurrency": "EUR",
            "availability": "https://schema.org/InStock",
        },
    }
    html = f'<html><head><script type="application/ld+json">{json.dumps(product)}</script></head></html>'
    return html.encode(), gtin.zfill(14)


@dataclass
class Samples:
    submit: list[float]
    public: list[float]


def submit(collector: Collector, run: str, n: int) -> tuple[float, str]:
    data, gtin = product_page(run, n)
    began = time.perf_counter()
    submitted = collector.submit(
        source_id=SOURCE,
        native_record_id=f"bench-{run}-{n}",
        observed_at=f"2026-11-01T08:00:{n % 60:02d}Z",
        data=data,
        url=f"https://bench.example/lamp/{run}-{n}",
    )
    if submitted.status != 202:
        raise RuntimeError(f"capture {n}: HTTP {submitted.status}")
    return time.perf_counter() - began, gtin


def wait_public(product: httpx.Client, gtin: str, deadline_s: float = 30.0) -> None:
    end = time.monotonic() + deadline_s
    pause = threading.Event()
    while time.monotonic() < end:
        found = product.get("/v1/items", params={"gtin": gtin}).json()["items"]
        if found and product.get(f"/v1/items/{found[0]['item']}").status_code == 200:
            return
        pause.wait(POLL_S)
    raise RuntimeError(f"GTIN {gtin} did not become public within {deadline_s} s")


def latency(admin_url: str, captures: int, block: int, idle_sleeps: tuple[float, ...]) -> None:
    with scratch_platform(admin_url, "latency") as platform:
        provision(platform)
        client = create_client(
            platform.resolver_db, ClientSpec(TENANT, CATALOG, WORKER, INSTANCE, (SOURCE,), COLLECTOR_SCOPES)
        )
        intake_app = compose.intake_app(platform)
        product_app = compose.product_app(platform, TENANT, CATALOG)
        run = uuid.uuid4().hex[:6]
        numbers = itertools.count(1)
        variants = ["sync drain", *(f"workers, idle-sleep {s:g} s" for s in idle_sleeps)]
        samples = {v: Samples([], []) for v in variants}
        stages = stage_rounds(platform, platform.stages.names(pipeline_only=True))
        with (
            BackgroundServer(intake_app) as intake,
            BackgroundServer(product_app) as product_server,
            Collector(intake.url, client.client_id, client.client_secret, worker_id=WORKER) as collector,
            httpx.Client(base_url=product_server.url, timeout=10) as product,
        ):
            # Warm up: token, connection pools, plugin registry, adapter imports.
            _, gtin = submit(collector, run, next(numbers))
            drain(platform)
            wait_public(product, gtin)
            print(
                f"(b) {captures} captures per variant, one at a time, in rotating blocks of {block}",
                flush=True,
            )
            for index in range(0, captures, block):
                rotation = index // block % len(variants)
                for variant in variants[rotation:] + variants[:rotation]:
                    count = min(block, captures - index)
                    if variant == "sync drain":
                        for _ in range(count):
                            took, gtin = submit(collector, run, next(numbers))
                            began = time.perf_counter()
                            drain(platform)
                            samples[variant].public.append(time.perf_counter() - began)
                            samples[variant].submit.append(took)
                            wait_public(product, gtin, deadline_s=0.5)  # drained means public
                        continue
                    sleep = idle_sleeps[variants.index(variant) - 1]
                    loop = WorkerLoop(stages, idle_sleep=sleep)
                    workers = threading.Thread(target=loop.run)
                    workers.start()
                    try:
                        for _ in range(count):
                            took, gtin = submit(collector, run, next(numbers))
                            began = time.perf_counter()
                            wait_public(product, gtin)
                            samples[variant].public.append(time.perf_counter() - began)
                            samples[variant].submit.append(took)
                    finally:
                        loop.stop.set()
                        workers.join()
        submit_p50 = statistics.median(s for v in samples.values() for s in v.submit)
        drain_p50 = statistics.median(samples["sync drain"].public)
        print(
            f"\n(b) baseline: capture submit over HTTP (token cached; declare + PUT + POST /v1/captures)"
            f" p50 {submit_p50 * 1000:,.0f} ms; one synchronous drain pass p50 {drain_p50 * 1000:,.0f} ms"
        )
        print(
            f"{'202 -> GET /v1/items/{id} shows it':<36} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
            f" {'p50/drain':>10} {'p50/submit':>11}"
        )
        for variant, sample in samples.items():
            p50, p95 = statistics.median(sample.public), percentile(sample.public, 95)
            print(
                f"{variant:<36} {p50 * 1000:>8,.0f} {p95 * 1000:>8,.0f} {max(sample.public) * 1000:>8,.0f}"
                f" {p50 / drain_p50:>10.2f} {p50 / submit_p50:>11.2f}"
            )


def percentile(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--decisions", type=int, default=10_000, help="automatic decisions to seed (default 10000)"
    )
    parser.add_argument(
        "--round", type=int, default=4_000, dest="round_size", help="events per interleaved round"
    )
    parser.add_argument("--captures", type=int, default=50, help="captures per latency variant (default 50)")
    parser.add_argument(
        "--block", type=int, default=10, help="captures per block before rotating the variant"
    )
    parser.add_argument(
        "--release-policy",
        choices=("automatic", "manual"),
        default="manual",
        help="of the seeded catalog (default manual: item, listing and mapping events; automatic adds a"
        " release.authorized event to every decision and takes about twice as long)",
    )
    parser.add_argument("--database-url", help="a PostgreSQL server to create the scratch databases on")
    parser.add_argument("--skip", choices=("throughput", "latency"), help="run only the other benchmark")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that checks the benchmark works (20 decisions, 1 capture per variant)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.decisions, args.round_size, args.captures, args.block = 20, 30, 1, 1
    admin_url, where = server_admin_url(args.database_url)
    with psycopg.connect(admin_url) as conn:
        version = conn.execute("SHOW server_version").fetchone()
    print(f"{where}, server {version[0] if version else '?'}")
    if args.skip != "throughput":
        throughput(admin_url, args.decisions, args.round_size, args.release_policy)
    if args.skip != "latency":
        latency(admin_url, args.captures, args.block, (1.0, default_stages()[RELAY].idle_sleep, 0.05))


if __name__ == "__main__":
    main()

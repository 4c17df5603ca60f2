"""Public reads per second over HTTP through ``prw serve product`` (issue 9, if_product_query), against a bare
FastAPI + psycopg server reading the same rows, measured in the same run.

    python bench/bench_product_api.py [--requests 3000] [--items 2000] [--workers 2] [--database-url URL] [--smoke]

Two servers run side by side on the same PostgreSQL server, each with ``--workers`` uvicorn worker processes:

- ours: ``prw serve product --workers N`` (the command operators run) on a scratch, migrated database pair whose
  catalog has ``--items`` released items (two public listings each), written through the product service's own
  release writer (``public_store``), as a release applied by the consumer leaves them;
- the baseline: ``bare_product_app.py`` under ``uvicorn --workers N``: one primary-key SELECT of the same
  ``product.public_item`` row, or one filtered keyset SELECT of a page, returning the stored JSON.

Two measurements, at 1, 8 and 32 concurrent clients (each a thread with its own keep-alive HTTP connection), in
``--blocks`` blocks that alternate which server goes first:

- item detail: ``GET /v1/items/{id}`` of a random released item (with its listings and the release's ETag)
  against ``GET /items/{id}``;
- filtered list: ``GET /v1/items?brand=Lumen&attr[storage:capacity]=1 TB&limit=20`` against the bare page query
  (brand and stored capacity equal).

Per row: requests, requests per second (all clients together, wall clock), p50 and p99 latency. The ratio lines
divide our requests per second by the baseline's, and our p99 by its p99. Scratch databases are dropped at the
end. Absolute numbers depend on the machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psycopg
from bench_intake import (
    Sample,
    Server,
    percentile,
    scratch_settings,
    serve_bare,
    serve_prw,
    server_admin_url,
)
from psycopg import sql

from prw_platform.bootstrap import bootstrap
from prw_platform.config import Settings
from prw_platform.db.database import Connection
from prw_platform.product import public_store
from prw_platform.product.public_rows import PublicItem, PublicListing
from prw_platform.product.scopes import find_scope, project_catalog

TENANT, CATALOG = "ten_bench", "cat_bench"
DETAIL, LIST = "item detail", "filtered list"
CONCURRENCY = (1, 8, 32)
BRANDS = ("Lumen", "Orbit", "Halden", "Krait")
CAPACITIES_GB = (256, 512, 1000, 2000, 4000)


def release_catalog(settings: Settings, items: int) -> list[str]:
    """``items`` released items with two listings each, in one release; returns their ids."""
    ids = [f"itm_bench_{n:06d}" for n in range(items)]
    with bootstrap(settings) as platform:
        db = platform.product_db
        project_catalog(db, TENANT, CATALOG, f"hep_{TENANT}_{CATALOG}_1")

        def work(conn: Connection) -> None:
            scope = find_scope(conn, TENANT, CATALOG)
            assert scope is not None
            for n, item_id in enumerate(ids):
                brand, capacity = BRANDS[n % len(BRANDS)], CAPACITIES_GB[n % len(CAPACITIES_GB)]
                fields = {
                    "item": item_id,
                    "profile": "np_storage@1",
                    "title": f"{brand} drive {capacity} GB #{n}",
                    "brand": brand,
                    "identifiers": {"gtin": f"{4006381000000 + n:014d}", "mpn": f"B-{n}"},
                    "attributes": {
                        "storage:capacity": {"value": str(capacity), "unit": "GB", "definition_version": 1},
                        "storage:interface": {"value": "nvme", "definition_version": 1},
                    },
                }
                public_store.publish_item(conn, scope, PublicItem(item_id, 1, 1, fields))
                for shop in ("a", "b"):
                    listing_id = f"lst_bench_{shop}_{n:06d}"
                    listing = {
                        "listing": listing_id,
                        "source_id": f"src_shop_{shop}",
                        "url": f"https://shop-{shop}.example/p/{n}",
                        "title": fields["title"],
                        "price": "89.90",
                        "currency": "EUR",
                        "availability": "in_stock",
                        "observed_at": "2026-11-30T03:31:55+00:00",
                    }
                    public_store.publish_listing(
                        conn,
                        scope,
                        PublicListing(listing_id, item_id, 1, listing),
                        mapping_revision=1,
                        listing_revision=1,
                    )
            public_store.point_release(
                conn,
                scope,
                release_id="rel_bench_1",
                publication_revision=1,
                event_id="evt_bench",
                position=1,
            )

        db.run(work, tenant_id=TENANT)
    analyze_public_tables(str(settings.database_url))
    return ids


def analyze_public_tables(owner_url: str) -> None:
    """Statistics for the released rows, as autovacuum gathers within a minute or two of a release in any
    deployment (its naptime is 60 s): a run of this length would otherwise measure the first minutes' plans
    made without them. As the tables' owner: for ``product_app`` (the service's role) ANALYZE only warns and
    skips, which is what an earlier version of this script did, and the item detail then read its listings
    through the primary key, filtering the whole release (4 ms of backend CPU per request instead of 0.4)."""
    tables = ("public_item", "public_listing", "public_item_pictures", "release_pointer", "projected_scope")
    with psycopg.connect(owner_url, autocommit=True) as conn:
        for table in tables:
            conn.execute(sql.SQL("ANALYZE product.{}").format(sql.Identifier(table)))
        analyzed = conn.execute(
            "SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = 'product' AND relname = ANY(%s)"
            " AND last_analyze IS NOT NULL",
            (list(tables),),
        ).fetchone()
    if analyzed is None or analyzed[0] != len(tables):
        raise SystemExit(
            f"ANALYZE left {len(tables) - (analyzed[0] if analyzed else 0)} table(s) without statistics"
        )


def paths(server: str, measure: str, ids: list[str], count: int, rng: random.Random) -> list[str]:
    if measure == LIST:
        if server == "prw":
            return ["/v1/items?brand=Lumen&attr[storage:capacity]=1 TB&limit=20"] * count
        return ["/items?brand=Lumen&capacity=1000"] * count
    prefix = "/v1/items/" if server == "prw" else "/items/"
    return [prefix + rng.choice(ids) for _ in range(count)]


def run_block(clients: list[httpx.Client], work: list[list[str]]) -> Sample:
    """Every client in its own thread, started together; wall clock from the start to the last one done."""
    latencies: list[list[float]] = [[] for _ in clients]
    errors: list[BaseException] = []
    go = threading.Barrier(len(clients) + 1)

    def run(index: int) -> None:
        go.wait()
        try:
            for path in work[index]:
                began = time.perf_counter()
                response = clients[index].get(path)
                latencies[index].append(time.perf_counter() - began)
                if response.status_code != 200:
                    raise RuntimeError(f"GET {path}: {response.status_code} {response.text[:300]}")
        except BaseException as error:  # reported after the block
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(clients))]
    for thread in threads:
        thread.start()
    go.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    if errors:
        raise errors[0]
    flat = [value for per in latencies for value in per]
    return Sample(len(flat), seconds, flat)


def measure_all(
    servers: dict[str, Server], ids: list[str], requests: int, blocks: int
) -> dict[tuple[str, int, str], Sample]:
    results: dict[tuple[str, int, str], Sample] = {}
    rng = random.Random(9)
    for width in CONCURRENCY:
        pools = {
            name: [httpx.Client(base_url=s.url, timeout=30) for _ in range(width)]
            for name, s in servers.items()
        }
        try:
            for name, clients in pools.items():  # warm up: connections, pools, imports in every worker
                for measure in (DETAIL, LIST):
                    run_block(clients, [paths(name, measure, ids, 5, rng) for _ in clients])
            for measure in (DETAIL, LIST):
                per_client = max(1, requests // blocks // width)
                for block in range(blocks):
                    order = list(pools) if block % 2 == 0 else list(pools)[::-1]
                    for name in order:
                        work = [paths(name, measure, ids, per_client, rng) for _ in pools[name]]
                        sample = run_block(pools[name], work)
                        total = results.setdefault((measure, width, name), Sample())
                        total.ops += sample.ops
                        total.seconds += sample.seconds
                        total.latencies += sample.latencies
                        print(
                            f"  {measure}, {width} client(s), block {block + 1}, {name}: {sample.rate:,.0f}/s",
                            flush=True,
                        )
        finally:
            for clients in pools.values():
                for client in clients:
                    client.close()
    return results


def report(results: dict[tuple[str, int, str], Sample]) -> None:
    print(
        f"\n{'measure':<14} {'clients':>7} {'server':<6} {'requests':>8} {'rps':>8} {'p50 ms':>8} {'p99 ms':>8}"
    )
    for measure in (DETAIL, LIST):
        for width in CONCURRENCY:
            for server in ("prw", "bare"):
                s = results[(measure, width, server)]
                print(
                    f"{measure:<14} {width:>7} {server:<6} {s.ops:>8} {s.rate:>8,.1f}"
                    f" {statistics.median(s.latencies) * 1000:>8.1f} {percentile(s.latencies, 99) * 1000:>8.1f}"
                )
    print()
    for measure in (DETAIL, LIST):
        for width in CONCURRENCY:
            ours, bare = results[(measure, width, "prw")], results[(measure, width, "bare")]
            print(
                f"ratio {measure}, {width} client(s) (prw / bare rps): {ours.rate / bare.rate:.2f}"
                f"  p99 ratio {percentile(ours.latencies, 99) / percentile(bare.latencies, 99):.2f}"
                f"  (p99 {percentile(ours.latencies, 99) * 1000:.1f} vs {percentile(bare.latencies, 99) * 1000:.1f} ms)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--requests", type=int, default=3000, help="requests per measurement, width and server"
    )
    parser.add_argument("--items", type=int, default=2000, help="released items in the catalog")
    parser.add_argument(
        "--blocks", type=int, default=2, help="alternating blocks per measurement (default 2)"
    )
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes of each server")
    parser.add_argument("--database-url", help="a PostgreSQL server to create the scratch databases on")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that checks the benchmark works (64 requests, 1 block)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.items, args.blocks, args.workers = 64, 50, 1, 1
    admin_url, where = server_admin_url(args.database_url)
    with psycopg.connect(admin_url) as conn:
        version = conn.execute("SHOW server_version").fetchone()
    print(f"{where}, server {version[0] if version else '?'}; {args.workers} worker processes per server")
    work = Path(tempfile.mkdtemp(prefix="prw-bench-product-"))
    try:
        with scratch_settings(admin_url, work) as settings:
            ids = release_catalog(settings, args.items)
            env = {"PRW_PRODUCT_TENANT_ID": TENANT, "PRW_PRODUCT_CATALOG_ID": CATALOG}
            ours = serve_prw(settings, args.workers, work, "product", env)
            os.environ |= {"BENCH_TENANT_ID": TENANT, "BENCH_CATALOG_ID": CATALOG}  # serve_bare passes it on
            bare = serve_bare(str(settings.database_url), args.workers, work, "bare_product_app")
            try:
                ours.wait_ready("/readyz")
                bare.wait_ready("/healthz")
                results = measure_all({"prw": ours, "bare": bare}, ids, args.requests, args.blocks)
            finally:
                ours.stop()
                bare.stop()
        report(results)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

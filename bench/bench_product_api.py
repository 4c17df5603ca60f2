"""Public reads per second over HTTP through ``prw serve product`` (if_product_query), against a bare
FastAPI + psycopg server reading the same rows, measured in the same run.

    python bench/bench_product_api.py [--load wrk|threads] [--seconds 5] [--requests 3000] [--items 2000]
                                      [--workers 2] [--database-url URL] [--smoke]

Two servers run side by side on the same PostgreSQL server, each with ``--workers`` uvicorn worker processes:

- ours: ``prw serve product --workers N`` (the command operators run) on a scratch, migrated database pair whose
  catalog has ``--items`` released items (two public listings each), written through the product service's own
  release writer (``public_store``), as a release applied by the consumer leaves them;
- the baseline: ``bare_product_app.py`` under ``uvicorn --workers N``: one primary-key SELECT of the same
  ``product.public_item`` row, or one filtered keyset SELECT of a page, returning the stored JSON.

Two measurements, at 1, 8 and 32 concurrent clients (each with its own keep-alive HTTP connection), in ``--blocks``
blocks that alternate which server goes first. The load comes from one of two generators (``--load``):

- ``wrk`` (the default when ``wrk`` is on PATH; Debian: ``apt-get install wrk``): a C load generator (two
  threads, ``--seconds`` per block) whose Lua script picks each request's path at random from the same list; it
  leaves the two cores to the servers and PostgreSQL, where Python client threads cost as much CPU per request as
  the bare server's own (bench/README.md). A measurement's p50 and p99 are the means of its blocks'
  (wrk reports percentiles per run);
- ``threads``: one Python thread per client (httpx), ``--requests`` per measurement; every latency is kept, and
  the percentiles are those of all of them.

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
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

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
from prw_platform.product.public import store as public_store
from prw_platform.product.public.rows import PublicItem, PublicListing
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
    through the primary key, filtering the whole release (bench/README.md, "Statistics, and
    one statement per read")."""
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


@dataclass
class Measured:
    """One measurement (measure, clients, server) over its blocks."""

    requests: int = 0
    seconds: float = 0.0
    #: Every latency (``threads``), in seconds.
    latencies: list[float] = field(default_factory=list)
    #: Per block, wrk's p50 and p99 (``wrk``), in seconds.
    block_p50: list[float] = field(default_factory=list)
    block_p99: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def p50(self) -> float:
        return statistics.mean(self.block_p50) if self.block_p50 else statistics.median(self.latencies)

    def p99(self) -> float:
        return statistics.mean(self.block_p99) if self.block_p99 else percentile(self.latencies, 99)

    def add(self, block: Measured) -> None:
        self.requests += block.requests
        self.seconds += block.seconds
        self.latencies += block.latencies
        self.block_p50 += block.block_p50
        self.block_p99 += block.block_p99


#: wrk's script: each request's path drawn from a file of paths (one per line, the same list the threads use), a
#: seed per wrk thread, and one JSON line of results when the run is done.
WRK_SCRIPT = """
local paths = {}
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("seed", threads)
end
function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  math.randomseed(seed or 1)
end
function request()
  return wrk.format("GET", paths[math.random(#paths)])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "socket_errors": %d, "status_errors": %d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
"""


class WrkLoad:
    """``clients`` keep-alive connections from wrk for ``seconds``, paths drawn at random from a list."""

    def __init__(self, work: Path, seconds: float) -> None:
        self.work, self.seconds = work, seconds
        self.script = work / "paths.lua"
        self.script.write_text(WRK_SCRIPT)

    def run(
        self, server: Server, path_list: list[str], clients: int, seconds: float | None = None
    ) -> Measured:
        listed = self.work / "paths.txt"
        # wrk sends the path as written: percent-encoded here, as an HTTP client would.
        listed.write_text("\n".join(quote(path, safe="/?&=:[]") for path in path_list) + "\n")
        duration = max(1, round(seconds if seconds is not None else self.seconds))
        completed = subprocess.run(
            [
                "wrk",
                f"--threads={min(clients, 2)}",
                f"--connections={clients}",
                f"--duration={duration}s",
                "--timeout=30s",
                f"--script={self.script}",
                server.url,
                "--",
                str(listed),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=duration + 60,
        )
        if completed.returncode != 0:
            raise RuntimeError(f"wrk failed ({completed.returncode}): {completed.stderr or completed.stdout}")
        result = json.loads(completed.stdout.strip().splitlines()[-1])
        if result["socket_errors"] or result["status_errors"]:
            raise RuntimeError(f"wrk against {server.url}: errors in {completed.stdout}")
        return Measured(
            result["requests"],
            result["duration_us"] / 1e6,
            block_p50=[result["p50_us"] / 1e6],
            block_p99=[result["p99_us"] / 1e6],
        )


def measure_all(
    servers: dict[str, Server], ids: list[str], requests: int, blocks: int, wrk: WrkLoad | None = None
) -> dict[tuple[str, int, str], Measured]:
    """Every measure at every width on every server, in ``blocks`` blocks alternating the servers' order."""
    results: dict[tuple[str, int, str], Measured] = {}
    rng = random.Random(9)
    for width in CONCURRENCY:
        run = (
            _wrk_blocks(wrk, servers, ids, rng)
            if wrk
            else _thread_blocks(servers, ids, requests, blocks, rng)
        )
        with run as measure_block:
            for measure in (DETAIL, LIST):
                for block in range(blocks):
                    order = list(servers) if block % 2 == 0 else list(servers)[::-1]
                    for name in order:
                        sample = measure_block(name, measure, width)
                        results.setdefault((measure, width, name), Measured()).add(sample)
                        print(
                            f"  {measure}, {width} client(s), block {block + 1}, {name}: {sample.rate:,.0f}/s",
                            flush=True,
                        )
    return results


class _wrk_blocks:
    def __init__(self, wrk: WrkLoad, servers: dict[str, Server], ids: list[str], rng: random.Random) -> None:
        self.wrk, self.servers, self.ids, self.rng = wrk, servers, ids, rng

    def __enter__(self) -> Callable[[str, str, int], Measured]:
        return self.block

    def __exit__(self, *exc: object) -> None:
        return None

    def block(self, name: str, measure: str, width: int) -> Measured:
        path_list = paths(name, measure, self.ids, 1000, self.rng)
        self.wrk.run(self.servers[name], path_list, width, seconds=1)  # warm up: connections, pools, workers
        return self.wrk.run(self.servers[name], path_list, width)


class _thread_blocks:
    def __init__(
        self, servers: dict[str, Server], ids: list[str], requests: int, blocks: int, rng: random.Random
    ) -> None:
        self.servers, self.ids, self.requests, self.blocks, self.rng = servers, ids, requests, blocks, rng
        self.pools: dict[str, list[httpx.Client]] = {}

    def __enter__(self) -> Callable[[str, str, int], Measured]:
        return self.block

    def __exit__(self, *exc: object) -> None:
        for clients in self.pools.values():
            for client in clients:
                client.close()

    def block(self, name: str, measure: str, width: int) -> Measured:
        if name not in self.pools:
            self.pools[name] = [
                httpx.Client(base_url=self.servers[name].url, timeout=30) for _ in range(width)
            ]
            for warm in (DETAIL, LIST):  # warm up: connections, pools, imports in every worker
                run_block(self.pools[name], [paths(name, warm, self.ids, 5, self.rng) for _ in range(width)])
        per_client = max(1, self.requests // self.blocks // width)
        clients = self.pools[name]
        sample = run_block(clients, [paths(name, measure, self.ids, per_client, self.rng) for _ in clients])
        return Measured(sample.ops, sample.seconds, sample.latencies)


def report(results: dict[tuple[str, int, str], Measured]) -> None:
    print(
        f"\n{'measure':<14} {'clients':>7} {'server':<6} {'requests':>8} {'rps':>8} {'p50 ms':>8} {'p99 ms':>8}"
    )
    for measure in (DETAIL, LIST):
        for width in CONCURRENCY:
            for server in ("prw", "bare"):
                s = results[(measure, width, server)]
                print(
                    f"{measure:<14} {width:>7} {server:<6} {s.requests:>8} {s.rate:>8,.1f}"
                    f" {s.p50() * 1000:>8.1f} {s.p99() * 1000:>8.1f}"
                )
    print()
    for measure in (DETAIL, LIST):
        for width in CONCURRENCY:
            ours, bare = results[(measure, width, "prw")], results[(measure, width, "bare")]
            print(
                f"ratio {measure}, {width} client(s) (prw / bare rps): {ours.rate / bare.rate:.2f}"
                f"  p99 ratio {ours.p99() / bare.p99():.2f}"
                f"  (p99 {ours.p99() * 1000:.1f} vs {bare.p99() * 1000:.1f} ms)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--load",
        choices=("wrk", "threads"),
        default="wrk" if shutil.which("wrk") else "threads",
        help="the load generator (default: wrk when it is on PATH, else Python threads)",
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per block with wrk (default 5)")
    parser.add_argument(
        "--requests", type=int, default=3000, help="requests per measurement, width and server with threads"
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
        help="a tiny run that checks the benchmark works (64 requests or 1 second, 1 block)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.seconds, args.items, args.blocks, args.workers = 64, 1, 50, 1, 1
    if args.load == "wrk" and shutil.which("wrk") is None:
        parser.error("--load wrk: wrk is not on PATH (Debian: apt-get install wrk)")
    admin_url, where = server_admin_url(args.database_url)
    with psycopg.connect(admin_url) as conn:
        version = conn.execute("SHOW server_version").fetchone()
    print(
        f"{where}, server {version[0] if version else '?'}; {args.workers} worker processes per server;"
        f" load from {'wrk' if args.load == 'wrk' else 'Python threads (httpx)'}"
    )
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
                wrk = WrkLoad(work, args.seconds) if args.load == "wrk" else None
                results = measure_all({"prw": ours, "bare": bare}, ids, args.requests, args.blocks, wrk)
            finally:
                ours.stop()
                bare.stop()
        report(results)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

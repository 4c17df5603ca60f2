"""Decisions per second, on one stream and on 8 streams, beside a bare psycopg transaction doing the
same row writes, in the same run.

    python bench/bench_decisions.py [--decisions 2000] [--blocks 4] [--database-url URL] [--smoke]

prw: ``decide(CreateItemAndMap)`` (AW-01, the path every rule and reviewer decision takes), one READ COMMITTED
    transaction per decision as ``resolver_app`` under row-level security: lock the stream cursor, check the
    idempotency key, check the identifiers (INV-01/07), insert the immutable decision, the item, its
    identifiers, the listing and the mapping, validate and append three outbox events at the next positions,
    advance the cursor. The catalogs release manually, so no release rides along. One stream: ``--decisions``
    decisions in one thread. 8 streams: 8 threads, each on its own catalog, ``--decisions`` in all. Each
    configuration runs in ``--blocks`` blocks (default 4), each block's prw decisions followed by their bare
    twins, so a load change on a shared machine falls on both.
bare: for each of those decisions, the same rows (read back from the resolver tables, so the values and sizes are
    identical) written by one psycopg transaction into copies of the tables (``LIKE … INCLUDING ALL``: columns,
    defaults, checks, indexes; no foreign keys, no row-level security) as the database owner: lock the copied
    cursor row, one INSERT per row, advance the cursor, COMMIT. Same threads, same streams.

Prints decisions/s of both and the ratio prw / bare per configuration (target ≥ 0.5). The scratch databases are
dropped at the end; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from bench_spine import create_command, scratch_platform, server_admin_url
from psycopg import sql
from psycopg.types.json import Jsonb

from prw_platform.bootstrap import Platform
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection, Database
from prw_platform.product.scopes import project_catalog
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec, provision_catalog
from prw_platform.resolver.decisions import CreateItemAndMap, decide

TENANT = "ten_bench"
STREAMS = 8
WARM_UP = 10
#: The tables one create-and-map decision writes, in the order AW-01 writes them.
TABLES = ("decision", "catalog_item", "item_identifier", "listing", "listing_mapping", "outbox")
T0 = datetime(2026, 11, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Rows:
    """One decision's rows as JSON documents, table by table (the bare path writes exactly these)."""

    stream: StreamKey
    rows: tuple[tuple[str, tuple[dict[str, Any], ...]], ...]
    last_position: int


def provision_streams(platform: Platform, count: int) -> list[StreamKey]:
    streams = []
    for k in range(count):
        catalog, source = f"cat_bench_{k}", f"src_bench_{k}"
        provisioned = provision_catalog(
            platform.resolver_db,
            platform.control_db,
            CatalogSpec(TENANT, catalog, f"Bench catalog {k}", "manual", (SourceSpec(source, f"Bench {k}"),)),
        )
        project_catalog(platform.product_db, TENANT, catalog, provisioned.stream.history_epoch)
        streams.append(provisioned.stream)
    return streams


def command(stream: StreamKey, n: int) -> CreateItemAndMap:
    """bench_spine's automatic create-item decision (a unique GTIN), on the stream's own source."""
    return create_command(n, T0 + timedelta(seconds=n), source=stream.catalog_id.replace("cat_", "src_"))


def run_threads(work: Sequence[Callable[[], list[str]]]) -> tuple[float, list[str]]:
    """Run each callable in its own thread, all started together; (seconds, the decision ids in all)."""
    start = threading.Barrier(len(work) + 1)

    def run(job: Callable[[], list[str]]) -> list[str]:
        start.wait()
        return job()

    with ThreadPoolExecutor(len(work)) as pool:
        futures = [pool.submit(run, job) for job in work]
        start.wait()
        began = time.perf_counter()
        done = [f.result() for f in futures]
        seconds = time.perf_counter() - began
    return seconds, [d for ids in done for d in ids]


def prw_decisions(
    platform: Platform, streams: list[StreamKey], per_stream: int, first: int
) -> tuple[float, list[str]]:
    def job(k: int, stream: StreamKey) -> Callable[[], list[str]]:
        numbers = range(first + k * per_stream, first + (k + 1) * per_stream)
        return lambda: [decide(command(stream, n), platform.resolver_db, stream).decision_id for n in numbers]

    return run_threads([job(k, stream) for k, stream in enumerate(streams)])


def read_rows(owner: Database, decision_ids: list[str]) -> dict[StreamKey, list[Rows]]:
    """Each decision's rows as the resolver stored them, per stream in commit (position) order."""

    def work(conn: Connection) -> dict[StreamKey, list[Rows]]:
        by_stream: dict[StreamKey, list[Rows]] = {}
        for decision_id in decision_ids:
            d = conn.execute(
                "SELECT tenant_id, catalog_id, history_epoch, effects FROM resolver.decision WHERE decision_id = %s",
                (decision_id,),
            ).fetchone()
            assert d is not None
            effects = d["effects"]
            keys = {
                "decision": ("decision_id", decision_id),
                "catalog_item": ("item_id", effects["item_id"]),
                "item_identifier": ("item_id", effects["item_id"]),
                "listing": ("listing_id", effects["listing_id"]),
                "listing_mapping": ("listing_id", effects["listing_id"]),
                "outbox": ("decision_id", decision_id),
            }
            rows = tuple(
                (
                    table,
                    tuple(
                        r["doc"]
                        for r in conn.execute(
                            sql.SQL("SELECT to_jsonb(t) AS doc FROM resolver.{} t WHERE {} = %s").format(
                                sql.Identifier(table), sql.Identifier(keys[table][0])
                            ),
                            (keys[table][1],),
                        ).fetchall()
                    ),
                )
                for table in TABLES
            )
            stream = StreamKey(d["tenant_id"], d["catalog_id"], d["history_epoch"])
            last = max(e["position"] for e in effects["events"])
            by_stream.setdefault(stream, []).append(Rows(stream, rows, last))
        return by_stream

    return owner.run(work, read_only=True)


def create_bare_tables(owner_url: str, streams: list[StreamKey]) -> None:
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA bare")
        for table in (*TABLES, "stream_cursor"):
            conn.execute(
                sql.SQL("CREATE TABLE bare.{} (LIKE resolver.{} INCLUDING ALL EXCLUDING GENERATED)").format(
                    sql.Identifier(table), sql.Identifier(table)
                )
            )
        for s in streams:
            conn.execute(
                "INSERT INTO bare.stream_cursor (tenant_id, catalog_id, history_epoch, updated_at)"
                " VALUES (%s, %s, %s, now())",
                (s.tenant_id, s.catalog_id, s.history_epoch),
            )


def bare_decision(conn: psycopg.Connection[Any], decision: Rows) -> None:
    """The same row writes in one transaction: lock the cursor, insert every row, advance the cursor, commit."""
    s = decision.stream
    with conn.transaction():
        conn.execute(
            "SELECT committed_position FROM bare.stream_cursor"
            " WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s FOR UPDATE",
            (s.tenant_id, s.catalog_id, s.history_epoch),
        )
        for table, docs in decision.rows:
            for doc in docs:
                conn.execute(
                    sql.SQL(
                        "INSERT INTO bare.{} SELECT * FROM jsonb_populate_record(NULL::bare.{}, %s)"
                    ).format(sql.Identifier(table), sql.Identifier(table)),
                    (Jsonb(doc),),
                )
        conn.execute(
            "UPDATE bare.stream_cursor SET committed_position = %s, updated_at = now()"
            " WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s",
            (decision.last_position, s.tenant_id, s.catalog_id, s.history_epoch),
        )


def bare_decisions(owner_url: str, decisions: dict[StreamKey, list[Rows]]) -> tuple[float, list[str]]:
    def job(rows: list[Rows]) -> Callable[[], list[str]]:
        def run() -> list[str]:
            with psycopg.connect(owner_url) as conn:
                for decision in rows:
                    bare_decision(conn, decision)
            return [str(r.last_position) for r in rows]

        return run

    return run_threads([job(rows) for rows in decisions.values()])


def measure(
    platform: Platform, owner: Database, streams: list[StreamKey], count: int, first: int, blocks: int = 1
) -> tuple[float, float, int]:
    """``count`` decisions spread over ``streams`` (numbers from ``first``) in ``blocks`` alternating blocks: each
    block's decisions, then the same rows bare, so both see the same load on a shared machine. (seconds prw,
    seconds bare, decisions made)."""
    per_block = max(len(streams), count // blocks)
    prw_total = bare_total = 0.0
    made = 0
    for block in range(blocks):
        prw_s, ids = prw_decisions(platform, streams, per_block // len(streams), first + block * per_block)
        bare_s, _ = bare_decisions(platform.urls.main, read_rows(owner, ids))
        prw_total, bare_total, made = prw_total + prw_s, bare_total + bare_s, made + len(ids)
    return prw_total, bare_total, made


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--decisions", type=int, default=2000, help="per configuration (split over the streams)"
    )
    parser.add_argument(
        "--blocks", type=int, default=4, help="alternating blocks of prw and bare per configuration"
    )
    parser.add_argument("--database-url")
    parser.add_argument("--smoke", action="store_true", help="a tiny run that only checks the script works")
    args = parser.parse_args()
    if args.smoke:
        args.decisions, args.blocks = 40, 1
    per_stream = max(1, args.decisions // STREAMS)
    admin_url, where = server_admin_url(args.database_url)
    print(
        f"bench_decisions on {where}: {args.decisions:,} decisions per configuration"
        f" in {args.blocks} alternating blocks",
        flush=True,
    )
    results: list[tuple[int, float, float, int]] = []
    with (
        scratch_platform(admin_url, "decisions") as platform,
        Database(platform.urls.main, role=None, max_size=2, application_name="prw-bench-owner") as owner,
    ):
        streams = provision_streams(platform, 2 + STREAMS)
        create_bare_tables(platform.urls.main, streams)
        # A warm-up stream first (pools, plugins, caches), not reported; then 1 stream, then 8.
        measure(platform, owner, streams[:1], WARM_UP, 0)
        count = per_stream * STREAMS
        for k, configuration in enumerate((streams[1:2], streams[2:])):
            prw_s, bare_s, made = measure(
                platform, owner, configuration, count, WARM_UP + k * count, args.blocks
            )
            results.append((len(configuration), prw_s, bare_s, made))
    print(f"\n{'streams':>7} {'path':<5} {'decisions':>10} {'seconds':>8} {'decisions/s':>12}")
    for streams_n, prw_s, bare_s, n in results:
        print(f"{streams_n:>7} {'prw':<5} {n:>10,} {prw_s:>8.2f} {n / prw_s:>12,.0f}")
        print(f"{streams_n:>7} {'bare':<5} {n:>10,} {bare_s:>8.2f} {n / bare_s:>12,.0f}")
    for streams_n, prw_s, bare_s, _ in results:
        print(f"ratio {streams_n} stream(s) (prw / bare decisions/s): {bare_s / prw_s:.3f}  (target >= 0.5)")


if __name__ == "__main__":
    main()

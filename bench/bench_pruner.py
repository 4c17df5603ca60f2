"""Outbox pruner throughput (AW-03 "Prune") against a plain DELETE of the same rows in the same run.

    python bench/bench_pruner.py [--rows 1000000] [--round 100000] [--database-url URL] [--smoke]

The script creates a scratch database (on the server of ``--database-url``, or on a throwaway embedded server),
migrates it, writes two streams of ``--rows`` published, aged outbox events each (~0.4 KB JSON bodies, as the
owner, with ``INSERT ... SELECT generate_series``), registers the live consumer of stream A at the last position (of stream B at 0, so the pruner leaves B to the
baseline), and
then, in alternating rounds of ``--round`` rows:

* pruner: ``Pruner.prune(max_rows=round)`` as ``resolver_pruner`` on stream A: per transaction of
  ``retention.PRUNE_CHUNK`` rows, the retention-control lock, the bound (consumers, leases), the prefix check (one
  ordered range scan with a window), the DELETE, and the pruned-through update;
* baseline: a plain ``DELETE ... WHERE position > p AND position <= p + chunk`` of stream B as the owner, the same
  chunk size, one transaction per chunk.

So the ratio pruner/baseline is what retention control costs on top of deleting the rows. Absolute numbers
depend on the machine. No assertions: nothing here is a test.
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

import psycopg
from psycopg import sql

from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.db.migrate import migrate
from prw_platform.db.urls import with_database
from prw_platform.resolver.stream import retention
from prw_platform.resolver.stream.retention import Pruner, RetentionPolicy

TENANT = "ten_bench"
PRUNED, BASELINE = "cat_pruned", "cat_baseline"
EPOCH = "hep_bench_1"

SETUP = """
INSERT INTO resolver.tenant (tenant_id, name) VALUES (%(tenant)s, 'bench') ON CONFLICT DO NOTHING;
INSERT INTO resolver.catalog (tenant_id, catalog_id, name, release_policy)
    VALUES (%(tenant)s, %(catalog)s, %(catalog)s, 'manual');
INSERT INTO resolver.stream_cursor (tenant_id, catalog_id, history_epoch, committed_position)
    VALUES (%(tenant)s, %(catalog)s, %(epoch)s, %(rows)s);
INSERT INTO resolver.retention_stream (tenant_id, catalog_id, history_epoch)
    VALUES (%(tenant)s, %(catalog)s, %(epoch)s);
INSERT INTO resolver.retention_consumer (tenant_id, catalog_id, history_epoch, consumer, acknowledged_position,
        registered_at)
    VALUES (%(tenant)s, %(catalog)s, %(epoch)s, 'product_live', %(acknowledged)s, now());
INSERT INTO resolver.outbox (tenant_id, catalog_id, history_epoch, position, event_id, event_type, aggregate_type,
        aggregate_id, aggregate_revision, body, accepted_at, published_at)
    SELECT %(tenant)s, %(catalog)s, %(epoch)s, g, 'evt_bench_' || g, 'catalog_item.created', 'catalog_item',
           'itm_bench_' || g, 1,
           jsonb_build_object('event_id', 'evt_bench_' || g, 'sequence', g, 'type', 'catalog_item.created',
               'payload', jsonb_build_object('item', 'itm_bench_' || g, 'title', repeat('Strata P5 SSD ', 20))),
           now() - interval '30 days', now() - interval '30 days'
    FROM generate_series(1, %(rows)s) AS g;
"""


def server_admin_url(database_url: str | None) -> tuple[str, str]:
    if database_url:
        return with_database(database_url, "postgres"), "PostgreSQL at --database-url"
    from prw_platform.db.embedded import EmbeddedPostgres

    root = Path(tempfile.mkdtemp(prefix="prw-bench-pruner-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return EmbeddedPostgres(root / "pg", keep_running=False).start(), "embedded PostgreSQL (pgserver)"


def run(rows: int, round_size: int, database_url: str | None) -> None:
    admin_url, where = server_admin_url(database_url)
    scratch = f"prw_bench_pruner_{uuid.uuid4().hex[:8]}"
    url = with_database(admin_url, scratch)
    migrate(url)
    chunk = retention.PRUNE_CHUNK
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            for catalog in (PRUNED, BASELINE):
                for statement in SETUP.strip().split(";\n"):
                    conn.execute(
                        statement,  # type: ignore[call-overload]
                        {
                            "tenant": TENANT,
                            "catalog": catalog,
                            "epoch": EPOCH,
                            "rows": rows,
                            # The baseline stream's consumer holds everything: the pruner leaves it to DELETE.
                            "acknowledged": rows if catalog == PRUNED else 0,
                        },
                    )
            conn.execute("VACUUM ANALYZE resolver.outbox")
            version = conn.execute("SHOW server_version").fetchone()
        target = rows - 1  # the event AT the consumer's acknowledged position stays
        seconds = {"pruner": 0.0, "baseline": 0.0}
        done = {"pruner": 0, "baseline": 0}
        with (
            Database(
                url, role=roles.RESOLVER_PRUNER, max_size=1, application_name="prw-bench-pruner"
            ) as pruner_db,
            psycopg.connect(url, autocommit=True) as owner,
        ):
            pruner = Pruner(pruner_db, RetentionPolicy(retention_age=timedelta(days=1)))
            while done["pruner"] < target or done["baseline"] < target:
                started = time.perf_counter()
                report = pruner.prune(max_rows=round_size)
                seconds["pruner"] += time.perf_counter() - started
                done["pruner"] += report.rows
                started = time.perf_counter()
                goal = min(target, done["baseline"] + round_size)
                while done["baseline"] < goal:
                    upto = min(goal, done["baseline"] + chunk)
                    with owner.transaction():
                        deleted = owner.execute(
                            """DELETE FROM resolver.outbox WHERE tenant_id = %s AND catalog_id = %s
                               AND history_epoch = %s AND position > %s AND position <= %s""",
                            (TENANT, BASELINE, EPOCH, done["baseline"], upto),
                        ).rowcount
                    if deleted == 0:
                        raise SystemExit(f"the baseline found nothing after {done['baseline']}")
                    done["baseline"] += deleted
                seconds["baseline"] += time.perf_counter() - started
                if report.rows == 0 and done["pruner"] < target:
                    raise SystemExit(f"the pruner stopped at {done['pruner']} of {target}")
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(scratch)))

    pruner_rate = done["pruner"] / seconds["pruner"]
    baseline_rate = done["baseline"] / seconds["baseline"]
    print(f"{where}, server {version[0] if version else '?'}; rows={rows}, round={round_size}, chunk={chunk}")
    print(f"{'phase':<34} {'pruner rows/s':>14} {'DELETE rows/s':>14} {'pruner/DELETE':>14}")
    print(
        f"{'prune ' + format(done['pruner'], ',') + ' rows':<34} {pruner_rate:>14,.0f} {baseline_rate:>14,.0f}"
        f" {pruner_rate / baseline_rate:>14.2f}"
    )
    print(f"seconds: pruner {seconds['pruner']:.1f}, DELETE {seconds['baseline']:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--round", type=int, default=100_000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--smoke", action="store_true", help="a tiny run that only checks the script works")
    args = parser.parse_args()
    if args.smoke:
        args.rows, args.round = 3_000, 1_000
    run(args.rows, args.round, args.database_url)


if __name__ == "__main__":
    main()

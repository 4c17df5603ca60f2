"""PostgreSQL queue throughput (send -> receive(batch) -> ack) against a baseline measured in the same run.

    python bench/bench_queue.py [--n 5000] [--batch 10] [--database-url URL] [--smoke]

The script creates a scratch database (on the server of ``--database-url``, or on a throwaway embedded server
when no URL is given), migrates it, and drops it at the end.

Both sides move the same JSON body (a resolution.job.v1 message, ~0.7 KB) with the same transaction shape:

* send: ``queue.send_batch(batch)`` against a bare ``INSERT`` of ``batch`` rows into a table holding only an
  identity key and the body; one transaction per batch on both sides.
* drain: ``queue.receive(batch)`` then one ``ack`` per message, against a bare ``SELECT ... LIMIT batch`` then
  one ``DELETE`` by id per row; ``batch + 1`` transactions per batch on both sides.

So the ratio queue/baseline is what the queue's own work costs: the ``SKIP LOCKED`` receive that updates each row
(a new row version, index maintenance, the delivery token) and the token check on ack. Both run through
``Database.run`` (pool, tenant setting, retries), in rounds of ``--round`` messages with the order rotated per
round, so drift on a shared machine affects both alike. Absolute numbers depend on the machine. No assertions:
nothing here is a test.
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from prw_platform.db import roles
from prw_platform.db.database import Connection, Database
from prw_platform.db.migrate import migrate
from prw_platform.db.urls import with_database
from prw_platform.queues import OutgoingMessage, PostgresQueue
from prw_platform.queues.body import encode_body

BODY = {
    "schema_version": "resolution.job/1",
    "job_id": "cap_lum_0310:extract:1",
    "stage": "extract",
    "tenant_id": "ten_primary",
    "catalog_id": "cat_primary",
    "capture_id": "cap_lum_0310",
    "receipt_id": "rcpt_0310",
    "source_id": "src_lumen_web",
    "artifacts": [
        {
            "artifact_id": "art_0310_html",
            "ref": "r2://evidence-private/ten_primary/a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192",
            "sha256": "a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192",
            "media_type": "text/html",
            "bytes": 233904,
        }
    ],
    "pins": None,
    "enqueued_at": "2026-10-10T03:32:01Z",
    "attempt_group": 1,
    "trace_id": "trc_0310",
    "history_epoch": "history-demo-1",
}

# The same storage parameters as queue.message (migration 0002), so vacuum treats both tables alike.
BASELINE_TABLE = """
CREATE TABLE public.bench_baseline (
    id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    body  json NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01)
"""

Phase = Callable[[int], None]


@dataclass(frozen=True)
class Result:
    phase: str
    queue_per_second: float
    baseline_per_second: float

    @property
    def ratio(self) -> float:
        return self.queue_per_second / self.baseline_per_second


def queue_phases(queue: PostgresQueue, batch: int) -> tuple[Phase, Phase]:
    def send(count: int) -> None:
        for start in range(0, count, batch):
            size = min(batch, count - start)
            queue.send_batch([OutgoingMessage(BODY) for _ in range(size)])

    def drain(count: int) -> None:
        taken = 0
        while taken < count:
            messages = queue.receive(min(batch, count - taken), visibility_timeout=300)
            if not messages:
                raise RuntimeError("the queue ran dry before the round was drained")
            for message in messages:
                queue.ack(message.handle)
            taken += len(messages)

    return send, drain


def baseline_phases(db: Database, batch: int) -> tuple[Phase, Phase]:
    # The exact text the queue stores for BODY.
    encoded = encode_body(BODY).text

    def send(count: int) -> None:
        for start in range(0, count, batch):
            rows = [(encoded,)] * min(batch, count - start)

            def insert(conn: Connection, rows: list[tuple[str | None]] = rows) -> None:
                with conn.cursor() as cur:
                    cur.executemany("INSERT INTO public.bench_baseline (body) VALUES (%s::json)", rows)

            db.run(insert)

    def take(limit: int) -> Callable[[Connection], list[dict[str, object]]]:
        return lambda conn: conn.execute(
            "SELECT id, body FROM public.bench_baseline ORDER BY id LIMIT %s", (limit,)
        ).fetchall()

    def delete(row_id: object) -> Callable[[Connection], object]:
        return lambda conn: conn.execute("DELETE FROM public.bench_baseline WHERE id = %s", (row_id,))

    def drain(count: int) -> None:
        taken = 0
        while taken < count:
            rows = db.run(take(min(batch, count - taken)))
            if not rows:
                raise RuntimeError("the baseline table ran dry before the round was drained")
            for row in rows:
                db.run(delete(row["id"]))
            taken += len(rows)

    return send, drain


def measure(
    n: int, round_size: int, variants: dict[str, tuple[Phase, Phase]]
) -> dict[str, tuple[float, float]]:
    """Per variant, (send msgs/s, drain msgs/s), summed over interleaved rounds."""
    elapsed = {name: [0.0, 0.0] for name in variants}
    names = list(variants)
    for index, start in enumerate(range(0, n, round_size)):
        count = min(round_size, n - start)
        order = names[index % len(names) :] + names[: index % len(names)]
        for phase in (0, 1):
            for name in order:
                began = time.perf_counter()
                variants[name][phase](count)
                elapsed[name][phase] += time.perf_counter() - began
    return {name: (n / times[0], n / times[1]) for name, times in elapsed.items()}


def server_admin_url(database_url: str | None) -> tuple[str, str]:
    if database_url:
        return with_database(database_url, "postgres"), "PostgreSQL at --database-url"
    from prw_platform.db.embedded import EmbeddedPostgres

    root = Path(tempfile.mkdtemp(prefix="prw-bench-queue-"))
    # atexit runs in reverse order: the embedded server (registered later, on start) stops before this removal.
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return EmbeddedPostgres(root / "pg", keep_running=False).start(), "embedded PostgreSQL (pgserver)"


def run(n: int, batch: int, round_size: int, database_url: str | None) -> None:
    admin_url, where = server_admin_url(database_url)
    scratch = f"prw_bench_queue_{uuid.uuid4().hex[:8]}"
    url = with_database(admin_url, scratch)
    migrate(url)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(BASELINE_TABLE)
            version = conn.execute("SHOW server_version").fetchone()
        with (
            Database(
                url, role=roles.RESOLVER_APP, max_size=2, application_name="prw-bench-queue"
            ) as queue_db,
            Database(url, role=None, max_size=2, application_name="prw-bench-baseline") as baseline_db,
        ):
            queue = PostgresQueue(queue_db, "bench-queue", max_receives=5)
            rates = measure(
                n,
                round_size,
                {"queue": queue_phases(queue, batch), "baseline": baseline_phases(baseline_db, batch)},
            )
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(scratch)))

    results = [
        Result(f"send (send_batch of {batch})", rates["queue"][0], rates["baseline"][0]),
        Result(f"receive({batch}) + ack each", rates["queue"][1], rates["baseline"][1]),
        Result(
            "end to end",
            1 / (1 / rates["queue"][0] + 1 / rates["queue"][1]),
            1 / (1 / rates["baseline"][0] + 1 / rates["baseline"][1]),
        ),
    ]
    print(f"{where}, server {version[0] if version else '?'}; n={n}, batch={batch}, round={round_size}")
    print(f"{'phase':<30} {'queue msg/s':>12} {'baseline msg/s':>15} {'queue/baseline':>15}")
    for result in results:
        print(
            f"{result.phase:<30} {result.queue_per_second:>12,.0f} {result.baseline_per_second:>15,.0f}"
            f" {result.ratio:>15.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=5000, help="messages per variant (default 5000)")
    parser.add_argument(
        "--batch", type=int, default=10, help="send and receive batch size, 1..10 (default 10)"
    )
    parser.add_argument(
        "--round", type=int, default=500, dest="round_size", help="messages per interleaved round"
    )
    parser.add_argument("--database-url", help="a PostgreSQL server to create the scratch database on")
    parser.add_argument(
        "--smoke", action="store_true", help="a tiny run that checks the benchmark works (50 messages)"
    )
    args = parser.parse_args()
    if args.smoke:
        args.n, args.round_size = 50, 25
    run(args.n, args.batch, args.round_size, args.database_url)


if __name__ == "__main__":
    main()

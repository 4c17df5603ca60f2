"""Relay + apply throughput under disorder, against a batched INSERT in the same run.

    python bench/bench_apply.py [--events 100000] [--aggregates 10000] [--duplicates 0.2] [--drops 0.0]
                                [--database-url URL] [--smoke]

A scratch database gets one committed stream of ``--events`` accepted changes over ``--aggregates`` aggregates
(40% catalog items, 40% listings, 20% listing mappings, each event a new revision of one of them; a mapping
depends on the item and listing revisions it names), written straight into ``resolver.outbox`` with the stream
cursor at the head, like decisions leave them (the decision service itself is measured by bench_spine.py).

1. relay: ``Platform.relay`` (AW-03) publishes the outbox, 100 rows per transaction, through a disorderly
   transport in front of the real PostgreSQL accepted-change queue: it delivers the stream shuffled, with
   ``--duplicates`` of the events sent twice, and ``--drops`` of them never (a lost message); the send of the
   shuffled deliveries to the real queue is part of the relay time.
2. apply: ``Platform.product_apply`` (AW-04: one receive of up to 400 deliveries, one product transaction per
   stream, acks after commit) until the queue is empty; with drops, the ``gaps`` stage then closes the gaps
   through the resolver's export stream (``GET /v1/exports/events`` over HTTP, intake app on loopback).
3. baseline: a batched INSERT of the same event bodies into a plain table, 100 rows per transaction.
4. divergence: the projection (items, listings, mappings, applied revisions, progress, parked) compared row by
   row with the serial state computed in Python from the stream in position order (each aggregate at its last
   revision). Prints the number of differing rows: anything but 0 breaks INV-08.

Prints events/s of each phase and its ratio to the baseline. Before the relay and the apply the bench's own data
(the generated stream) is set aside from the garbage collector (``gc.freeze``): a consumer process holds none of it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.unit.product.stream

from bench_spine import provision, scratch_platform, server_admin_url

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection, Database
from prw_platform.product.consumer.driver import BatchReport
from prw_platform.product.gaps import HttpExportSource, close_gap
from prw_platform.queues import OutgoingMessage, Queue
from prw_platform.resolver.stream.relay import Relay
from prw_platform.services import PRODUCT_SCOPES, ClientSpec
from tests.unit.product.stream import StreamBuilder

BATCH = 100
BASELINE_TABLE = (
    "CREATE TABLE public.bench_event (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body json)"
)


def generate(stream: StreamBuilder, events: int, aggregates: int, rng: random.Random) -> list[dict[str, Any]]:
    items = [f"itm_{n:06d}" for n in range(max(1, aggregates * 2 // 5))]
    listings = [f"lst_{n:06d}" for n in range(max(1, aggregates * 2 // 5))]
    mapped = listings[: max(1, aggregates - len(items) - len(listings))]
    messages: list[dict[str, Any]] = []
    # Every aggregate once, then random new revisions until the stream has ``events`` events.
    for n, item in enumerate(items):
        messages.append(stream.item(item, title=f"Bench item {n}"))
    for n, listing in enumerate(listings):
        messages.append(stream.listing(listing, price=f"{10 + n % 90}.00"))
    for listing in mapped:
        messages.append(stream.mapping(listing, rng.choice(items)))
    while len(messages) < events:
        kind = rng.random()
        if kind < 0.4:
            item = rng.choice(items)
            messages.append(stream.item(item, title=f"Bench item {item} r{len(messages)}"))
        elif kind < 0.8:
            messages.append(stream.listing(rng.choice(listings), price=f"{10 + len(messages) % 90}.00"))
        else:
            messages.append(stream.mapping(rng.choice(mapped), rng.choice(items)))
    return messages[:events]


def seed_outbox(owner: Database, messages: list[dict[str, Any]]) -> None:
    first = messages[0]
    rows = [
        (
            m["tenant_id"],
            m["catalog_id"],
            m["history_epoch"],
            m["sequence"],
            m["event_id"],
            m["type"],
            m["aggregate"]["type"],
            m["aggregate"]["id"],
            m["aggregate"]["revision"],
            m["decision_id"],
            json.dumps(m),
            m["accepted_at"],
        )
        for m in messages
    ]
    for start in range(0, len(rows), 2000):

        def insert(conn: Connection, chunk: list[tuple[Any, ...]] = rows[start : start + 2000]) -> None:
            with conn.cursor() as cur:
                cur.executemany(
                    """INSERT INTO resolver.outbox (tenant_id, catalog_id, history_epoch, position, event_id,
                           event_type, aggregate_type, aggregate_id, aggregate_revision, decision_id, body,
                           accepted_at)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)""",
                    chunk,
                )

        owner.run(insert)
    owner.run(
        lambda conn: conn.execute(
            """UPDATE resolver.stream_cursor SET committed_position = %s
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s""",
            (len(messages), first["tenant_id"], first["catalog_id"], first["history_epoch"]),
        )
    )


@dataclass
class DisorderlyTransport:
    """Stands between the relay and the real queue: keeps what the relay publishes, then delivers it shuffled,
    with duplicates, minus drops (the queue promises none of order, exactly-once or, after a DLQ, delivery)."""

    queue: Queue
    duplicates: float
    drops: float
    rng: random.Random
    held: list[OutgoingMessage] = field(default_factory=list)
    dropped: int = 0
    duplicated: int = 0

    def send_batch(self, messages: list[OutgoingMessage], *, conn: Connection | None = None) -> list[str]:
        self.held.extend(messages)
        return [m.message_id or "" for m in messages]

    def deliver(self) -> int:
        deliveries: list[OutgoingMessage] = []
        for message in self.held:
            if self.rng.random() < self.drops:
                self.dropped += 1
                continue
            deliveries.append(message)
            if self.rng.random() < self.duplicates:
                deliveries.append(message)
                self.duplicated += 1
        self.rng.shuffle(deliveries)
        for start in range(0, len(deliveries), 500):
            self.queue.send_batch(deliveries[start : start + 500])
        self.held.clear()
        return len(deliveries)


SNAPSHOT = {
    "items": "SELECT item_id, revision, fields, position FROM product.item_projection ORDER BY 1",
    "listings": "SELECT listing_id, revision, fields, position FROM product.listing_projection ORDER BY 1",
    "mappings": "SELECT listing_id, item_id, revision, fields, position FROM product.listing_mapping_projection"
    " ORDER BY 1",
    "applied": "SELECT aggregate_type, aggregate_id, revision, position FROM product.applied_revision ORDER BY 1, 2",
}


def serial_state(messages: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The projection the stream gives applied serially in position order: each aggregate at its last revision."""
    last: dict[tuple[str, str], dict[str, Any]] = {}
    for m in sorted(messages, key=lambda m: m["sequence"]):
        last[(m["aggregate"]["type"], m["aggregate"]["id"])] = m
    state: dict[str, list[dict[str, Any]]] = {name: [] for name in SNAPSHOT}
    for (kind, aggregate_id), m in sorted(last.items()):
        revision, position, payload = m["aggregate"]["revision"], m["sequence"], m["payload"]
        state["applied"].append(
            {"aggregate_type": kind, "aggregate_id": aggregate_id, "revision": revision, "position": position}
        )
        if kind == "catalog_item":
            state["items"].append(
                {"item_id": aggregate_id, "revision": revision, "fields": payload, "position": position}
            )
        elif kind == "listing":
            state["listings"].append(
                {"listing_id": aggregate_id, "revision": revision, "fields": payload, "position": position}
            )
        else:
            state["mappings"].append(
                {
                    "listing_id": aggregate_id,
                    "item_id": payload["item"],
                    "revision": revision,
                    "fields": payload,
                    "position": position,
                }
            )
    for rows in state.values():
        rows.sort(key=lambda r: tuple(str(v) for v in list(r.values())[:2]))
    return state


def divergence(owner: Database, messages: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(differing rows, contiguous position, parked events) against the serial state."""
    expected = serial_state(messages)
    with owner.transaction() as conn:
        actual = {name: conn.execute(query).fetchall() for name, query in SNAPSHOT.items()}
        (progress,) = conn.execute(
            "SELECT coalesce(max(contiguous_position), 0) AS p FROM product.progress"
        ).fetchall()
        (parked,) = conn.execute("SELECT count(*) AS n FROM product.parked_event").fetchall()
    differing = 0
    for name, rows in expected.items():
        got = sorted(actual[name], key=lambda r: tuple(str(v) for v in list(r.values())[:2]))
        differing += sum(1 for a, b in zip(rows, got, strict=False) if a != b) + abs(len(rows) - len(got))
    return differing, int(progress["p"]), int(parked["n"])


def run_baseline(owner: Database, bodies: list[str]) -> float:
    owner.run(lambda conn: conn.execute(BASELINE_TABLE))
    began = time.perf_counter()
    for start in range(0, len(bodies), BATCH):
        batch = [(b,) for b in bodies[start : start + BATCH]]

        def insert(conn: Connection, rows: list[tuple[str]] = batch) -> None:
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO public.bench_event (body) VALUES (%s::json)", rows)

        owner.run(insert)
    return time.perf_counter() - began


class CollectorClock:
    """Seconds spent in the garbage collector while ``on`` (gc.callbacks), to print beside a phase's CPU."""

    def __init__(self) -> None:
        self.on = False
        self.seconds = 0.0
        self._began = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._began


def set_bench_data_aside() -> None:
    """Move what the bench itself holds (the generated stream, its JSON bodies: about 15 tracked objects per event)
    out of the collector's reach before a measured phase, as ``gc.freeze`` does for a server's start-up objects.
    Without it every full collection in the measured phase walks the bench's 1.5 million objects at 100,000
    events, a cost a consumer process, which holds none of them, never pays (bench/README.md has its share of
    the apply's wall time)."""
    gc.collect()
    gc.freeze()


def run_relay(platform: Platform, transport: DisorderlyTransport) -> tuple[float, int]:
    relay = Relay(platform.relay_db, transport, clock=platform.clock)  # type: ignore[arg-type]
    began = time.perf_counter()
    while not relay.run_batch(BATCH).drained:
        continue
    deliveries = transport.deliver()
    return time.perf_counter() - began, deliveries


def _cpu_seconds(stat: str, children: bool = False) -> float:
    fields = stat.rsplit(")", 1)[1].split()
    # After the command name: state, ppid, ...; utime and stime are fields 14 and 15 of proc(5), cutime and
    # cstime (the exited children it waited for) 16 and 17.
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def server_cpu_seconds(owner: Database) -> float | None:
    """CPU time the whole PostgreSQL server has used so far (postmaster, every live process, and the exited ones
    such as autovacuum workers), read from /proc: a measure that the machine's other load does not inflate the
    way it inflates wall time. Only meaningful on a server of this run's own (the embedded one); None where
    /proc cannot tell (another host, another OS)."""
    try:
        backend = owner.run(lambda conn: conn.execute("SELECT pg_backend_pid() AS pid").fetchone())
        with open(f"/proc/{backend['pid']}/stat") as f:
            postmaster = int(f.read().rsplit(")", 1)[1].split()[1])
        with open(f"/proc/{postmaster}/stat") as f:
            total = _cpu_seconds(f.read(), children=True)
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue  # exited meanwhile
            if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                total += _cpu_seconds(stat)
        return total
    except (OSError, ValueError, IndexError, TypeError):
        return None


#: The product tables autovacuum analyzes in the first minute of a fresh database.
ANALYZED_TABLES = ("product.inbox", "product.applied_revision", "product.parked_event")


def run_apply(platform: Platform, owner: Database, appliers: int = 1) -> tuple[float, float, dict[str, int]]:
    """Apply until the queue is empty, with ``appliers`` competing consumers (threads of this process, each
    receiving its own batches, as several ``prw worker apply`` would). After the first batch the product tables
    are analyzed, as autovacuum does within a minute of a table's first rows in any deployment: a run of seconds
    on a fresh database would otherwise measure plans made without statistics (a never-analyzed table is planned
    as if every probe's stream prefix matched one row, so a probe by event id may pick the position index and
    filter the stream)."""
    counts: dict[str, int] = {}
    lock = threading.Lock()
    began, cpu_began = time.perf_counter(), time.process_time()

    def tally(report: BatchReport) -> None:
        with lock:
            for name in ("applied", "ignored_duplicate", "ignored_stale_revision", "parked", "released"):
                counts[name] = counts.get(name, 0) + getattr(report, name)

    first = platform.product_apply.run_batch()
    tally(first)
    if first.received:
        owner.run(lambda conn: conn.execute(f"ANALYZE {', '.join(ANALYZED_TABLES)}"))

        def drain() -> None:
            while (report := platform.product_apply.run_batch()).received:
                tally(report)

        threads = [threading.Thread(target=drain, name=f"applier-{n}") for n in range(appliers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return time.perf_counter() - began, time.process_time() - cpu_began, counts


def run_gap_closure(platform: Platform, stream: StreamBuilder) -> tuple[float, int]:
    """The lost deliveries, fetched from the export stream over HTTP (intake app on loopback) and applied."""
    client = platform.clients.create(
        ClientSpec(stream.tenant_id, stream.catalog_id, "product", "product_live", (), PRODUCT_SCOPES)
    )
    with BackgroundServer(compose.intake_app(platform)) as intake:
        source = HttpExportSource(intake.url, client.client_id, client.client_secret)
        began = time.perf_counter()
        closure = close_gap(
            platform.product_db, source, StreamKey(stream.tenant_id, stream.catalog_id, stream.history_epoch)
        )
        seconds = time.perf_counter() - began
        source.close()
    if closure.failed:
        raise SystemExit(f"gap closure failed: {closure.failed}")
    return seconds, closure.fetched


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--aggregates", type=int, default=10_000)
    parser.add_argument("--duplicates", type=float, default=0.2)
    parser.add_argument("--drops", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument(
        "--appliers",
        type=int,
        default=1,
        help="competing apply consumers (threads), as several workers would",
    )
    parser.add_argument("--database-url")
    parser.add_argument("--smoke", action="store_true", help="a tiny run that only checks the script works")
    args = parser.parse_args()
    if args.smoke:
        args.events, args.aggregates = 2_000, 200
    admin_url, where = server_admin_url(args.database_url)
    rng = random.Random(args.seed)
    print(f"bench_apply on {where}: {args.events:,} events over {args.aggregates:,} aggregates", flush=True)
    with (
        scratch_platform(admin_url, "apply") as platform,
        Database(platform.urls.main, role=None, max_size=2, application_name="prw-bench-owner") as owner,
    ):
        ref = provision(platform, "manual")
        stream = StreamBuilder(
            tenant_id=ref.tenant_id, catalog_id=ref.catalog_id, history_epoch=ref.history_epoch
        )
        messages = generate(stream, args.events, args.aggregates, rng)
        seed_outbox(owner, messages)
        bodies = [json.dumps(m) for m in messages]

        transport = DisorderlyTransport(platform.accepted_changes_out, args.duplicates, args.drops, rng)
        set_bench_data_aside()
        relay_s, deliveries = run_relay(platform, transport)
        set_bench_data_aside()
        collector = CollectorClock()
        server_before = server_cpu_seconds(owner) if args.database_url is None else None
        collector.on = True
        apply_s, apply_cpu_s, counts = run_apply(platform, owner, args.appliers)
        collector.on = False
        server_after = server_cpu_seconds(owner) if server_before is not None else None
        gaps_s, fetched = run_gap_closure(platform, stream) if transport.dropped else (0.0, 0)
        baseline_s = run_baseline(owner, bodies)
        differing, contiguous, parked = divergence(owner, messages)

    events = len(messages)
    rate = {"relay": events / relay_s, "apply": events / (apply_s + gaps_s), "baseline": events / baseline_s}
    end_to_end = events / (relay_s + apply_s + gaps_s)
    print(
        f"\n{events:,} events, {deliveries:,} deliveries ({transport.duplicated:,} duplicates, {transport.dropped:,}"
        f" dropped), shuffled; apply outcomes: " + ", ".join(f"{name} {n:,}" for name, n in counts.items())
    )
    print(
        f"apply's own CPU (this process, not PostgreSQL): {apply_cpu_s * 1e6 / events:,.0f} µs per event,"
        f" {apply_cpu_s / apply_s:.0%} of its wall time; {collector.seconds:.2f} s of it in the garbage collector"
    )
    if server_before is not None and server_after is not None:
        server_cpu_s = server_after - server_before
        print(
            f"apply's PostgreSQL CPU (the embedded server, every process): {server_cpu_s * 1e6 / events:,.0f} µs"
            f" per event; client + server {(apply_cpu_s + server_cpu_s) * 1e6 / events:,.0f} µs per event"
        )
    if transport.dropped:
        print(
            f"gap closure: {fetched:,} events fetched from the export stream over HTTP in {gaps_s:.2f} s"
            " (included in apply)"
        )
    print(f"{'phase':<48} {'events/s':>10} {'baseline/s':>11} {'ratio':>7}")
    for label, value in (
        ("relay: read, publish (shuffled), mark (AW-03)", rate["relay"]),
        ("apply: receive, project, progress, ack (AW-04)", rate["apply"]),
        ("relay + apply, end to end", end_to_end),
    ):
        print(f"{label:<48} {value:>10,.0f} {rate['baseline']:>11,.0f} {value / rate['baseline']:>7.3f}")
    print(
        f"divergence from the serial state: {differing} rows; contiguous position {contiguous:,} of {events:,};"
        f" parked {parked}"
    )
    if differing or contiguous != events or parked:
        raise SystemExit("INV-08 broken: the projection is not the serial state")


if __name__ == "__main__":
    main()

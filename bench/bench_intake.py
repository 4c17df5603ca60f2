"""Durable captures per second over HTTP through ``prw serve intake``, against a bare FastAPI + psycopg
server measured in the same run.

    python bench/bench_intake.py [--captures 400] [--blocks 2] [--workers 2] [--database-url URL] [--smoke]

Two servers run side by side on the same PostgreSQL server, each with ``--workers`` uvicorn worker processes:

- ours: ``prw serve intake --workers N`` (the command operators run) on a scratch, migrated main + control
  database pair, with a provisioned catalog and one collector client per simulated collector;
- the baseline: ``bare_intake_app.py`` under ``uvicorn --workers N`` on the same scratch database, one INSERT +
  COMMIT per request (and, for the upload, the bytes written to a file with fsync).

Each simulated collector is a thread with its own HTTP connection (keep-alive), 1 and then 4 at a time. Two
measurements, each in ``--blocks`` blocks that alternate which server goes first:

- capture alone: ``POST /v1/captures`` with an ``Idempotency-Key`` (a new key each time) for an artifact already
  stored: the durable capture (capture + receipt + resolution job in one transaction, the job sent to the queue
  after commit; AW-02) against one INSERT + COMMIT;
- upload + capture round: declare the artifact (``POST /v1/artifacts/uploads``), PUT its bytes (16 KiB, new each
  time), then the capture: what a collector does for a new page, against the bare server's three requests of the
  same shapes.

Per row: operations, operations per second (all collectors together, wall clock), p50 and p99 latency of one
operation. The ratio lines divide our operations per second by the baseline's. Scratch databases are dropped at
the end. Absolute numbers depend on the machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import bench_spine
import httpx
import psycopg

from prw_cli.collector import Collector
from prw_platform.bootstrap import bootstrap
from prw_platform.config import Settings
from prw_platform.db.urls import with_database
from prw_platform.services import CatalogSpec, ClientSpec, ProvisionedClient, SourceSpec

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
import bare_intake_app  # noqa: E402  (beside this script; uvicorn imports it the same way in its workers)

PRW = str(Path(sys.executable).parent / "prw")
TENANT, CATALOG, SOURCE = "ten_bench", "cat_bench", "src_bench_web"
PAGE_BYTES = 16 * 1024
START_DEADLINE_S = 240.0  # a loaded 2-core machine takes a minute to import two workers
CAPTURE, ROUND = "capture alone", "upload + capture round"


# --- databases and servers ------------------------------------------------------------------------------------


def server_admin_url(database_url: str | None) -> tuple[str, str]:
    if database_url:
        return with_database(database_url, "postgres"), "PostgreSQL at --database-url"
    from prw_platform.db.embedded import EmbeddedPostgres

    root = Path(tempfile.mkdtemp(prefix="prw-bench-intake-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)  # runs after the server's own atexit stop
    return EmbeddedPostgres(root / "pg", keep_running=False).start(), "embedded PostgreSQL (pgserver)"


@contextmanager
def scratch_settings(admin_url: str, work: Path) -> Iterator[Settings]:
    """A migrated main + control database pair of its own (bench_spine.scratch_settings); dropped afterwards."""
    with bench_spine.scratch_settings(admin_url, work / "data", "intake") as settings:
        yield settings


def provision(settings: Settings, collectors: int) -> list[ProvisionedClient]:
    with bootstrap(settings) as platform:
        platform.catalogs.provision(
            CatalogSpec(TENANT, CATALOG, "Bench catalog", sources=(SourceSpec(SOURCE, "Bench web"),))
        )
        return [
            platform.clients.create(ClientSpec(TENANT, CATALOG, f"cw_bench_{i}", f"ci_bench_{i}", (SOURCE,)))
            for i in range(collectors)
        ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def wait_ready(self, path: str) -> None:
        deadline = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(self.url + path, timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} did not become ready; its log:\n{self.log.read_text()[-4000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def start(name: str, command: list[str], env: dict[str, str], port: int, log: Path) -> Server:
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return Server(name, f"http://127.0.0.1:{port}", process, log)


def serve_prw(
    settings: Settings, workers: int, work: Path, origin: str = "intake", env: dict[str, str] | None = None
) -> Server:
    """``prw serve <origin> --workers N`` on the scratch databases (``env``: more ``PRW_*`` settings)."""
    env = (
        {k: v for k, v in os.environ.items() if not k.startswith("PRW_")}
        | {
            "PRW_DATABASE_URL": str(settings.database_url),
            "PRW_CONTROL_DATABASE_URL": str(settings.control_database_url),
            "PRW_DATA_DIR": str(settings.data_dir),
        }
        | (env or {})
    )
    port = free_port()
    command = [PRW, "serve", origin, "--workers", str(workers), "--port", str(port)]
    command += ["--no-access-log", "--log-level", "warning"]
    return start(f"prw serve {origin}", command, env, port, work / f"prw-serve-{origin}.log")


def serve_bare(main_url: str, workers: int, work: Path, app: str = "bare_intake_app") -> Server:
    """``uvicorn <app>:create_app --workers N`` from bench/, over ``BENCH_DATABASE_URL``."""
    store = work / "bare-store"
    store.mkdir(exist_ok=True)
    env = {**os.environ, "BENCH_DATABASE_URL": main_url, "BENCH_STORE_DIR": str(store)}
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", f"{app}:create_app", "--factory", "--app-dir", str(BENCH)]
    command += ["--workers", str(workers), "--port", str(port), "--no-access-log", "--log-level", "warning"]
    return start("bare FastAPI + psycopg", command, env, port, work / f"{app}.log")


# --- collectors -----------------------------------------------------------------------------------------------


class BenchCollector(Protocol):
    def upload(self, data: bytes) -> str: ...

    def capture(self, sha256: str, key: str) -> None: ...

    def close(self) -> None: ...


def capture_body(sha256: str, key: str) -> dict[str, object]:
    return {
        "schema_version": "capture/1",
        "source_id": SOURCE,
        "native_record_id": key,
        "observed_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "url": f"https://bench.example/p/{key}",
        "artifacts": [{"sha256": sha256}],
    }


class PrwCollector:
    """The platform's collector (``prw_cli.collector``) for the token and the upload; the capture call alone is
    timed on its own connection."""

    def __init__(self, url: str, client: ProvisionedClient, worker_id: str) -> None:
        self.collector = Collector(
            url, client.client_id, client.client_secret, worker_id=worker_id, timeout=60
        )
        self.http = httpx.Client(base_url=url, timeout=60)
        self.auth = {"Authorization": f"Bearer {self.collector.token()}"}

    def upload(self, data: bytes) -> str:
        return self.collector.upload(SOURCE, data, "text/html")[0]

    def capture(self, sha256: str, key: str) -> None:
        response = self.http.post(
            "/v1/captures", headers={**self.auth, "Idempotency-Key": key}, json=capture_body(sha256, key)
        )
        if response.status_code != 202:
            raise RuntimeError(f"POST /v1/captures: {response.status_code} {response.text}")

    def close(self) -> None:
        self.http.close()
        self.collector.__exit__(None, None, None)


class BareCollector:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=60)

    def upload(self, data: bytes) -> str:
        sha256 = hashlib.sha256(data).hexdigest()
        declared = self.http.post("/uploads", json={"sha256": sha256, "bytes": len(data)})
        declared.raise_for_status()
        target = declared.json()["target"]
        self.http.request(target["method"], target["url"], content=data).raise_for_status()
        return sha256

    def capture(self, sha256: str, key: str) -> None:
        response = self.http.post(
            "/captures", headers={"Idempotency-Key": key}, json=capture_body(sha256, key)
        )
        if response.status_code != 202:
            raise RuntimeError(f"POST /captures: {response.status_code} {response.text}")

    def close(self) -> None:
        self.http.close()


def page(key: str) -> bytes:
    head = f"<html><head><title>{key}</title></head><body>".encode()
    return head + b"x" * (PAGE_BYTES - len(head) - 14) + b"</body></html>"


# --- measuring ------------------------------------------------------------------------------------------------


@dataclass
class Sample:
    ops: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0


def run_block(collectors: list[BenchCollector], measure: str, per_collector: int, prefix: str) -> Sample:
    """Every collector in its own thread, started together; wall clock from the start to the last one done."""
    stored = (
        [c.upload(page(f"{prefix}-pre-{i}")) for i, c in enumerate(collectors)] if measure == CAPTURE else []
    )
    latencies: list[list[float]] = [[] for _ in collectors]
    errors: list[BaseException] = []
    go = threading.Barrier(len(collectors) + 1)

    def work(index: int, collector: BenchCollector) -> None:
        go.wait()
        try:
            for n in range(per_collector):
                key = f"{prefix}-{index}-{n}"
                began = time.perf_counter()
                if measure == CAPTURE:
                    collector.capture(stored[index], key)
                else:
                    collector.capture(collector.upload(page(key)), key)
                latencies[index].append(time.perf_counter() - began)
        except BaseException as error:  # reported after the block
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i, c)) for i, c in enumerate(collectors)]
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


def percentile(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def measure_all(
    make: dict[str, Callable[[int], BenchCollector]], concurrency: tuple[int, ...], captures: int, blocks: int
) -> dict[tuple[str, int, str], Sample]:
    results: dict[tuple[str, int, str], Sample] = {}
    run = uuid.uuid4().hex[:6]
    servers = list(make)
    for width in concurrency:
        pools = {server: [make[server](i) for i in range(width)] for server in servers}
        try:
            for server, collectors in pools.items():  # warm up: connections, pools, imports in every worker
                run_block(collectors, ROUND, 3, f"{run}-warm-{server}-{width}")
            for measure in (CAPTURE, ROUND):
                per_block = max(1, captures // blocks // width)
                for block in range(blocks):
                    order = servers if block % 2 == 0 else servers[::-1]
                    for server in order:
                        prefix = f"{run}-{server}-{width}-{measure[:3]}-{block}"
                        sample = run_block(pools[server], measure, per_block, prefix)
                        total = results.setdefault((measure, width, server), Sample())
                        total.ops += sample.ops
                        total.seconds += sample.seconds
                        total.latencies += sample.latencies
                        print(
                            f"  {measure}, {width} collector(s), block {block + 1}, {server}:"
                            f" {sample.rate:,.0f}/s",
                            flush=True,
                        )
        finally:
            for collectors in pools.values():
                for collector in collectors:
                    collector.close()
    return results


def report(results: dict[tuple[str, int, str], Sample], concurrency: tuple[int, ...]) -> None:
    print(
        f"\n{'measure':<24} {'collectors':>10} {'server':<6} {'ops':>6} {'ops/s':>8} {'p50 ms':>8} {'p99 ms':>8}"
    )
    for measure in (CAPTURE, ROUND):
        for width in concurrency:
            for server in ("prw", "bare"):
                s = results[(measure, width, server)]
                print(
                    f"{measure:<24} {width:>10} {server:<6} {s.ops:>6} {s.rate:>8,.1f}"
                    f" {statistics.median(s.latencies) * 1000:>8.1f} {percentile(s.latencies, 99) * 1000:>8.1f}"
                )
    print()
    for measure in (CAPTURE, ROUND):
        for width in concurrency:
            ours, bare = results[(measure, width, "prw")], results[(measure, width, "bare")]
            print(
                f"ratio {measure}, {width} collector(s) (prw / bare ops/s): {ours.rate / bare.rate:.2f}"
                f"  (p50 {statistics.median(ours.latencies) * 1000:.1f} vs"
                f" {statistics.median(bare.latencies) * 1000:.1f} ms)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--captures", type=int, default=400, help="operations per measurement and server (default 400)"
    )
    parser.add_argument(
        "--blocks", type=int, default=2, help="alternating blocks per measurement (default 2)"
    )
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes of each server")
    parser.add_argument("--database-url", help="a PostgreSQL server to create the scratch databases on")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that checks the benchmark works (8 operations, 1 block, 1 worker process per server)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.captures, args.blocks, args.workers = 8, 1, 1
    concurrency = (1, 4)
    admin_url, where = server_admin_url(args.database_url)
    with psycopg.connect(admin_url) as conn:
        version = conn.execute("SHOW server_version").fetchone()
    print(f"{where}, server {version[0] if version else '?'}; {args.workers} worker processes per server")
    work = Path(tempfile.mkdtemp(prefix="prw-bench-intake-"))
    try:
        with scratch_settings(admin_url, work) as settings:
            clients = provision(settings, max(concurrency))
            bare_intake_app.create_tables(str(settings.database_url))
            ours = serve_prw(settings, args.workers, work)
            bare = serve_bare(str(settings.database_url), args.workers, work)
            try:
                ours.wait_ready("/readyz")
                bare.wait_ready("/healthz")
                results = measure_all(
                    {
                        "prw": lambda i: PrwCollector(ours.url, clients[i], f"cw_bench_{i}"),
                        "bare": lambda i: BareCollector(bare.url),
                    },
                    concurrency,
                    args.captures,
                    args.blocks,
                )
            finally:
                ours.stop()
                bare.stop()
        report(results, concurrency)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""ObjectStore put_if_absent throughput against a baseline measured in the same run.

    python bench/bench_object_store.py [--n 2000] [--sizes 4096,65536] [--dir PATH] [--s3] [--smoke]

Filesystem: the store (hash check, temp envelope, fsync, exclusive link, directory fsync) against the baseline,
a raw write of the same bytes into the same directory tree (create, write, fsync, close). The ratio
store/baseline is what the commit protocol costs; absolute numbers depend on the disk and mean little. A
reference column adds the directory fsync that a new file name needs to survive power loss (the baseline skips it).

The variants run interleaved in chunks of ``--chunk`` operations, so drift in a shared machine's disk affects
all of them alike; each variant's time is the sum over its chunks.

``--s3`` adds the S3 backend against moto running in this process over loopback HTTP. That is NOT a real S3:
it measures the client code path (signing, checksum header, conditional put) against a raw unconditional
put_object to the same server. No assertions; nothing here is a test.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from prw_platform.storage import FilesystemObjectStore, ObjectStore, evidence_key

Batch = Sequence[tuple[bytes, str]]
Variant = Callable[[Batch], None]


@dataclass(frozen=True)
class Row:
    backend: str
    size: int
    n: int
    store_ops: float
    baseline_ops: float
    durable_create_ops: float | None = None


def payloads(n: int, size: int) -> list[tuple[bytes, str]]:
    """n distinct payloads of ``size`` bytes with their digests (a collector declares the digest, so it is
    computed outside the timed loop; the store still re-hashes every payload inside it)."""
    block = os.urandom(max(size, 8))
    return [
        (data, hashlib.sha256(data).hexdigest())
        for data in ((index.to_bytes(8, "big") + block[8:])[:size] for index in range(n))
    ]


def interleaved_ops_per_second(batch: Batch, variants: dict[str, Variant], chunk: int) -> dict[str, float]:
    elapsed = dict.fromkeys(variants, 0.0)
    for offset in range(0, len(batch), chunk):
        part = batch[offset : offset + chunk]
        names = list(variants)
        # Rotate the order per chunk so no variant always runs first (cold) or last.
        rotation = (offset // chunk) % len(names)
        for name in names[rotation:] + names[:rotation]:
            started = time.perf_counter()
            variants[name](part)
            elapsed[name] += time.perf_counter() - started
    return {name: len(batch) / seconds for name, seconds in elapsed.items()}


def raw_writes(directory: Path, *, fsync_directory: bool) -> Variant:
    directory.mkdir(parents=True)

    def run(batch: Batch) -> None:
        for data, sha256 in batch:
            descriptor = os.open(directory / sha256, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            try:
                os.write(descriptor, data)
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            if fsync_directory:
                directory_descriptor = os.open(directory, os.O_RDONLY)
                try:
                    os.fsync(directory_descriptor)
                finally:
                    os.close(directory_descriptor)

    return run


def store_puts(store: ObjectStore, tenant: str) -> Variant:
    def run(batch: Batch) -> None:
        for data, sha256 in batch:
            store.put_if_absent(evidence_key(tenant, sha256), data, sha256, "application/octet-stream")

    return run


def bench_filesystem(root: Path, n: int, size: int, chunk: int) -> Row:
    store = FilesystemObjectStore(root)
    store_variant = store_puts(store, f"ten_store_{uuid.uuid4().hex[:8]}")
    store_variant(payloads(1, 16))  # creates the store's tenant directory before timing, like the raw ones
    ops = interleaved_ops_per_second(
        payloads(n, size),
        {
            "store": store_variant,
            "baseline": raw_writes(root / "evidence-private" / "ten_raw", fsync_directory=False),
            "durable": raw_writes(root / "evidence-private" / "ten_raw_durable", fsync_directory=True),
        },
        chunk,
    )
    return Row("filesystem", size, n, ops["store"], ops["baseline"], ops["durable"])


def bench_s3_on_moto(n: int, size: int, chunk: int) -> Row:
    from moto.server import ThreadedMotoServer
    from pydantic import SecretStr

    from prw_platform.config import S3Settings
    from prw_platform.storage import S3ObjectStore, build_s3_client

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto logs every request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        settings = S3Settings(
            endpoint_url=f"http://{host}:{port}", access_key_id="bench", secret_access_key=SecretStr("bench")
        )
        client = build_s3_client(settings)
        client.create_bucket(Bucket="evidence-private")

        def raw_puts(batch: Batch) -> None:
            for data, sha256 in batch:
                client.put_object(Bucket="evidence-private", Key=f"ten_raw/{sha256}", Body=data)

        ops = interleaved_ops_per_second(
            payloads(n, size),
            {"store": store_puts(S3ObjectStore(client), "ten_store"), "baseline": raw_puts},
            chunk,
        )
        return Row("s3 on moto (not real S3)", size, n, ops["store"], ops["baseline"])
    finally:
        server.stop()


def print_table(rows: Sequence[Row]) -> None:
    header = (
        f"{'backend':<26} {'size':>7} {'n':>6} {'store ops/s':>12} {'baseline ops/s':>15} {'ratio':>6}"
        f"  {'(+dir fsync ops/s':>18} {'ratio)':>7}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        reference = ""
        if row.durable_create_ops is not None:
            reference = f"  {row.durable_create_ops:>18.0f} {row.store_ops / row.durable_create_ops:>7.2f}"
        print(
            f"{row.backend:<26} {row.size:>7} {row.n:>6} {row.store_ops:>12.0f} {row.baseline_ops:>15.0f}"
            f" {row.store_ops / row.baseline_ops:>6.2f}{reference}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="puts per size and variant (default 2000)")
    parser.add_argument("--sizes", default="4096,65536", help="payload sizes in bytes, comma separated")
    parser.add_argument("--chunk", type=int, default=100, help="operations per interleaved chunk")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to write (default: the system temp dir)"
    )
    parser.add_argument("--s3", action="store_true", help="also measure the S3 backend against moto")
    parser.add_argument("--s3-n", type=int, default=300, help="puts per size against moto (default 300)")
    parser.add_argument(
        "--smoke", action="store_true", help="a tiny run that checks the benchmark works (20 puts, 4 KiB)"
    )
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.n, arguments.s3_n, arguments.sizes, arguments.chunk = 20, 10, "4096", 10
    sizes = [int(size) for size in arguments.sizes.split(",")]

    rows = []
    with tempfile.TemporaryDirectory(prefix="prw-bench-", dir=arguments.dir) as scratch:
        print(f"filesystem scratch directory: {scratch}")
        for size in sizes:
            rows.append(bench_filesystem(Path(scratch) / f"size-{size}", arguments.n, size, arguments.chunk))
    if arguments.s3:
        rows.extend(bench_s3_on_moto(arguments.s3_n, size, arguments.chunk) for size in sizes)
    print()
    print_table(rows)
    print()
    print("baseline: filesystem = create + write + fsync + close of the same bytes in the same tree")
    print("          (+dir fsync: the same plus the directory fsync a durable new name needs);")
    print("          s3 on moto = unconditional put_object of the same bytes to the same moto server.")


if __name__ == "__main__":
    main()

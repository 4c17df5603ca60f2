"""Product rebuild throughput: snapshot export + shadow load + cutover of N aggregates, against a
COPY of the same rows into a plain table in the same run.

    python bench/bench_rebuild.py [--n 1000000] [--database-url URL] [--smoke]

The script creates a scratch main + control database pair (on the server of ``--database-url``, or on a throwaway
embedded server), provisions a catalog, writes N accepted catalog items straight into the resolver's tables (as the
owner, ``INSERT ... SELECT generate_series``: the bench measures the rebuild, not decisions), serves the intake
origin (the export API) on loopback, and runs ``ProductRebuild.run`` as the product principal over HTTP, exactly as
``prw product rebuild`` does: request the export, the resolver's ``exports`` stage builds it (one REPEATABLE READ
snapshot, a checksummed JSON Lines object per aggregate type), download and verify the objects, load them into
generation 2 (validated events, set-based upserts of 5,000 rows per statement, applied revisions included), catch
up the (empty) tail, cut over. Then the baseline: the same N rows (item id, revision, status, fields), prepared in
memory beforehand, COPYed into a plain table with the projection's primary key.

Printed: wall time and rows/s of each phase and of the whole rebuild, COPY rows/s, and the ratio rebuild/COPY.
Absolute numbers depend on the machine. No assertions: nothing here is a test.
"""

from __future__ import annotations

import argparse
import atexit
import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import bench_spine
import psycopg

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import bootstrap
from prw_platform.config import Settings
from prw_platform.db.urls import with_database
from prw_platform.product.gaps import HttpExportSource
from prw_platform.product.rebuild import HttpSnapshotSource, ProductRebuild
from prw_platform.product.rebuild.client import Manifest, ManifestObject
from prw_platform.product.scopes import project_catalog
from prw_platform.runtime import run_stage
from prw_platform.services import PRODUCT_SCOPES, CatalogSpec, ClientSpec, SourceSpec

TENANT, CATALOG, SOURCE = "ten_bench", "cat_bench", "src_bench_web"

ITEMS = """
INSERT INTO resolver.catalog_item (tenant_id, catalog_id, item_id, revision, status, profile, title, brand,
        identifiers, attributes, created_at, updated_at)
SELECT %(tenant)s, %(catalog)s, 'itm_bench_' || lpad(g::text, 8, '0'), 1 + g %% 3, 'active', 'np_storage@2',
       'Strata P5 ' || g || ' TB', 'Corvana',
       jsonb_build_object('gtin', lpad(g::text, 14, '0'), 'mpn', 'CVN-SP5-' || g),
       jsonb_build_object('storage:capacity',
           jsonb_build_object('value', (g * 1000)::text, 'unit', 'GB', 'definition_version', 1)),
       now(), now()
FROM generate_series(1, %(n)s) AS g
"""


def server_admin_url(database_url: str | None) -> tuple[str, str]:
    if database_url:
        return with_database(database_url, "postgres"), "PostgreSQL at --database-url"
    from prw_platform.db.embedded import EmbeddedPostgres

    root = Path(tempfile.mkdtemp(prefix="prw-bench-rebuild-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return EmbeddedPostgres(root / "pg", keep_running=False).start(), "embedded PostgreSQL (pgserver)"


@contextmanager
def scratch_settings(admin_url: str, work: Path) -> Iterator[Settings]:
    """A migrated main + control database pair of its own (bench_spine.scratch_settings); dropped afterwards."""
    with bench_spine.scratch_settings(admin_url, work / "data", "rebuild") as settings:
        yield settings


class _TimedSource(HttpSnapshotSource):
    """Notes when the manifest became ready (the end of the export phase) and keeps the catalog_item object (the
    baseline COPYs the same rows)."""

    ready_at: float | None = None
    items: bytes = b""

    def object_data(self, export_id: str, obj: ManifestObject) -> bytes:
        data = super().object_data(export_id, obj)
        if obj.aggregate == "catalog_item":
            self.items = data
        return data

    def manifest(self, export_id: str) -> Manifest | None:
        found = super().manifest(export_id)
        if found is not None and self.ready_at is None:
            self.ready_at = time.perf_counter()
        return found


def run(n: int, database_url: str | None) -> None:
    admin_url, where = server_admin_url(database_url)
    with (
        tempfile.TemporaryDirectory(prefix="prw-bench-rebuild-") as work,
        scratch_settings(admin_url, Path(work)) as settings,
    ):
        with bootstrap(settings) as platform:
            provisioned = platform.catalogs.provision(
                CatalogSpec(TENANT, CATALOG, "Bench", "manual", (SourceSpec(SOURCE, "Bench web"),))
            )
            project_catalog(platform.product_db, TENANT, CATALOG, provisioned.stream.history_epoch)
            client = platform.clients.create(
                ClientSpec(TENANT, CATALOG, "product", "product_live", (), PRODUCT_SCOPES)
            )
            with psycopg.connect(platform.urls.main, autocommit=True) as owner:
                owner.execute(ITEMS, {"tenant": TENANT, "catalog": CATALOG, "n": n})  # type: ignore[call-overload]
                owner.execute("VACUUM ANALYZE resolver.catalog_item")
                version = owner.execute("SHOW server_version").fetchone()
            with BackgroundServer(compose.intake_app(platform)) as intake:
                export = HttpExportSource(intake.url, client.client_id, client.client_secret, timeout=600)
                source = _TimedSource(export)
                marks: dict[str, float] = {}

                def on_progress(phase: str, done: int, total: int | None) -> None:
                    marks.setdefault(phase, time.perf_counter())
                    marks[f"{phase}:last"] = time.perf_counter()

                rebuild = ProductRebuild(
                    platform.product_db,
                    source_factory=lambda: source,
                    sleep=lambda seconds: run_stage(platform, "exports"),
                )
                started = time.perf_counter()
                result = rebuild.run(TENANT, CATALOG, on_progress=on_progress)
                finished = time.perf_counter()
                data = source.items
                export.close()
        rows = []
        for line in data.decode().splitlines():
            entry = json.loads(line)
            payload = entry["payload"]
            rows.append((entry["aggregate"]["id"], entry["aggregate"]["revision"], payload["status"], line))
        with psycopg.connect(settings.database_url or "", autocommit=True) as owner:  # type: ignore[arg-type]
            owner.execute(
                """CREATE TABLE bench_copy (tenant_id text NOT NULL, catalog_id text NOT NULL,
                       generation integer NOT NULL, item_id text NOT NULL, revision bigint NOT NULL,
                       status text NOT NULL, fields jsonb NOT NULL,
                       PRIMARY KEY (tenant_id, catalog_id, generation, item_id))"""
            )
            copy_started = time.perf_counter()
            with (
                owner.cursor() as cur,
                cur.copy(
                    "COPY bench_copy (tenant_id, catalog_id, generation, item_id, revision, status, fields) FROM STDIN"
                ) as copy,
            ):
                for item_id, revision, status, fields in rows:
                    copy.write_row((TENANT, CATALOG, 2, item_id, revision, status, fields))
            copy_seconds = time.perf_counter() - copy_started

    assert source.ready_at is not None
    export_s = source.ready_at - started
    load_s = marks.get("load:last", finished) - source.ready_at
    cutover_s = finished - marks.get("load:last", source.ready_at)
    total_s = finished - started
    print(f"{where}, server {version[0] if version else '?'}; N={n} catalog items, W={result.start_position}")
    print(f"{'phase':<40} {'seconds':>9} {'rows/s':>12}")
    for name, seconds in (
        ("export (request, snapshot, objects)", export_s),
        ("shadow load (download, verify, upsert)", load_s),
        ("catch up + cutover", cutover_s),
        ("rebuild, end to end", total_s),
        ("COPY of the same rows (baseline)", copy_seconds),
    ):
        print(f"{name:<40} {seconds:>9.2f} {n / seconds:>12,.0f}")
    print(f"rebuild/COPY rows/s ratio: {(n / total_s) / (n / copy_seconds):.3f}")
    print(f"generation {result.previous_generation} -> {result.generation}, loaded {result.loaded_rows} rows")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1_000_000, help="catalog items to export, load and cut over")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--smoke", action="store_true", help="a tiny run that only checks the script works")
    args = parser.parse_args()
    run(1_000 if args.smoke else args.n, args.database_url)


if __name__ == "__main__":
    main()

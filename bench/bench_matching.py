"""What ``prw eval matching`` costs, beside the bare SQL work of the same evaluation in the same run (the eval
commands' wall time).

    python bench/bench_matching.py [--listings 702] [--rounds 2] [--database-url URL] [--smoke]

On the bundled Abt-Buy validation split (tests/fixtures/eval/abt_buy: 1,081 catalog rows, the 702 listings the
pairs name), on one PostgreSQL server:

* ``prw eval matching``: the command as a fresh process (start-up, plugin loading, migrations of a fresh
  database, loading the catalog, identifying every listing, the table): wall time;
* in process, the command's two phases through ``Platform.matching_bench`` (the code the command runs):
  ``load catalog`` (one decision per record: AW-01 under RLS, with its outbox events) and ``identify`` (per
  listing: the identity stage's candidate path, pg_trgm candidates with brand and model-number tokens, then the
  installed identity rules; one read-only transaction each);
* the baseline, on a plain scratch database of the same server: the same records written by one bare
  ``INSERT`` + ``COMMIT`` each into a two-column table, then, per listing, the five most similar titles by
  pg_trgm (``ORDER BY title <-> %s LIMIT 5`` on a GiST trigram index, as the platform's, one read-only
  transaction each); on a server without pg_trgm (the embedded one) the same trigram similarity is computed in
  Python over all rows.

Each round runs the command, the in-process phases (the order alternates between rounds) and the baseline. It
prints, per round, each phase beside its baseline as a ratio and the command's wall time beside the in-process
total; the command's wall time as a ratio to the whole baseline (of the fastest round); then the evaluation's
scores (recall@1 / @5, automatic mappings) as measured by the in-process run. Scratch databases are dropped at the
end. ``--smoke`` runs one round of 20 listings and only the catalog rows they and 30 others name. Absolute
numbers depend on the machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psycopg
from bench_spine import scratch_platform, server_admin_url
from psycopg import sql

from prw_cli.evaluation import matching as matching_eval
from prw_platform.db.urls import with_database
from prw_platform.services import ListingIdentity, Record

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "tests" / "fixtures" / "eval" / "abt_buy"
PRW = str(Path(sys.executable).parent / "prw")
TENANT = "ten_bench"


def _write(path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _subset(scratch: Path, listings: int, smoke: bool) -> tuple[Path, Path, Path]:
    """The pairs of the first ``listings`` listings (and, with --smoke, only the catalog rows they name plus 30)
    as tables of their own, in the fixture's layout."""
    with (DATASET / "valid.csv").open(encoding="utf-8", newline="") as handle:
        pairs = list(csv.DictReader(handle))
    chosen: dict[str, None] = {}
    for row in pairs:
        if row["rtable_id"] not in chosen and len(chosen) >= listings:
            continue
        chosen[row["rtable_id"]] = None
    kept = [row for row in pairs if row["rtable_id"] in chosen]
    catalog = list(csv.DictReader((DATASET / "tableA.csv").open(encoding="utf-8", newline="")))
    if smoke:
        named = {row["ltable_id"] for row in kept}
        catalog = [row for n, row in enumerate(catalog) if row["id"] in named or n < 30]
    listing_rows = list(csv.DictReader((DATASET / "tableB.csv").open(encoding="utf-8", newline="")))
    return (
        _write(scratch / "catalog.csv", ["id", "name"], [(r["id"], r["name"]) for r in catalog]),
        _write(scratch / "listings.csv", ["id", "name"], [(r["id"], r["name"]) for r in listing_rows]),
        _write(
            scratch / "pairs.csv",
            ["ltable_id", "rtable_id", "label"],
            [(r["ltable_id"], r["rtable_id"], r["label"]) for r in kept],
        ),
    )


@contextmanager
def scratch_database(admin_url: str, label: str) -> Iterator[str]:
    name = f"prw_bench_{label}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_database(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def command_wall_time(admin_url: str, catalog: Path, listings: Path, pairs: Path) -> float:
    """``prw eval matching`` as an operator runs it, on fresh databases of its own."""
    with (
        scratch_database(admin_url, "evalm") as main_url,
        scratch_database(admin_url, "evalc") as control_url,
        tempfile.TemporaryDirectory(prefix="prw-bench-matching-") as data_dir,
    ):
        env = {
            **os.environ,
            "PRW_DATABASE_URL": main_url,
            "PRW_CONTROL_DATABASE_URL": control_url,
            "PRW_DATA_DIR": data_dir,
        }
        started = time.perf_counter()
        subprocess.run(
            [
                PRW,
                "eval",
                "matching",
                "--catalog",
                str(catalog),
                "--listings",
                str(listings),
                "--pairs",
                str(pairs),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        return time.perf_counter() - started


def trigrams(text: str) -> set[str]:
    """pg_trgm's trigrams: each lower-cased word padded with two spaces before and one after."""
    found: set[str] = set()
    for word in re.findall(r"[^\W_]+", text.lower()):
        padded = f"  {word} "
        found.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return found


def baseline(
    admin_url: str, records: Sequence[tuple[str, str]], queries: Sequence[str]
) -> tuple[float, float, bool]:
    """(load s, rank s, pg_trgm used): the bare SQL of the same evaluation on a plain scratch database."""
    with scratch_database(admin_url, "bare") as url, psycopg.connect(url) as conn:
        with conn.transaction():
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                trgm = True
            except psycopg.Error:
                trgm = False
        if not trgm:
            conn.rollback()
        conn.execute("CREATE TABLE item (id text PRIMARY KEY, title text NOT NULL)")
        if trgm:
            conn.execute("CREATE INDEX item_title_trgm ON item USING gist (title gist_trgm_ops)")
        conn.commit()
        started = time.perf_counter()
        for record_id, title in records:
            with conn.transaction():
                conn.execute("INSERT INTO item (id, title) VALUES (%s, %s)", (record_id, title))
        load = time.perf_counter() - started
        started = time.perf_counter()
        for query in queries:
            with conn.transaction():
                if trgm:
                    conn.execute(
                        "SELECT id, similarity(title, %s) FROM item ORDER BY title <-> %s LIMIT 5",
                        (query, query),
                    ).fetchall()
                else:
                    rows = conn.execute("SELECT id, title FROM item").fetchall()
                    wanted = trigrams(query)
                    sorted(
                        (
                            (len(wanted & (t := trigrams(title))) / (len(wanted | t) or 1), rid)
                            for rid, title in rows
                        ),
                        reverse=True,
                    )[:5]
        return load, time.perf_counter() - started, trgm


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--listings", type=int, default=702)
    parser.add_argument("--rounds", type=int, default=2, help="rounds; the order alternates between rounds")
    parser.add_argument(
        "--database-url", default=None, help="a PostgreSQL server to create scratch databases on"
    )
    parser.add_argument("--smoke", action="store_true", help="20 listings: checks the script runs")
    args = parser.parse_args()
    admin_url, where = server_admin_url(args.database_url)

    with tempfile.TemporaryDirectory() as scratch:
        catalog_csv, listings_csv, pairs_csv = _subset(
            Path(scratch), 20 if args.smoke else args.listings, args.smoke
        )
        catalog = matching_eval.load_table(catalog_csv)
        listing_rows = matching_eval.load_table(listings_csv)
        pairs = matching_eval.load_pairs(pairs_csv, catalog, listing_rows)
        listings = [listing_rows[listing_id] for listing_id in pairs.listings]

        records = [(r.record_id, r.title) for r in catalog.values()]
        queries = [r.title for r in listings]
        rounds = []
        for round_ in range(1 if args.smoke else args.rounds):
            # Alternate which runs first, so a busy moment of the machine does not always hit the same one.
            if round_ % 2:
                load, identify, results = in_process(admin_url, catalog, listings)
                command = command_wall_time(admin_url, catalog_csv, listings_csv, pairs_csv)
            else:
                command = command_wall_time(admin_url, catalog_csv, listings_csv, pairs_csv)
                load, identify, results = in_process(admin_url, catalog, listings)
            bare_load, bare_rank, trgm = baseline(admin_url, records, queries)
            rounds.append((command, load, identify, bare_load, bare_rank))

    scores = matching_eval.score(results, pairs)
    print(
        f"abt_buy valid: {len(listings)} listings against {len(catalog)} catalog rows, on {where} "
        f"(pg_trgm: {'yes' if trgm else 'no, Python trigrams in the baseline'}), {len(rounds)} round(s)"
    )
    print(f"{'phase (round)':<44}{'ours s':>10}{'baseline s':>12}{'ratio':>8}")
    for n, (command, load, identify, bare_load, bare_rank) in enumerate(rounds, start=1):
        in_process_s = load + identify
        print(f"{f'load catalog ({n})':<44}{load:>10.2f}{bare_load:>12.2f}{load / bare_load:>8.2f}")
        print(f"{f'identify ({n})':<44}{identify:>10.2f}{bare_rank:>12.2f}{identify / bare_rank:>8.2f}")
        print(
            f"{f'prw eval matching vs in process ({n})':<44}{command:>10.2f}{in_process_s:>12.2f}"
            f"{command / in_process_s:>8.2f}"
        )
    best = min(rounds)
    print(f"ratio prw eval matching / bare SQL baseline (fastest round): {best[0] / (best[3] + best[4]):.2f}")
    print(
        f"scores: recall@1 {scores.recall_at_1:.3f}, recall@5 {scores.recall_at_5:.3f} of {scores.matches} "
        f"labelled matches; automatic mappings {scores.automatic} (precision {scores.precision:.3f})"
    )


def in_process(
    admin_url: str, catalog: dict[str, Record], listings: list[Record]
) -> tuple[float, float, list[ListingIdentity]]:
    """The command's two phases through ``Platform.matching_bench``, on fresh databases."""
    with scratch_platform(admin_url, "matching") as platform:
        bench = platform.matching_bench(TENANT, "cat_bench_matching")
        started = time.perf_counter()
        bench.load_catalog(list(catalog.values()), lambda record: None)
        load = time.perf_counter() - started
        started = time.perf_counter()
        results = [bench.identify(listing) for listing in listings]
        return load, time.perf_counter() - started, results


if __name__ == "__main__":
    main()

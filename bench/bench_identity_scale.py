"""Identity candidates at catalog scale: candidate recall and listings identified per second with 100,000 items,
beside the bare SQL similarity query on the same data in the same run.

    python bench/bench_identity_scale.py [--items 100000] [--listings 10000] [--database-url URL] [--smoke]

The catalog: every catalog record of the two bundled matching benchmarks (tests/fixtures/eval: Abt-Buy's 1,081
and Amazon-Google's 1,363 records), plus generated near-duplicates up to ``--items``: a record's title with a
model number's last digit changed, a colour or a capacity swapped, or a word added ("kit", "bundle", "2 pack"):
the distractors a real catalog has (other colours and sizes of one model). The listings: the benchmarks'
listing records that have a labelled match (train and valid pairs), cycled up to ``--listings``, each with the
catalog record it matches, so recall is known at this scale.

Items are bulk-loaded with COPY into ``resolver.catalog_item`` as the database owner (the decision path's cost
per item is what ``bench_decisions.py`` measures; here the question is the read path over a large catalog).
Then, per listing, one read-only transaction each:

* **platform**: the identity stage's candidate path (``identity.candidate_identity``): the pg_trgm pool (50
  nearest titles on the GiST index plus titles containing a model-number token, under row-level security), the
  20 best by the candidate score, ``scored_match@1``'s probability for each and its auto-map verdict;
* **bare**: ``SELECT id FROM item ORDER BY title <-> %s LIMIT 5`` on a plain table of the same titles with a GiST
  trigram index, on a scratch database of the same server.

It prints listings per second for both and their ratio, recall@1 / @5 of the true record among each one's first
five, and the automatic mappings the rule made (right / wrong against the labels). ``--smoke``: 3,000 items,
150 listings. Needs a server with pg_trgm (the embedded one has none). Nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
from bench_matching import scratch_database
from bench_spine import scratch_platform, server_admin_url

from prw_platform.plugins import IdentityEvidence
from prw_platform.resolver.resolution.identity import candidate_identity

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "fixtures" / "eval"
TENANT, CATALOG = "ten_bench", "cat_bench_scale"
_DIGIT = re.compile(r"\d")
_COLOURS = ("black", "white", "silver", "red", "blue", "gray")
_EXTRA = ("kit", "bundle", "2 pack", "refurbished", "with case", "pro")


@dataclass(frozen=True, slots=True)
class Listing:
    title: str
    truth: str


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _title(row: dict[str, str]) -> str:
    return row.get("name") or row.get("title") or ""


def benchmark_records() -> tuple[dict[str, str], list[Listing]]:
    """Catalog record key -> title, and the listings that have a labelled match (with the key they match)."""
    catalog: dict[str, str] = {}
    listings: list[Listing] = []
    for folder in sorted(p for p in DATA.iterdir() if (p / "tableA.csv").exists()):
        for row in _rows(folder / "tableA.csv"):
            catalog[f"{folder.name}:{row['id']}"] = _title(row)
        titles = {row["id"]: _title(row) for row in _rows(folder / "tableB.csv")}
        seen: set[str] = set()
        for split in ("train", "valid"):
            for pair in _rows(folder / f"{split}.csv"):
                if pair["label"] == "1" and pair["rtable_id"] not in seen:
                    seen.add(pair["rtable_id"])
                    listings.append(Listing(titles[pair["rtable_id"]], f"{folder.name}:{pair['ltable_id']}"))
    return catalog, listings


def perturbed(title: str, rng: random.Random) -> str:
    """A near-duplicate of ``title``: another variant of the same kind of product."""
    words = title.split()
    choice = rng.randrange(4)
    if choice == 0 and any(_DIGIT.search(w) for w in words):
        at = rng.choice([i for i, w in enumerate(words) if _DIGIT.search(w)])
        digits = [m.start() for m in _DIGIT.finditer(words[at])]
        pos = digits[-1]
        words[at] = (
            words[at][:pos] + str((int(words[at][pos]) + rng.randrange(1, 9)) % 10) + words[at][pos + 1 :]
        )
    elif choice == 1:
        colours = [i for i, w in enumerate(words) if w in _COLOURS]
        if colours:
            words[rng.choice(colours)] = rng.choice(_COLOURS)
        else:
            words.insert(rng.randrange(len(words) + 1), rng.choice(_COLOURS))
    elif choice == 2:
        numbers = [i for i, w in enumerate(words) if w.isdigit()]
        if numbers:
            at = rng.choice(numbers)
            words[at] = str(int(words[at]) * 2)
        else:
            words.append(rng.choice(_EXTRA))
    else:
        words.append(rng.choice(_EXTRA))
    return " ".join(words)


def catalog_items(catalog: dict[str, str], size: int, seed: int = 7) -> Iterator[tuple[str, str]]:
    """(item id, title): every benchmark record, then near-duplicates of random records up to ``size``."""
    rng = random.Random(seed)
    keys = sorted(catalog)
    for n, key in enumerate(keys):
        yield f"itm_rec{n:07d}", catalog[key]
    for n in range(max(0, size - len(keys))):
        yield f"itm_gen{n:07d}", perturbed(catalog[rng.choice(keys)], rng)


def load_items(url: str, items: list[tuple[str, str]]) -> float:
    """COPY the items into resolver.catalog_item as the owner; returns seconds."""
    started = time.perf_counter()
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        with cur.copy(
            "COPY resolver.catalog_item (tenant_id, catalog_id, item_id, revision, status, profile, title, brand,"
            " identifiers, attributes, created_at, updated_at) FROM STDIN"
        ) as copy:
            for item_id, title in items:
                brand = title.split()[0] if title.split() else None
                copy.write_row(
                    (
                        TENANT,
                        CATALOG,
                        item_id,
                        1,
                        "active",
                        "np_core@1",
                        title,
                        brand,
                        "{}",
                        "{}",
                        "now",
                        "now",
                    )
                )
        conn.execute("ANALYZE resolver.catalog_item")
    return time.perf_counter() - started


def platform_path(
    admin_url: str, items: list[tuple[str, str]], listings: list[Listing], truth: dict[str, str]
) -> dict[str, float]:
    with scratch_platform(admin_url, "idscale") as platform:
        platform.matching_bench(TENANT, CATALOG)  # provisions the catalog, its sources and its stream
        load = load_items(platform.settings.database_url, items)
        stream = platform.streams(TENANT, CATALOG)
        rules = platform.registry.identity_rules
        found = {1: 0, 5: 0}
        right = wrong = 0
        started = time.perf_counter()
        for n, listing in enumerate(listings, start=1):
            evidence = IdentityEvidence(listing.title, None, None, None, ())
            candidates, ruled = platform.resolver_db.run(
                lambda conn, e=evidence: candidate_identity(conn, stream, rules, e),
                tenant_id=TENANT,
                read_only=True,
            )
            ranked = [truth.get(c.item_id) for c in candidates]
            found[1] += listing.truth in ranked[:1]
            found[5] += listing.truth in ranked[:5]
            if ruled is not None:
                right += truth.get(ruled[1].item_id) == listing.truth
                wrong += truth.get(ruled[1].item_id) != listing.truth
            if n % 500 == 0:
                print(f"  platform: {n}/{len(listings)} listings", file=sys.stderr, flush=True)
        seconds = time.perf_counter() - started
    return {
        "load": load,
        "seconds": seconds,
        "recall1": found[1] / len(listings),
        "recall5": found[5] / len(listings),
        "right": right,
        "wrong": wrong,
    }


def bare_path(
    admin_url: str, items: list[tuple[str, str]], listings: list[Listing], truth: dict[str, str]
) -> dict[str, float]:
    with scratch_database(admin_url, "idscale_bare") as url, psycopg.connect(url) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        conn.execute("CREATE TABLE item (id text PRIMARY KEY, title text NOT NULL)")
        with conn.cursor().copy("COPY item (id, title) FROM STDIN") as copy:
            for item_id, title in items:
                copy.write_row((item_id, title))
        conn.execute("CREATE INDEX item_title_trgm ON item USING gist (title gist_trgm_ops)")
        conn.execute("ANALYZE item")
        conn.commit()
        found = {1: 0, 5: 0}
        started = time.perf_counter()
        for listing in listings:
            with conn.transaction():
                rows = conn.execute(
                    "SELECT id FROM item ORDER BY title <-> %s LIMIT 5", (listing.title,)
                ).fetchall()
            ranked = [truth.get(row[0]) for row in rows]
            found[1] += listing.truth in ranked[:1]
            found[5] += listing.truth in ranked[:5]
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "recall1": found[1] / len(listings), "recall5": found[5] / len(listings)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--listings", type=int, default=10_000)
    parser.add_argument(
        "--database-url", default=None, help="a PostgreSQL server (with pg_trgm) for scratch databases"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="3,000 items, 150 listings: checks the script runs"
    )
    args = parser.parse_args()
    items_wanted, listings_wanted = (3_000, 150) if args.smoke else (args.items, args.listings)
    admin_url, where = server_admin_url(args.database_url)
    catalog, matched = benchmark_records()
    items = list(catalog_items(catalog, items_wanted))
    keys = sorted(catalog)
    truth = {f"itm_rec{n:07d}": key for n, key in enumerate(keys)}
    listings = [matched[n % len(matched)] for n in range(listings_wanted)]
    print(
        f"{where}: {len(items):,} items ({len(keys):,} benchmark records), {len(listings):,} listings",
        flush=True,
    )
    platform = platform_path(admin_url, items, listings, truth)
    bare = bare_path(admin_url, items, listings, truth)
    rate, bare_rate = len(listings) / platform["seconds"], len(listings) / bare["seconds"]
    print(
        f"load (COPY as owner)      {platform['load']:8.1f} s  ({len(items) / platform['load']:,.0f} items/s)"
    )
    print(
        f"platform candidate path   {rate:8.1f} listings/s   recall@1 {platform['recall1']:.3f}  recall@5 {platform['recall5']:.3f}"
    )
    print(
        f"bare nearest-5 query      {bare_rate:8.1f} listings/s   recall@1 {bare['recall1']:.3f}  recall@5 {bare['recall5']:.3f}"
    )
    print(f"ratio platform / bare     {rate / bare_rate:8.3f}")
    judged = platform["right"] + platform["wrong"]
    print(
        f"automatic mappings        {judged:,} of {len(listings):,} listings: {platform['right']:,} right,"
        f" {platform['wrong']:,} wrong" + (f" (precision {platform['right'] / judged:.4f})" if judged else "")
    )


if __name__ == "__main__":
    main()

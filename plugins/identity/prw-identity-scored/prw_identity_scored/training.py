"""Fit the shipped generation from matching benchmarks: ``python -m prw_identity_scored.training``.

    python -m prw_identity_scored.training --data tests/fixtures/eval --out \
        plugins/identity/prw-identity-scored/prw_identity_scored/default_generation.json

Benchmarks in DeepMatcher's layout (``tableA.csv`` the catalog, ``tableB.csv`` the listings, ``train.csv`` and
``valid.csv`` labelled pairs). For each listing the pairs name, the candidates are found as the platform finds
them (the 50 nearest titles by trigram similarity plus every record sharing a model number, ranked by the
platform's candidate score, the first ``POOL`` offered), and every candidate the pairs label becomes one
training row. The model is fitted on the ``train`` pairs of every benchmark together; the auto-map band is the
one of most coverage on the ``valid`` pairs whose precision meets ``--precision`` on each benchmark. The test
splits are never read.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from prw_identity_scored.features import Title, compare
from prw_identity_scored.fitting import BandPoint, Outcome, band_curve, fit_model, generation, lower_bound
from prw_identity_scored.generation import Generation

#: Candidates the platform offers the rules (``resolver/resolution/candidates.py``: MAX_POOL).
POOL = 20
_NEAREST = 50


@dataclass(frozen=True, slots=True)
class Benchmark:
    name: str
    catalog: dict[str, Title]
    listings: dict[str, Title]

    @classmethod
    def load(cls, folder: Path) -> Benchmark:
        return cls(folder.name, _table(folder / "tableA.csv"), _table(folder / "tableB.csv"))

    def pairs(self, split: str, folder: Path) -> Pairs:
        return Pairs.load(folder / f"{split}.csv")

    def pool(self, listing: Title) -> list[str]:
        """The candidates the platform would offer for ``listing``, best first."""
        nearest = sorted(self.catalog, key=lambda rid: -_trigram(listing, self.catalog[rid]))[:_NEAREST]
        by_model = [
            rid for rid, record in self.catalog.items() if any(m in record.compact for m in listing.models)
        ]
        found = dict.fromkeys([*nearest, *by_model])
        return sorted(found, key=lambda rid: (-_platform_score(listing, self.catalog[rid]), rid))[:POOL]


@dataclass(frozen=True, slots=True)
class Pairs:
    matches: dict[str, frozenset[str]]
    non_matches: frozenset[tuple[str, str]]
    listings: tuple[str, ...]

    @classmethod
    def load(cls, path: Path) -> Pairs:
        matches: dict[str, set[str]] = {}
        non_matches: set[tuple[str, str]] = set()
        named: dict[str, None] = {}
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                left, right = row["ltable_id"], row["rtable_id"]
                named[right] = None
                if row["label"].strip() == "1":
                    matches.setdefault(right, set()).add(left)
                else:
                    non_matches.add((left, right))
        return cls({k: frozenset(v) for k, v in matches.items()}, frozenset(non_matches), tuple(named))

    def label(self, catalog_id: str, listing_id: str) -> int | None:
        truth = self.matches.get(listing_id, frozenset())
        if catalog_id in truth:
            return 1
        return 0 if truth or (catalog_id, listing_id) in self.non_matches else None

    @property
    def match_count(self) -> int:
        return sum(len(v) for v in self.matches.values())


def _table(path: Path) -> dict[str, Title]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {row["id"]: Title.of(row.get("name") or row.get("title") or "") for row in rows}


def _trigram(a: Title, b: Title) -> float:
    union = a.trigrams | b.trigrams
    return len(a.trigrams & b.trigrams) / len(union) if union else 0.0


def _platform_score(listing: Title, item: Title) -> float:
    """The platform's candidate score (0.6 trigram + 0.3 shared model number + 0.1 same brand)."""
    shared = any(m in item.compact for m in listing.models)
    return (
        0.6 * _trigram(listing, item)
        + (0.3 if shared else 0.0)
        + (0.1 if listing.brand == item.brand else 0.0)
    )


@dataclass(frozen=True, slots=True)
class Scored:
    listing: str
    candidates: tuple[str, ...]
    rows: tuple[tuple[float, ...], ...]


def comparisons(benchmark: Benchmark, pairs: Pairs) -> Iterator[Scored]:
    for listing_id in pairs.listings:
        listing = benchmark.listings[listing_id]
        pool = benchmark.pool(listing)
        compared = compare(listing, [benchmark.catalog[rid] for rid in pool])
        yield Scored(listing_id, tuple(pool), tuple(c.values for c in compared))


def outcomes(model: Generation, scored: Sequence[Scored], pairs: Pairs) -> list[Outcome]:
    found = []
    for entry in scored:
        if not entry.candidates:
            continue
        ranked = sorted(
            ((model.probability(row), rid) for rid, row in zip(entry.candidates, entry.rows, strict=True)),
            key=lambda pr: (-pr[0], pr[1]),
        )
        (best, best_id), runner_up = ranked[0], (ranked[1][0] if len(ranked) > 1 else 0.0)
        label = pairs.label(best_id, entry.listing)
        found.append(Outcome(best, best - runner_up, None if label is None else label == 1))
    return found


def _band_for_all(curves: dict[str, list[BandPoint]], promises: dict[str, float]) -> tuple[float, float]:
    """The (threshold, margin) of most total coverage meeting each promised benchmark's precision."""
    best: tuple[float, float] | None = None
    best_coverage = -1.0
    for threshold, margin in {(p.probability, p.margin) for name in promises for p in curves[name]}:
        chosen = {name: _at(curves[name], threshold, margin) for name in promises}
        if all(point is not None and point.precision >= promises[name] for name, point in chosen.items()):
            coverage = sum(point.coverage for point in chosen.values() if point is not None)
            if coverage > best_coverage:
                best, best_coverage = (threshold, margin), coverage
    if best is None:
        raise SystemExit("no band meets the precision promises on the validation pairs")
    return best


def _at(points: Sequence[BandPoint], threshold: float, margin: float) -> BandPoint | None:
    """What the band (threshold, margin) maps on one benchmark."""
    return min(
        (p for p in points if p.margin == margin and p.probability >= threshold),
        key=lambda p: p.probability,
        default=None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of benchmark folders")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--promise",
        action="append",
        default=[],
        metavar="NAME=PRECISION",
        help="choose the band on this benchmark's valid pairs, meeting this precision (default: every "
        "benchmark at 0.995); benchmarks without a promise are reported only",
    )
    parser.add_argument(
        "--min-margin",
        type=float,
        default=0.5,
        help="the least lead over the runner-up the band may require (default 0.5: never choose between two "
        "likely items, such as two colours of one model)",
    )
    args = parser.parse_args(argv)
    promises = dict(p.split("=") for p in args.promise)
    folders = sorted(p for p in args.data.iterdir() if (p / "train.csv").exists())
    rows: list[tuple[float, ...]] = []
    labels: list[int] = []
    valid: dict[str, tuple[list[Scored], Pairs]] = {}
    counts: dict[str, dict[str, int]] = {}
    for folder in folders:
        benchmark = Benchmark.load(folder)
        train = benchmark.pairs("train", folder)
        before = len(rows)
        for entry in comparisons(benchmark, train):
            for rid, row in zip(entry.candidates, entry.rows, strict=True):
                label = train.label(rid, entry.listing)
                if label is not None:
                    rows.append(row)
                    labels.append(label)
        pairs = benchmark.pairs("valid", folder)
        valid[benchmark.name] = (list(comparisons(benchmark, pairs)), pairs)
        counts[benchmark.name] = {"train_rows": len(rows) - before, "train_matches": sum(labels[before:])}
        print(f"{benchmark.name}: {len(rows) - before} training rows", file=sys.stderr)
    baseline, trees = fit_model(rows, labels)
    unbanded = generation(0, baseline, trees, BandPoint(1.0, 1.0, 0, 0, 0, 1.0, 0.0, 0.0), {})
    curves = {
        name: [
            p
            for p in band_curve(outcomes(unbanded, scored, pairs), pairs.match_count)
            if p.margin >= args.min_margin
        ]
        for name, (scored, pairs) in valid.items()
    }
    promised = {name: float(value) for name, value in promises.items()} or dict.fromkeys(curves, 0.995)
    threshold, margin = _band_for_all(curves, promised)
    chosen = {name: _at(points, threshold, margin) for name, points in curves.items()}
    right = sum(chosen[name].right for name in promised if chosen[name])
    judged = right + sum(chosen[name].wrong for name in promised if chosen[name])
    band = BandPoint(
        threshold, margin, 0, right, judged - right, right / judged, lower_bound(right, judged), 0.0
    )
    fitted_on = {
        "model": "train pairs of " + ", ".join(valid),
        "band": "valid pairs of "
        + ", ".join(f"{name} (precision >= {value})" for name, value in promised.items()),
        "counts": counts,
        "valid": {
            name: {"precision": round(p.precision, 4), "coverage": round(p.coverage, 4), "mapped": p.mapped}
            for name, p in chosen.items()
            if p is not None
        },
    }
    document = generation(1, baseline, trees, band, fitted_on).as_json()
    args.out.write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")
    for name, point in chosen.items():
        if point is None:
            print(f"{name}: the band maps nothing", file=sys.stderr)
            continue
        print(
            f"{name}: band p>={threshold:.4f} margin {margin}: precision {point.precision:.4f} "
            f"coverage {point.coverage:.4f} ({point.right} right, {point.wrong} wrong)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``prw eval matching``: a matching benchmark's tables and labelled pairs, and the identity stage's scores.

The layout is DeepMatcher's (Abt-Buy, Amazon-Google): two tables with ``id`` and a title column (``name`` or
``title``), and a pairs file ``ltable_id,rtable_id,label`` whose left ids are rows of the catalog table and right
ids rows of the listings table. The listings evaluated are those the pairs file names.

Scores, over the labelled matches (label 1):

- automatic precision: automatic mappings onto a labelled match / judged automatic mappings. A mapping is judged
  wrong when its pair is labelled 0 or its listing's labelled match is another record (these benchmarks are
  one-to-one); a mapping the pairs say nothing about is unjudged and reported as such;
- coverage: labelled matches mapped automatically / labelled matches;
- recall@k: labelled matches whose catalog record is among the listing's first k review-case candidates.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prw_platform.services import ListingIdentity, Record

_TITLE_COLUMNS = ("name", "title")


class TableError(Exception):
    """A file is not a benchmark table or pairs file."""


@dataclass(frozen=True, slots=True)
class Pairs:
    #: listing record id -> catalog record ids labelled as its match.
    matches: dict[str, frozenset[str]]
    #: Every listing record id the pairs name, in file order.
    listings: tuple[str, ...]
    #: (catalog record id, listing record id) labelled as not the same product.
    non_matches: frozenset[tuple[str, str]] = frozenset()

    def judge(self, catalog_id: str, listing_id: str) -> bool | None:
        """True: a labelled match; False: labelled otherwise; None: the pairs say nothing."""
        truth = self.matches.get(listing_id, frozenset())
        if catalog_id in truth:
            return True
        return False if truth or (catalog_id, listing_id) in self.non_matches else None

    @property
    def match_count(self) -> int:
        return sum(len(records) for records in self.matches.values())


@dataclass(frozen=True, slots=True)
class MatchingScores:
    listings: int
    matches: int
    automatic: int
    automatic_correct: int
    automatic_wrong: int
    recall_at_1: float
    recall_at_5: float

    @property
    def precision(self) -> float:
        judged = self.automatic_correct + self.automatic_wrong
        return self.automatic_correct / judged if judged else 1.0

    @property
    def unjudged(self) -> int:
        return self.automatic - self.automatic_correct - self.automatic_wrong

    @property
    def coverage(self) -> float:
        return self.automatic_correct / self.matches if self.matches else 0.0


def _rows(path: Path, required: Iterable[str]) -> list[dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            columns = set(reader.fieldnames or ())
    except OSError as exc:
        raise TableError(f"{path} cannot be read: {exc}") from exc
    missing = sorted(set(required) - columns)
    if missing:
        raise TableError(f"{path} has no column {', '.join(missing)}")
    return rows


def load_table(path: Path) -> dict[str, Record]:
    """Record id -> record, from a table with ``id`` and ``name`` (or ``title``)."""
    from prw_platform.services import Record  # the database stack loads when a command runs, not for --help

    rows = _rows(path, ("id",))
    column = next((c for c in _TITLE_COLUMNS if rows and c in rows[0]), None)
    if column is None:
        raise TableError(f"{path} has no rows with a title column ({' or '.join(_TITLE_COLUMNS)})")
    return {row["id"]: Record(row["id"], row[column]) for row in rows}


def load_pairs(path: Path, catalog: dict[str, Record], listings: dict[str, Record]) -> Pairs:
    matches: dict[str, set[str]] = {}
    non_matches: set[tuple[str, str]] = set()
    named: dict[str, None] = {}
    for row in _rows(path, ("ltable_id", "rtable_id", "label")):
        left, right = row["ltable_id"], row["rtable_id"]
        if left not in catalog or right not in listings:
            raise TableError(f"{path}: pair {left},{right} names a record that is not in the tables")
        named[right] = None
        if row["label"].strip() == "1":
            matches.setdefault(right, set()).add(left)
        else:
            non_matches.add((left, right))
    return Pairs({k: frozenset(v) for k, v in matches.items()}, tuple(named), frozenset(non_matches))


def score(results: Sequence[ListingIdentity], pairs: Pairs) -> MatchingScores:
    verdicts = [
        pairs.judge(r.automatic.record_id, r.listing.record_id) for r in results if r.automatic is not None
    ]
    found_at = {1: 0, 5: 0}
    for result in results:
        ranked = [c.record_id for c in result.candidates]
        for truth in pairs.matches.get(result.listing.record_id, ()):
            for k in found_at:
                found_at[k] += truth in ranked[:k]
    total = pairs.match_count
    return MatchingScores(
        listings=len(results),
        matches=total,
        automatic=len(verdicts),
        automatic_correct=verdicts.count(True),
        automatic_wrong=verdicts.count(False),
        recall_at_1=found_at[1] / total if total else 0.0,
        recall_at_5=found_at[5] / total if total else 0.0,
    )


def csv_header() -> list[str]:
    return [
        "listing_id",
        "listing_title",
        "true_records",
        "kind",
        "rank",
        "record_id",
        "score",
        "judged",
        "rule",
        "reason",
    ]


def _judged(pairs: Pairs, catalog_id: str, listing_id: str) -> str:
    return {True: "match", False: "non-match", None: ""}[pairs.judge(catalog_id, listing_id)]


def csv_rows(result: ListingIdentity, pairs: Pairs) -> list[list[str]]:
    """One row for the automatic mapping (if any), then one per candidate."""
    listing = result.listing
    truth = " ".join(sorted(pairs.matches.get(listing.record_id, ())))
    head = [listing.record_id, listing.title, truth]
    rows = []
    if result.automatic is not None:
        auto = result.automatic
        judged = _judged(pairs, auto.record_id, listing.record_id)
        rows.append([*head, "automatic", "", auto.record_id, "", judged, auto.rule, auto.rationale])
    for rank, candidate in enumerate(result.candidates, start=1):
        judged = _judged(pairs, candidate.record_id, listing.record_id)
        score = f"{candidate.score}"
        rows.append([*head, "candidate", str(rank), candidate.record_id, score, judged, "", candidate.reason])
    return rows or [[*head, "none", "", "", "", "", "", "no candidate"]]

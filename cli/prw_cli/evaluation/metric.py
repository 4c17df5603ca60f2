"""The metric of Zyte's product extraction benchmark (scrapinghub/product-extraction-benchmark, ``evaluate.py``
and README.rst "Evaluation"), implemented as it is defined there:

- each page has a set of true values per attribute (all are correct) and at most one predicted value;
- per page and attribute (``hard_matching``): no prediction is a false negative when there is a true value; a
  prediction in the set is a true positive; any other prediction is a false positive, *and* a false negative
  when there is a true value (a wrong price costs both precision and recall);
- the counts are summed over the pages; precision = tp / (tp + fp), recall = tp / (tp + fn), F1 their harmonic
  mean; with no error at all (fp = fn = 0) both are 1, with nothing to count (tp = fp = 0, tp = fn = 0) 0;
- price is matched as a Decimal number (``"450"`` equals ``"450.00"``), currency is not evaluated;
- support is the number of pages with at least one true value;
- the spread (``±``) is the standard deviation of each metric over bootstrap resamples of the pages
  (1000, seeded with 42 as upstream).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

Counts = tuple[int, int, int]  # tp, fp, fn


def hard_matching(true: Collection[object], predicted: object | None) -> Counts:
    if predicted is None:
        return (0, 0, 1) if true else (0, 0, 0)
    if predicted in true:
        return 1, 0, 0
    return (0, 1, 1) if true else (0, 1, 0)


def _decimal(text: str) -> Decimal | str:
    try:
        number = Decimal(text)
    except InvalidOperation:
        return text  # never equal to a Decimal: counted as a wrong prediction, not a crash
    return number if number.is_finite() else text


def decimal_matching(true: Collection[str], predicted: str | None) -> Counts:
    return hard_matching(
        {_decimal(value) for value in true}, _decimal(predicted) if predicted is not None else None
    )


Matching = Callable[[Collection[str], str | None], Counts]

#: The evaluated attributes and how each is matched; InStock / OutOfStock are availability per value, as the
#: benchmark reports them.
MATCHING: dict[str, Matching] = {
    "price": decimal_matching,
    "sku": hard_matching,
    "availability": hard_matching,
    "brand": hard_matching,
    "gtin": hard_matching,
    "mpn": hard_matching,
    "InStock": hard_matching,
    "OutOfStock": hard_matching,
}


def precision_score(tp: int, fp: int, fn: int) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fp == 0:
        return 0.0
    return tp / (tp + fp)


def recall_score(tp: int, fp: int, fn: int) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fn == 0:
        return 0.0
    return tp / (tp + fn)


@dataclass(frozen=True, slots=True)
class Scores:
    precision: float
    recall: float
    f1: float


def scores(counts: Sequence[Counts]) -> Scores:
    tp, fp, fn = (sum(column) for column in zip(*counts, strict=True)) if counts else (0, 0, 0)
    precision, recall = precision_score(tp, fp, fn), recall_score(tp, fp, fn)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return Scores(precision, recall, f1)


@dataclass(frozen=True, slots=True)
class AttributeResult:
    attribute: str
    scores: Scores
    spread: Scores  # bootstrap standard deviations
    support: int
    counts: Counts


def evaluate(
    attribute: str, pages: Sequence[tuple[Collection[str], str | None]], n_bootstrap: int = 1000
) -> AttributeResult:
    """One attribute over (true values, predicted value) per page."""
    matching = MATCHING[attribute]
    counts = [matching(true, predicted) for true, predicted in pages]
    support = sum(1 for true, _ in pages if true)
    generator = random.Random(42)
    samples = (
        [scores([counts[generator.randint(0, len(counts) - 1)] for _ in counts]) for _ in range(n_bootstrap)]
        if counts
        else []
    )

    def spread(metric: str) -> float:
        values = [getattr(sample, metric) for sample in samples]
        return statistics.stdev(values) if len(values) > 1 else 0.0

    total: Counts = (
        (sum(c[0] for c in counts), sum(c[1] for c in counts), sum(c[2] for c in counts))
        if counts
        else (0, 0, 0)
    )
    return AttributeResult(
        attribute, scores(counts), Scores(spread("precision"), spread("recall"), spread("f1")), support, total
    )

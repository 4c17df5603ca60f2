"""The Zyte product extraction benchmark's metric (prw_cli.evaluation.metric), on hand-made cases checked by
hand against the definition in the benchmark's evaluate.py / README."""

from __future__ import annotations

import pytest

from prw_cli.evaluation.metric import (
    decimal_matching,
    evaluate,
    hard_matching,
    precision_score,
    recall_score,
    scores,
)


@pytest.mark.parametrize(
    ("true", "predicted", "counts"),
    [
        ({"A1"}, "A1", (1, 0, 0)),  # right
        ({"A1"}, None, (0, 0, 1)),  # missed
        ({"A1"}, "B2", (0, 1, 1)),  # wrong: costs precision and recall
        (set(), "B2", (0, 1, 0)),  # said where nothing is expected
        (set(), None, (0, 0, 0)),  # nothing either way
        ({"A1", "A-1"}, "A-1", (1, 0, 0)),  # any of the true values is right
        ({"a1"}, "A1", (0, 1, 1)),  # exact: case matters
    ],
)
def test_hard_matching(true: set[str], predicted: str | None, counts: tuple[int, int, int]) -> None:
    assert hard_matching(true, predicted) == counts


@pytest.mark.parametrize(
    ("true", "predicted", "counts"),
    [
        ({"450"}, "450.00", (1, 0, 0)),
        ({"9.49", "12.49"}, "12.490", (1, 0, 0)),
        ({"17.10"}, "18.00", (0, 1, 1)),
        ({"17.10"}, "not a number", (0, 1, 1)),
        ({"17.10"}, "NaN", (0, 1, 1)),
    ],
)
def test_price_is_matched_as_a_decimal(true: set[str], predicted: str, counts: tuple[int, int, int]) -> None:
    assert decimal_matching(true, predicted) == counts


def test_precision_and_recall_edge_cases_as_upstream() -> None:
    assert (precision_score(0, 0, 0), recall_score(0, 0, 0)) == (1.0, 1.0)  # no error at all
    assert (precision_score(0, 0, 3), recall_score(0, 0, 3)) == (0.0, 0.0)
    assert (precision_score(0, 2, 0), recall_score(0, 2, 0)) == (0.0, 0.0)
    assert (precision_score(3, 1, 2), recall_score(3, 1, 2)) == (0.75, 0.6)


def test_scores_sum_the_pages_counts() -> None:
    # 3 right, 1 wrong (fp + fn), 1 missed: P = 3/4, R = 3/5, F1 = 2PR/(P+R) = 2/3.
    result = scores([(1, 0, 0), (1, 0, 0), (1, 0, 0), (0, 1, 1), (0, 0, 1)])
    assert (result.precision, result.recall) == (0.75, 0.6)
    assert result.f1 == pytest.approx(2 / 3)


def test_evaluate_one_attribute_with_support_and_bootstrap_spread() -> None:
    pages = [({"1"}, "1.0"), ({"2"}, "3"), ({"4"}, None), (set(), None), (set(), "5")]
    result = evaluate("price", pages, n_bootstrap=200)
    assert result.counts == (1, 2, 2)
    assert result.support == 3
    assert (result.scores.precision, result.scores.recall) == (1 / 3, 1 / 3)
    assert 0 < result.spread.f1 < 1
    assert evaluate("price", pages, n_bootstrap=200) == result  # seeded: the same spread every run


def test_evaluate_without_bootstrap_has_no_spread() -> None:
    result = evaluate("sku", [({"A"}, "A")], n_bootstrap=0)
    assert (result.scores.f1, result.spread.f1) == (1.0, 0.0)

"""Fitting a generation: the model from labelled comparisons, the auto-map band from held-out predictions.

Needs the ``fit`` extra (scikit-learn). Why these tools:

- **scikit-learn's HistGradientBoostingClassifier** for the model: the signals interact (a shared model number
  outweighs a weak title; a colour conflict matters only between near twins), which a linear model cannot
  express and boosted trees learn from a few thousand labels without tuning; it is deterministic for a fixed
  ``random_state``, and its trees export to plain arrays, so the rule evaluates them without scikit-learn.
  (Splink's Fellegi-Sunter model assumes the comparisons independent given match status, which model-number and
  title signals are not; dedupe's active learning needs a session with a labeller, which the review queue is.)
- **Listing-level selection of the band**: an automatic mapping is one listing's best candidate, so the band is
  chosen on each listing's best candidate (its probability and its lead over the runner-up), scoring a mapping
  right or wrong the way ``prw eval matching`` does; the precision's lower bound is Clopper-Pearson's (scipy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prw_identity_scored.features import FEATURES
from prw_identity_scored.generation import Bands, Generation, Tree

RULE = "scored_match"
#: Margins tried for the auto-map band, with every distinct probability as a threshold.
MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
CONFIDENCE = 0.95
_LEAF = -1


@dataclass(frozen=True, slots=True)
class Outcome:
    """One listing's best candidate, as a band sees it: judged True (right), False (wrong) or None (unknown)."""

    probability: float
    margin: float
    right: bool | None


@dataclass(frozen=True, slots=True)
class BandPoint:
    probability: float
    margin: float
    mapped: int
    right: int
    wrong: int
    precision: float
    lower_bound: float
    coverage: float


def fit_model(
    rows: Sequence[Sequence[float]], labels: Sequence[int], *, seed: int = 0
) -> tuple[float, tuple[Tree, ...]]:
    """Boosted trees on (comparison, label) pairs; returns the baseline log-odds and the exported trees."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_iter=200, learning_rate=0.05, max_leaf_nodes=31, l2_regularization=1.0, random_state=seed
    )
    model.fit(np.asarray(rows, dtype=float), np.asarray(labels, dtype=int))
    return float(np.ravel(model._baseline_prediction)[0]), tuple(_tree(p[0]) for p in model._predictors)


def _tree(predictor: Any) -> Tree:
    nodes = predictor.nodes
    leaf = nodes["is_leaf"].astype(bool)
    return Tree(
        feature=tuple(int(f) for f in nodes["feature_idx"]),
        threshold=tuple(float(t) for t in nodes["num_threshold"]),
        left=tuple(_LEAF if is_leaf else int(i) for i, is_leaf in zip(nodes["left"], leaf, strict=True)),
        right=tuple(_LEAF if is_leaf else int(i) for i, is_leaf in zip(nodes["right"], leaf, strict=True)),
        value=tuple(float(v) for v in nodes["value"]),
    )


def lower_bound(right: int, judged: int, confidence: float = CONFIDENCE) -> float:
    """Clopper-Pearson one-sided lower bound of a precision of ``right`` out of ``judged``."""
    if judged == 0:
        return 0.0
    if right == 0:
        return 0.0
    from scipy.stats import beta

    return float(beta.ppf(1 - confidence, right, judged - right + 1))


def band_curve(outcomes: Sequence[Outcome], matches: int) -> list[BandPoint]:
    """Every (threshold, margin) band: what it maps, its precision and its coverage of ``matches``."""
    points = []
    for margin in MARGINS:
        eligible = sorted((o for o in outcomes if o.margin >= margin), key=lambda o: -o.probability)
        right = wrong = mapped = 0
        for index, outcome in enumerate(eligible):
            mapped += 1
            right += outcome.right is True
            wrong += outcome.right is False
            following = eligible[index + 1].probability if index + 1 < len(eligible) else None
            if following == outcome.probability:
                continue
            judged = right + wrong
            points.append(
                BandPoint(
                    probability=outcome.probability,
                    margin=margin,
                    mapped=mapped,
                    right=right,
                    wrong=wrong,
                    precision=right / judged if judged else 1.0,
                    lower_bound=lower_bound(right, judged),
                    coverage=right / matches if matches else 0.0,
                )
            )
    return points


def choose_band(points: Sequence[BandPoint], precision: float) -> BandPoint | None:
    """The band of most coverage whose precision's lower bound meets ``precision`` (a generation with it can be
    approved); when no band's bound does, the band of most coverage whose measured precision does (its generation
    is proposed but cannot be approved until more labels bound it). Ties: the higher threshold."""
    for meets in (lambda p: p.lower_bound >= precision, lambda p: p.precision >= precision):
        fitting = [p for p in points if p.right > 0 and meets(p)]
        if fitting:
            return max(fitting, key=lambda p: (p.coverage, p.probability, -p.margin))
    return None


def generation(
    number: int, baseline: float, trees: tuple[Tree, ...], band: BandPoint, fitted_on: dict[str, Any]
) -> Generation:
    return Generation(
        rule=RULE,
        number=number,
        features=FEATURES,
        baseline=baseline,
        trees=trees,
        bands=Bands(
            auto_probability=band.probability,
            auto_margin=band.margin,
            estimated_precision=round(band.precision, 6),
            precision_lower_bound=round(band.lower_bound, 6),
        ),
        fitted_on=fitted_on,
    )

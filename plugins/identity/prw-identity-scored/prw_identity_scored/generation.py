"""A generation of the scored rule: the fitted model and the bands, as versioned data.

A generation is a JSON document (``default_generation.json`` ships with the plugin; ``prw identity calibrate``
fits catalog generations from reviewers' labels). It holds:

- ``features``: the feature names the model was fitted on, in order (``features.FEATURES``);
- ``model``: gradient-boosted regression trees on the log-odds (scikit-learn's HistGradientBoostingClassifier,
  exported node by node): the probability is ``sigmoid(baseline + sum of the trees' leaf values)``;
- ``bands``: ``auto_map`` (the probability at or above which, with at least ``margin`` over the runner-up, a
  listing maps automatically) and the precision estimated for it;
- ``fitted_on``: what the model and the bands were fitted and chosen on, for the record;
- ``fingerprint``: the SHA-256 of the model and bands, which names this generation wherever it is cached.

Evaluating the trees needs numpy, not scikit-learn: the rule runs in the resolution worker with the trees
flattened into arrays and walked for every candidate and tree at once (``probabilities``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any

import numpy as np

from prw_identity_scored.features import FEATURES

DEFAULT_GENERATION = "default_generation.json"


class GenerationError(ValueError):
    """A generation document that cannot be used (wrong shape, other features)."""


@dataclass(frozen=True, slots=True)
class Tree:
    """One regression tree, as parallel node arrays; a node whose ``left`` is -1 is a leaf."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def predict(self, row: Sequence[float]) -> float:
        node = 0
        while self.left[node] != -1:
            node = self.left[node] if row[self.feature[node]] <= self.threshold[node] else self.right[node]
        return self.value[node]

    def as_json(self) -> dict[str, list[Any]]:
        return {
            "feature": list(self.feature),
            "threshold": list(self.threshold),
            "left": list(self.left),
            "right": list(self.right),
            "value": list(self.value),
        }


@dataclass(frozen=True, slots=True)
class Bands:
    #: Map automatically at or above this probability...
    auto_probability: float
    #: ...when the runner-up's probability is at least this much lower.
    auto_margin: float
    #: Precision of automatic mappings estimated where the band was chosen, and its lower confidence bound.
    estimated_precision: float
    precision_lower_bound: float


@dataclass(frozen=True, slots=True)
class _Forest:
    """Every tree's nodes in one set of arrays (children as absolute indices, -1 at a leaf) and each tree's root."""

    feature: np.ndarray[Any, np.dtype[np.intp]]
    threshold: np.ndarray[Any, np.dtype[np.float64]]
    left: np.ndarray[Any, np.dtype[np.intp]]
    right: np.ndarray[Any, np.dtype[np.intp]]
    value: np.ndarray[Any, np.dtype[np.float64]]
    roots: np.ndarray[Any, np.dtype[np.intp]]

    @classmethod
    def of(cls, trees: Sequence[Tree]) -> _Forest:
        offsets = np.cumsum([0] + [len(t.left) for t in trees[:-1]], dtype=np.intp)

        def absolute(children: tuple[int, ...], offset: int) -> list[int]:
            return [-1 if child == -1 else child + offset for child in children]

        return cls(
            feature=np.array([f for t in trees for f in t.feature], dtype=np.intp),
            threshold=np.array([x for t in trees for x in t.threshold], dtype=np.float64),
            left=np.array(
                [i for t, o in zip(trees, offsets, strict=True) for i in absolute(t.left, int(o))],
                dtype=np.intp,
            ),
            right=np.array(
                [i for t, o in zip(trees, offsets, strict=True) for i in absolute(t.right, int(o))],
                dtype=np.intp,
            ),
            value=np.array([v for t in trees for v in t.value], dtype=np.float64),
            roots=offsets,
        )

    def raw(self, rows: Sequence[Sequence[float]]) -> np.ndarray[Any, np.dtype[np.float64]]:
        """The sum of every tree's leaf value for each row."""
        matrix = np.asarray(rows, dtype=np.float64)
        count = len(matrix)
        node = np.repeat(self.roots, count)
        row = np.tile(np.arange(count), len(self.roots))
        inner = self.left[node] != -1
        while inner.any():
            at = node[inner]
            goes_left = matrix[row[inner], self.feature[at]] <= self.threshold[at]
            node[inner] = np.where(goes_left, self.left[at], self.right[at])
            inner = self.left[node] != -1
        return self.value[node].reshape(len(self.roots), count).sum(axis=0)


@dataclass(frozen=True)
class Generation:
    rule: str
    number: int
    features: tuple[str, ...]
    baseline: float
    trees: tuple[Tree, ...]
    bands: Bands
    fitted_on: Mapping[str, Any]

    @cached_property
    def fingerprint(self) -> str:
        body = {"model": self._model_json(), "bands": self._bands_json(), "features": list(self.features)}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()

    def probability(self, row: Sequence[float]) -> float:
        return self.probabilities([row])[0]

    def probabilities(self, rows: Sequence[Sequence[float]]) -> list[float]:
        """The match probability of each row: ``sigmoid(baseline + sum of the trees' leaf values)``."""
        if not rows:
            return []
        raw = self.baseline + self._forest.raw(rows)
        return [float(p) for p in 1.0 / (1.0 + np.exp(-np.clip(raw, -700, 700)))]

    @cached_property
    def _forest(self) -> _Forest:
        return _Forest.of(self.trees)

    def _model_json(self) -> dict[str, Any]:
        return {
            "kind": "gradient_boosted_trees",
            "baseline": self.baseline,
            "trees": [tree.as_json() for tree in self.trees],
        }

    def _bands_json(self) -> dict[str, Any]:
        return {
            "auto_map": {"probability": self.bands.auto_probability, "margin": self.bands.auto_margin},
            "estimated_precision": self.bands.estimated_precision,
            "precision_lower_bound": self.bands.precision_lower_bound,
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "generation": self.number,
            "fingerprint": self.fingerprint,
            "features": list(self.features),
            "model": self._model_json(),
            "bands": self._bands_json(),
            "fitted_on": dict(self.fitted_on),
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Generation:
        try:
            features = tuple(document["features"])
            if features != FEATURES:
                raise GenerationError(
                    f"generation {document.get('generation')} was fitted on other features than this rule computes"
                )
            model, bands = document["model"], document["bands"]
            trees = tuple(
                Tree(
                    tuple(int(f) for f in t["feature"]),
                    tuple(float(x) for x in t["threshold"]),
                    tuple(int(i) for i in t["left"]),
                    tuple(int(i) for i in t["right"]),
                    tuple(float(v) for v in t["value"]),
                )
                for t in model["trees"]
            )
            return cls(
                rule=str(document["rule"]),
                number=int(document["generation"]),
                features=features,
                baseline=float(model["baseline"]),
                trees=trees,
                bands=Bands(
                    auto_probability=float(bands["auto_map"]["probability"]),
                    auto_margin=float(bands["auto_map"]["margin"]),
                    estimated_precision=float(bands["estimated_precision"]),
                    precision_lower_bound=float(bands["precision_lower_bound"]),
                ),
                fitted_on=dict(document.get("fitted_on", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, GenerationError):
                raise
            raise GenerationError(f"not a scored-rule generation: {error!r}") from error


def default_generation() -> Generation:
    """The generation this plugin version ships (fitted on the Abt-Buy and Amazon-Google training splits)."""
    text = resources.files("prw_identity_scored").joinpath(DEFAULT_GENERATION).read_text(encoding="utf-8")
    return Generation.from_json(json.loads(text))

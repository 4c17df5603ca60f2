"""scored_match@1: probabilities from a generation's trees, the auto-map band, and the shipped generation."""

from __future__ import annotations

import json
import math

import pytest
from prw_identity_scored import Generation, GenerationError, ScoredMatch, default_generation
from prw_identity_scored.features import FEATURES
from prw_identity_scored.fitting import Outcome, band_curve, choose_band, lower_bound
from prw_identity_scored.generation import Bands, Tree

from prw_platform.plugins import IdentityCandidate, IdentityEvidence, IdentityRule, ScoringIdentityRule

MODEL_EQUAL = FEATURES.index("model_equal")
TRIGRAM_AHEAD = FEATURES.index("title_trigram_ahead")


def _generation(auto: float = 0.9, margin: float = 0.2) -> Generation:
    """One tree: +4 log-odds for an equal model number ahead on title, -4 otherwise."""
    tree = Tree(
        feature=(MODEL_EQUAL, TRIGRAM_AHEAD, 0, 0, 0),
        threshold=(0.5, 0.0, 0.0, 0.0, 0.0),
        left=(4, 3, -1, -1, -1),
        right=(1, 2, -1, -1, -1),
        value=(0.0, 0.0, 4.0, -4.0, -4.0),
    )
    return Generation(
        "scored_match", 7, FEATURES, 0.0, (tree,), Bands(auto, margin, 0.996, 0.98), {"by": "test"}
    )


def _evidence(title: str, *candidates: tuple[str, str]) -> IdentityEvidence:
    offered = tuple(IdentityCandidate(item, 0.5, "search", title=text) for item, text in candidates)
    return IdentityEvidence(title, None, None, None, offered)


def test_the_rule_scores_and_decides() -> None:
    rule = ScoredMatch(_generation())
    assert isinstance(rule, IdentityRule)
    assert isinstance(rule, ScoringIdentityRule)
    evidence = _evidence(
        "canon powershot sx110is silver",
        ("itm_a", "canon powershot sx110is digital camera silver"),
        ("itm_b", "canon powershot sd1100is pink"),
    )
    scores = {s.item_id: s for s in rule.score(evidence)}
    assert scores["itm_a"].probability > 0.98 > 0.02 > scores["itm_b"].probability
    assert any("model number sx110is in both titles" in f for f in scores["itm_a"].evidence)
    verdict = rule.decide(evidence)
    assert verdict is not None
    assert verdict.item_id == "itm_a"
    assert verdict.probability == scores["itm_a"].probability
    assert "generation 7" in verdict.rationale
    assert "auto-map band" in verdict.rationale


def test_below_the_band_or_without_margin_a_reviewer_decides() -> None:
    evidence = _evidence(
        "canon powershot sx110is",
        ("itm_a", "canon powershot sx110is silver"),
        ("itm_b", "canon powershot sx110is black"),
    )
    # Near twins: both score alike, so the margin is not met.
    assert ScoredMatch(_generation(auto=0.5, margin=0.2)).decide(evidence) is None
    single = _evidence("canon powershot sx110is", ("itm_a", "canon powershot sx110is silver"))
    assert ScoredMatch(_generation(auto=0.999)).decide(single) is None
    assert ScoredMatch(_generation(auto=0.9)).decide(single) is not None


def test_identifier_named_candidates_are_left_to_the_strong_identifier_rule() -> None:
    named = IdentityCandidate("itm_a", 1.0, "gtin", title="canon sx110is", matched_on=("gtin",))
    evidence = IdentityEvidence("canon sx110is", None, "00012345678905", None, (named,))
    rule = ScoredMatch(_generation())
    assert rule.score(evidence) == ()
    assert rule.decide(evidence) is None


def test_a_generation_round_trips_and_refuses_other_features() -> None:
    generation = _generation()
    assert Generation.from_json(json.loads(json.dumps(generation.as_json()))) == generation
    other = generation.as_json() | {"features": ["title_trigram"]}
    with pytest.raises(GenerationError, match="other features"):
        Generation.from_json(other)
    with pytest.raises(GenerationError, match="not a scored-rule generation"):
        Generation.from_json({"features": list(FEATURES)})


def test_the_shipped_generation_prefers_the_same_model_over_a_near_title() -> None:
    rule = ScoredMatch(default_generation())
    evidence = _evidence(
        "sony cyber-shot dsc-w120 digital camera black",
        ("itm_same", "sony black cyber-shot digital camera dscw120"),
        ("itm_other", "sony black cyber-shot digital camera dscw150"),
        ("itm_far", "canon powershot a590is digital camera"),
    )
    scores = {s.item_id: s.probability for s in rule.score(evidence)}
    assert scores["itm_same"] > scores["itm_other"] > scores["itm_far"]
    assert min(scores.values()) >= 0.0
    assert max(scores.values()) <= 1.0


def test_band_curve_counts_right_wrong_and_unjudged_per_threshold() -> None:
    outcomes = [
        Outcome(0.99, 0.9, True),
        Outcome(0.95, 0.9, None),
        Outcome(0.9, 0.1, False),
        Outcome(0.8, 0.5, True),
    ]
    points = {(p.probability, p.margin): p for p in band_curve(outcomes, matches=4)}
    at_095 = points[(0.95, 0.0)]
    assert (at_095.mapped, at_095.right, at_095.wrong, at_095.coverage) == (2, 1, 0, 0.25)
    at_080 = points[(0.8, 0.0)]
    assert (at_080.right, at_080.wrong) == (2, 1)
    # A margin of 0.2 leaves the 0.9 mapping (margin 0.1) out: all right.
    assert points[(0.8, 0.2)].wrong == 0
    chosen = choose_band(list(points.values()), precision=0.99)
    assert chosen is not None
    assert chosen.wrong == 0
    assert chosen.right == 2


def test_the_lower_bound_is_below_the_measured_precision() -> None:
    assert lower_bound(0, 0) == 0.0
    assert 0.9 < lower_bound(200, 200) < 1.0
    assert lower_bound(199, 200) < lower_bound(200, 200)


def test_the_forest_walks_every_tree_as_each_tree_alone_would() -> None:
    generation = default_generation()
    rows = [
        [((i * 7 + j * 3) % 11) / 10 - 0.2 for j in range(len(FEATURES))]  # spread over each feature's range
        for i in range(25)
    ]
    one_by_one = [generation.baseline + sum(tree.predict(row) for tree in generation.trees) for row in rows]
    expected = [1 / (1 + math.exp(-raw)) for raw in one_by_one]
    assert generation.probabilities(rows) == pytest.approx(expected, rel=1e-12)
    assert generation.probabilities([]) == []

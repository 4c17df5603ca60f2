"""Calibrating a generation on labels (the bundled Abt-Buy training pairs stand in for reviewers' decisions)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from prw_identity_scored import Generation, ScoredMatch
from prw_identity_scored.calibration import MIN_MATCHES
from prw_identity_scored.training import Benchmark

from prw_platform.plugins import IdentityCandidate, IdentityEvidence, LabelledListing, NotEnoughLabels

FIXTURE = Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "eval" / "abt_buy"
SHOWN = 5


def _labelled(count: int) -> list[LabelledListing]:
    """Listings with the candidates the platform would offer; the first five shown, the true one chosen."""
    benchmark = Benchmark.load(FIXTURE)
    pairs = benchmark.pairs("train", FIXTURE)
    found = []
    for listing_id in [lid for lid in pairs.listings if lid in pairs.matches][:count]:
        pool = benchmark.pool(benchmark.listings[listing_id])
        offered = tuple(IdentityCandidate(r, 0.0, "", title=benchmark.catalog[r].text) for r in pool)
        shown = set(pool[:SHOWN])
        truth = pairs.matches[listing_id]
        evidence = IdentityEvidence(benchmark.listings[listing_id].text, None, None, None, offered)
        found.append(LabelledListing(evidence, frozenset(truth & shown), frozenset(shown - truth)))
    return found


def test_too_few_labels_are_refused_naming_what_is_needed() -> None:
    with pytest.raises(NotEnoughLabels, match=f"at least {MIN_MATCHES}") as refused:
        ScoredMatch().calibrate(_labelled(10), promise=0.95, number=2)
    assert refused.value.need == MIN_MATCHES
    assert refused.value.have < MIN_MATCHES


def test_a_calibrated_generation_is_estimated_out_of_fold_and_read_back_by_the_rule() -> None:
    labelled = _labelled(80)
    calibration = ScoredMatch().calibrate(labelled, promise=0.9, number=3)

    assert calibration.listings == 80
    assert calibration.matches >= MIN_MATCHES
    chosen = calibration.chosen
    assert chosen is not None
    assert chosen.precision >= 0.9
    assert chosen.precision_lower_bound <= chosen.precision
    assert 0 < chosen.coverage <= 1
    assert chosen in calibration.curve
    generation = Generation.from_json(calibration.document)
    assert generation.number == 3
    assert generation.bands.auto_probability == chosen.probability
    assert calibration.document["fingerprint"] == generation.fingerprint
    # The rule reads the catalog's generation from the evidence: its verdict names generation 3.
    rule = ScoredMatch()
    decided = [
        verdict
        for entry in labelled
        if (verdict := rule.decide(replace(entry.evidence, generation=calibration.document))) is not None
    ]
    assert decided
    assert all("generation 3" in verdict.rationale for verdict in decided)

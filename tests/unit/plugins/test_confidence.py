"""Claim ratings: the weighing of several claims, the validity of a rating, the kit that refuses a bad one and the
extraction stage that turns one into a diagnostic instead of failing."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from prw_platform.plugins import (
    DEFAULT_CONFIDENCE,
    Artifact,
    CaptureView,
    Claim,
    Extraction,
    ListingFields,
    claim_confidence,
    confidence_problem,
    publication_thresholds,
    weigh,
)
from prw_platform.plugins.testing import AdapterCase, AdapterContract, claim_matches, registry_with
from prw_platform.resolver.intake.artifacts import StoredArtifact
from prw_platform.resolver.intake.captures import CaptureRecord
from prw_platform.resolver.resolution.extraction import extract
from tests.unit.plugins.fakes import FakeAdapter, FakePlugin

CASE = AdapterCase.from_bytes("page", b"<h1>Kettle</h1>", media_type="text/html")


def test_one_witness_keeps_its_confidence() -> None:
    [only] = weigh([("89.90", 0.85)])
    assert (only.key, only.confidence, only.witnesses) == ("89.90", 0.85, (0,))


def test_witnesses_that_agree_raise_the_confidence_and_a_dissent_lowers_it() -> None:
    agreeing = weigh([("89.90", 0.85), ("89.90", 0.7)])[0].confidence
    disputed = weigh([("89.90", 0.85), ("79.90", 0.7)])[0].confidence
    assert disputed < 0.85 < agreeing
    assert (round(agreeing, 2), round(disputed, 2)) == (0.93, 0.63)


def test_the_most_trusted_value_comes_first_and_a_tie_goes_to_the_value_stated_first() -> None:
    assert [w.key for w in weigh([("a", 0.7), ("b", 0.8), ("a", 0.7)])] == ["a", "b"]
    assert [w.key for w in weigh([("b", 0.7), ("a", 0.7)])] == ["b", "a"]
    assert weigh([]) == []


def test_certain_witnesses_of_different_values_leave_both_values_possible() -> None:
    first, second = weigh([("a", 1.0), ("b", 1.0)])
    assert first.confidence == second.confidence
    assert 0 < first.confidence < 1


def test_an_unrated_claim_counts_at_the_default_confidence() -> None:
    assert claim_confidence(Claim("core:price", "1", "/p")) == DEFAULT_CONFIDENCE
    assert claim_confidence(Claim("core:price", "1", "/p", "meta", 0.4)) == 0.4


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        (Claim("core:price", "1", "/p", "structured", 1.5), "outside [0, 1]"),
        (Claim("core:price", "1", "/p", "structured", -0.1), "outside [0, 1]"),
        (Claim("core:price", "1", "/p", "structured", math.nan), "outside [0, 1]"),
        (Claim("core:price", "1", "/p", "structured", True), "not a number"),  # type: ignore[arg-type]
        (Claim("core:price", "1", "/p", None, 0.8), "without an evidence source"),
        (Claim("core:price", "1", " ", "meta", 0.8), "without an evidence locator"),
        (Claim("core:price", "1", "/p", "rumour", 0.8), "is not one of"),  # type: ignore[arg-type]
    ],
)
def test_a_rating_outside_the_api_is_a_problem(claim: Claim, message: str) -> None:
    problem = confidence_problem(claim)
    assert problem is not None
    assert message in problem


def test_valid_and_unrated_claims_have_no_rating_problem() -> None:
    assert confidence_problem(Claim("core:price", "1", "/p")) is None
    assert confidence_problem(Claim("core:price", "1", "/p", "buy_box")) is None
    assert confidence_problem(Claim("core:price", "1", "/p", "url", 0)) is None
    assert confidence_problem(Claim("core:price", "1", "/p", "text", 1)) is None


def test_publication_thresholds_keep_only_well_formed_entries() -> None:
    @dataclass
    class Profile:
        publication_thresholds: object

    assert publication_thresholds(object()) == {}
    assert publication_thresholds(Profile(["core:price"])) == {}
    declared = {"core:price": 0.8, "core:currency": 2, "core:availability": True, "x": "0.5"}
    assert publication_thresholds(Profile(declared)) == {"core:price": 0.8}


def test_an_expected_claim_matches_on_its_rating_only_where_it_states_one() -> None:
    read = Claim("core:price", "9", "/p", "structured", 0.85)
    assert claim_matches(Claim("core:price", "9", "/p"), read)
    assert claim_matches(Claim("core:price", "9", "/p", "structured", 0.85), read)
    assert not claim_matches(Claim("core:price", "9", "/p", "meta"), read)
    assert not claim_matches(Claim("core:price", "9", "/p", None, 0.5), read)


@dataclass
class _BadRatings(FakeAdapter):
    """Claims rated outside the plugin API: a confidence above 1, a confidence without a source."""

    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        return Extraction(
            f"{self.name}@{self.version}",
            (
                Claim("core:price", "9.99", "/price", "structured", 1.7),
                Claim("core:title", "Kettle", "/title", None, 0.9),
                Claim("core:brand", "Acme", "/brand", "meta", 0.8),
            ),
            ListingFields(),
        )


def test_the_kit_refuses_a_confidence_outside_0_1_or_without_evidence() -> None:
    with pytest.raises(AssertionError, match=r"outside \[0, 1\]"):
        AdapterContract().test_every_claim_rating_is_valid(_BadRatings("pa_fake", "1.0.0"), [CASE])


def test_the_kit_passes_an_adapter_that_rates_nothing() -> None:
    AdapterContract().test_every_claim_rating_is_valid(FakeAdapter("pa_fake", "1.0.0"), [CASE])


def test_at_run_time_a_refused_rating_is_a_diagnostic_on_the_claim_and_the_stage_goes_on() -> None:
    registry = registry_with(FakePlugin(adapters=[_BadRatings("pa_fake", "1.0.0")]))
    data = b"<h1>Kettle</h1>"
    capture = CaptureRecord(
        tenant_id="ten_a",
        capture_id="cap_1",
        catalog_id="cat_a",
        source_id="src_a",
        native_record_id="r1",
        url=None,
        observed_at=datetime(2026, 1, 1, tzinfo=UTC),
        adapter_hint=None,
        artifacts=(StoredArtifact("art_1", "a" * 64, len(data), "text/html", "ref"),),
    )
    run = extract(registry, capture, [Artifact("art_1", "a" * 64, "text/html", data)], None)
    assert run.stage_outcome == "extracted"
    assert run.extraction is not None
    price, title, brand = run.extraction.claims
    assert (price.value, price.source, price.confidence) == ("9.99", "structured", None)
    assert (title.value, title.source, title.confidence) == ("Kettle", None, None)
    assert (brand.source, brand.confidence) == ("meta", 0.8)
    refused = [d for d in run.extraction.diagnostics if d.startswith("claim rating refused")]
    assert len(refused) == 2
    assert "core:price at '/price': confidence 1.7 is outside [0, 1]" in refused[0]
    assert "core:title at '/title': confidence 0.9 without an evidence source" in refused[1]

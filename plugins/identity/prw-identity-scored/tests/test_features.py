"""The comparisons the scored rule's model reads: model numbers, conflicts, the lead over other candidates."""

from __future__ import annotations

from prw_identity_scored.features import FEATURES, Title, compare, model_tokens, words


def _values(listing: str, *candidates: str) -> list[dict[str, float]]:
    compared = compare(Title.of(listing), [Title.of(c) for c in candidates])
    return [dict(zip(FEATURES, c.values, strict=True)) for c in compared]


def test_model_tokens_join_a_short_prefix_to_a_model_number() -> None:
    assert model_tokens(words("Sony PS LX350H turntable")) >= {"pslx350h", "lx350h"}
    assert "2009" not in model_tokens(words("street atlas 2009")), "a year is not a part number"


def test_a_shared_model_number_is_equal_and_in_the_other_title() -> None:
    (same,) = _values("canon powershot sx110is silver", "canon powershot sx110is digital camera")
    assert same["model_equal"] == 1.0
    assert same["model_in_other_title"] == 1.0
    assert same["model_similarity"] == 1.0


def test_a_colour_suffix_is_a_variant_and_not_equal() -> None:
    (variant,) = _values("canon powershot sx110isb", "canon powershot sx110is")
    assert variant["model_equal"] == 0.0
    assert variant["model_similarity"] == 0.9


def test_conflicts_are_features_and_findings() -> None:
    listing = Title.of("tivo 80 hour dvr 500gb black")
    (comparison,) = compare(listing, [Title.of("tivo hd dvr 180 hour 320gb white tcd652160")])
    values = dict(zip(FEATURES, comparison.values, strict=True))
    assert values["listing_numbers_missing"] == 1.0  # 80
    assert values["quantity_conflict"] == 1.0  # 500gb / 320gb
    assert values["colour_conflict"] == 1.0
    assert any("colour differs: black / white" in f for f in comparison.findings)
    assert any("numbers in one title only: 80" in f for f in comparison.findings)


def test_a_quantity_of_another_unit_is_not_a_conflict() -> None:
    (comparison,) = _values("seagate drive 500gb 7200 rpm", "seagate drive 500 gb 32mb cache")
    assert comparison["quantity_conflict"] == 0.0


def test_the_lead_over_the_best_other_candidate() -> None:
    near_twins = _values("lg washer wm2233hw", "lg washer wm2233hw white", "lg washer wm2233hs silver")
    alone = _values("lg washer wm2233hw", "lg washer wm2233hw white", "sony turntable pslx350h")
    assert near_twins[0]["title_trigram_ahead"] < alone[0]["title_trigram_ahead"]
    assert alone[0]["model_in_other_title_ahead"] == 1.0
    assert near_twins[1]["model_similarity_ahead"] < 0  # the twin is behind the exact model number


def test_a_single_candidate_leads_by_its_own_value() -> None:
    (only,) = _values("bose acoustimass 5 am53bk", "bose acoustimass 5 series iii am53bk")
    assert only["title_trigram_ahead"] == only["title_trigram"]

"""np_core@2: values weighed by their claims' confidence, and an offer value published only at the profile's
threshold (0.75); np_core@1 is unchanged beside it (a pin keeps its normalization)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from prw_profiles_core.core import DEFAULT_ALONE, SYMBOL_NARROWED
from prw_profiles_core.profiles import CoreProfile, CoreProfileV2
from prw_profiles_core.publication import OFFER_THRESHOLDS

from prw_platform.plugins import Claim, Normalization, NormalizedAttribute, publication_thresholds, weigh

V1, V2 = CoreProfile(), CoreProfileV2()


def value(result: Normalization, key: str) -> NormalizedAttribute | None:
    return result.get(key) or next((a for a in result.withheld if a.key == key), None)


def test_the_profile_declares_its_publication_thresholds() -> None:
    assert (
        publication_thresholds(V2)
        == OFFER_THRESHOLDS
        == {
            "core:price": 0.75,
            "core:currency": 0.75,
            "core:availability": 0.75,
        }
    )
    assert publication_thresholds(V1) == {}


def test_agreeing_independent_claims_raise_the_price_s_confidence_and_it_is_published() -> None:
    result = V2.normalize(
        [
            Claim("core:price", "20.00", "jsonld[0].offers.price", "structured", 0.85),
            Claim("core:price", "€20.00", "css:span.price", "buy_box", 0.8),
            Claim("core:currency", "EUR", "jsonld[0].offers.priceCurrency", "structured", 0.95),
        ]
    )
    price = result.get("core:price")
    assert price is not None
    assert (price.value, price.evidence_locators) == (
        Decimal("20.00"),
        ("jsonld[0].offers.price", "css:span.price"),
    )
    assert price.confidence is not None
    assert price.confidence > 0.85
    assert result.withheld == ()


def test_a_disputed_price_is_withheld_with_both_values_in_the_problems() -> None:
    claims = [
        Claim("core:price", "20.00", "jsonld[0].offers.price", "structured", 0.85),
        Claim("core:price", "€25.00", "css:span.price", "buy_box", 0.8),
    ]
    result = V2.normalize(claims)
    assert result.get("core:price") is None
    (withheld,) = result.withheld
    assert (withheld.key, withheld.value, round(withheld.confidence or 0, 2)) == (
        "core:price",
        Decimal("20.00"),
        0.53,
    )
    messages = {p.code: p.message for p in result.problems if p.attribute == "core:price"}
    assert "'20.00' at 0.53 (jsonld[0].offers.price)" in messages["CONFLICTING_CLAIMS"]
    assert "'25.00' at 0.38 (css:span.price)" in messages["CONFLICTING_CLAIMS"]
    assert "under the publication threshold 0.75" in messages["UNCERTAIN_VALUE"]
    # np_core@1: the first claim wins a tie and is published, as it always was.
    assert V1.normalize(claims).get("core:price") is not None


def test_the_most_trusted_value_wins_where_np_core_1_would_take_the_first_claim() -> None:
    claims = [
        Claim("core:availability", "InStock", "inferred: offered for sale", "buy_box", 0.6),
        Claim("core:availability", "OutOfStock", "jsonld[0].offers.availability", "structured", 0.9),
    ]
    assert value(V2.normalize(claims), "core:availability") == value(
        V2.normalize(claims), "core:availability"
    )
    chosen = value(V2.normalize(claims), "core:availability")
    assert chosen is not None
    assert chosen.value == "out_of_stock"
    first = V1.normalize(claims).get("core:availability")
    assert first is not None
    assert first.value == "in_stock"


def test_unrated_claims_count_at_the_default_and_are_published_as_before() -> None:
    result = V2.normalize(
        [Claim("core:price", "89,90 €", "/price"), Claim("core:availability", "InStock", "/a")]
    )
    assert {a.key: a.confidence for a in result.attributes} == {
        "core:price": 0.9,
        "core:currency": 0.9,
        "core:availability": 0.9,
    }


@pytest.mark.parametrize(
    ("claims", "code", "confidence"),
    [
        # The bare-dollar default alone: USD, never enough to publish.
        ([Claim("core:price", "$12.00", "css:span.price", "buy_box", 0.8)], "USD", DEFAULT_ALONE),
        # Two ambiguous symbols allowing one code only (¥ and 円... here ¥ with a CNY-only text): narrowed.
        (
            [
                Claim("core:price", "¥1200", "css:span.price", "buy_box", 0.8),
                Claim("core:currency", "円", "css:span.unit", "text", 0.8),
            ],
            "JPY",
            None,
        ),
    ],
)
def test_a_currency_from_a_default_alone_is_withheld(
    claims: list[Claim], code: str, confidence: float | None
) -> None:
    result = V2.normalize(claims)
    currency = value(result, "core:currency")
    assert currency is not None
    assert currency.value == code
    if confidence is not None:
        assert currency.confidence == confidence
        assert result.get("core:currency") is None


def test_a_country_stated_by_the_page_decides_an_ambiguous_dollar() -> None:
    result = V2.normalize(
        [
            Claim("core:price", "$12.00", "css:span.price", "buy_box", 0.8),
            Claim("core:currency", "CAD", "url:host", "url", 0.85),
        ]
    )
    currency = result.get("core:currency")
    assert currency is not None
    assert currency.value == "CAD"
    assert currency.confidence == 0.85


def test_the_narrowed_confidence_is_below_every_threshold() -> None:
    assert max(SYMBOL_NARROWED, DEFAULT_ALONE) < min(OFFER_THRESHOLDS.values())


def test_a_currency_printed_in_the_price_and_claimed_at_the_same_place_is_one_witness() -> None:
    result = V2.normalize(
        [
            Claim("core:price", "53,11 €", "css:p.price", "buy_box", 0.8),
            Claim("core:currency", "€", "css:p.price", "buy_box", 0.85),
            Claim("core:currency", "USD", "meta[property=product:price:currency]", "meta", 0.85),
        ]
    )
    currency = value(result, "core:currency")
    assert currency is not None
    assert currency.value == "EUR"
    assert currency.confidence == weigh([("EUR", 0.85), ("USD", 0.85)])[0].confidence
    assert result.get("core:currency") is None  # two places disagree: withheld

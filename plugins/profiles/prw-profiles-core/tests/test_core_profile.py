"""np_core@1: identity attributes, price, availability and the conflicting-claims rule."""

from __future__ import annotations

from decimal import Decimal

import pytest
from prw_profiles_core.problems import (
    AVAILABILITY_UNKNOWN,
    CONFLICTING_CLAIMS,
    EMPTY_VALUE,
    PRICE_RANGE,
    PRICE_UNPARSEABLE,
    WRONG_VALUE_TYPE,
)
from prw_profiles_core.profiles import CoreProfile

from prw_platform.plugins import Claim, ClaimValue, Normalization


def _normalize(*claims: tuple[str, ClaimValue]) -> Normalization:
    return CoreProfile().normalize([Claim(a, v, f"/{i}") for i, (a, v) in enumerate(claims)])


def _value(result: Normalization, key: str) -> object:
    attribute = result.get(key)
    return None if attribute is None else attribute.value


def test_identity_keys_are_gtin_alone_or_brand_with_mpn() -> None:
    assert CoreProfile().identity_keys == (("core:gtin",), ("core:brand", "core:mpn"))


def test_two_different_gtins_are_a_conflict_and_the_first_wins_a_tie() -> None:
    result = _normalize(("core:gtin", "4006381333931"), ("core:gtin", "036000291452"))
    assert _value(result, "core:gtin") == "04006381333931"
    [problem] = result.problems
    assert (problem.attribute, problem.code) == ("core:gtin", CONFLICTING_CLAIMS)
    assert "04006381333931" in problem.message
    assert "00036000291452" in problem.message


def test_the_value_with_more_claims_wins_a_conflict() -> None:
    result = _normalize(
        ("core:gtin", "036000291452"), ("core:gtin", "4006381333931"), ("core:gtin", "4006381333931")
    )
    gtin = result.get("core:gtin")
    assert gtin is not None
    assert gtin.value == "04006381333931"
    assert gtin.evidence_locators == ("/1", "/2")
    assert [p.code for p in result.problems] == [CONFLICTING_CLAIMS]


def test_the_conflict_rule_is_deterministic_for_the_same_claims() -> None:
    claims = (("core:brand", "Samsung"), ("core:brand", "SAMSUNG "), ("core:brand", "Seagate"))
    assert _normalize(*claims) == _normalize(*claims)
    assert _value(_normalize(*claims), "core:brand") == "Samsung"  # case-insensitive agreement: 2 claims


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("1.234,56", Decimal("1234.56")),
        ("$1,299.00", Decimal("1299.00")),
        ("CHF 1'049,95", Decimal("1049.95")),
        ("EUR 89,90", Decimal("89.90")),
        (89.9, Decimal("89.9")),
        (1299, Decimal("1299")),
    ],
)
def test_prices_are_decimals(text: ClaimValue, amount: Decimal) -> None:
    price = _value(_normalize(("core:price", text)), "core:price")
    assert isinstance(price, Decimal)
    assert price == amount


@pytest.mark.parametrize("text", ["$10 - $20", "10 to 20 EUR", "£6.95 – £9.95"])  # noqa: RUF001 (en dash on purpose)
def test_a_price_range_is_a_problem_not_a_value(text: str) -> None:
    result = _normalize(("core:price", text))
    assert _value(result, "core:price") is None
    assert [p.code for p in result.problems] == [PRICE_RANGE]


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("call for price", PRICE_UNPARSEABLE),
        ("", EMPTY_VALUE),
        (True, WRONG_VALUE_TYPE),
        (float("inf"), PRICE_UNPARSEABLE),
    ],
)
def test_a_price_without_an_amount_is_a_problem(value: ClaimValue, code: str) -> None:
    result = _normalize(("core:price", value))
    assert _value(result, "core:price") is None
    assert [(p.attribute, p.code) for p in result.problems] == [("core:price", code)]


def test_prices_that_differ_are_a_conflict_but_equal_amounts_agree() -> None:
    assert _normalize(("core:price", "89.90"), ("core:price", 89.9)).problems == ()
    assert [p.code for p in _normalize(("core:price", "89.90"), ("core:price", "79.90")).problems] == [
        CONFLICTING_CLAIMS
    ]


@pytest.mark.parametrize(
    ("text", "availability"),
    [
        ("https://schema.org/InStock", "in_stock"),
        ("http://schema.org/OutOfStock", "out_of_stock"),
        ("PreOrder", "preorder"),
        ("Sold out", "out_of_stock"),
        ("LimitedAvailability", "limited"),
        ("in_stock", "in_stock"),
        ("BackOrder", "backorder"),
        ("schema.org/Discontinued", "discontinued"),
    ],
)
def test_availability_maps_schema_org_and_words(text: str, availability: str) -> None:
    assert _value(_normalize(("core:availability", text)), "core:availability") == availability


def test_unknown_availability_is_a_problem() -> None:
    assert [p.code for p in _normalize(("core:availability", "ask us")).problems] == [AVAILABILITY_UNKNOWN]


def test_mpn_is_upper_case_without_whitespace_and_brand_and_title_are_collapsed() -> None:
    result = _normalize(
        ("core:mpn", " mz-77e1t0b / eu "), ("core:brand", " Western\n Digital "), ("core:title", "a\tb")
    )
    assert _value(result, "core:mpn") == "MZ-77E1T0B/EU"
    assert _value(result, "core:brand") == "Western Digital"
    assert _value(result, "core:title") == "a b"


def test_empty_text_is_a_problem() -> None:
    assert [p.code for p in _normalize(("core:title", "  \x00 ")).problems] == [EMPTY_VALUE]


def test_claims_the_profile_does_not_define_are_ignored() -> None:
    assert _normalize(("spec:capacity", "1TB"), ("core:color", "red")) == Normalization("np_core@1", ())

"""core:currency: ISO 4217 codes from codes, symbols and words; ambiguity is a problem unless context decides."""

from __future__ import annotations

from decimal import Decimal

import pytest
from prw_profiles_core.currency import ISO_4217_CODES, find_currency_text, read_currency
from prw_profiles_core.problems import CONFLICTING_CLAIMS, CURRENCY_AMBIGUOUS, CURRENCY_UNKNOWN
from prw_profiles_core.profiles import CoreProfile

from prw_platform.plugins import Claim, Normalization


def _normalize(*claims: tuple[str, str | int | float]) -> Normalization:
    return CoreProfile().normalize([Claim(a, v, f"/{i}") for i, (a, v) in enumerate(claims)])


def _currency(result: Normalization) -> object:
    attribute = result.get("core:currency")
    return None if attribute is None else attribute.value


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("€", "EUR"),
        ("£", "GBP"),
        ("EUR", "EUR"),
        ("usd", "USD"),
        ("US$", "USD"),
        ("CA$", "CAD"),
        ("A$", "AUD"),
        ("R$", "BRL"),
        ("円", "JPY"),
        ("元", "CNY"),
        ("zł", "PLN"),
        ("Kč", "CZK"),
        ("руб.", "RUB"),  # noqa: RUF001 (Cyrillic on purpose)
        ("₹", "INR"),
        ("CHF", "CHF"),
        ("Euro", "EUR"),
    ],
)
def test_unambiguous_symbols_and_codes_map_to_one_iso_code(text: str, code: str) -> None:
    reading = read_currency(text)
    assert reading is not None
    assert reading.code == code


@pytest.mark.parametrize(("text", "codes"), [("¥", {"JPY", "CNY"}), ("kr", {"SEK", "NOK", "DKK", "ISK"})])
def test_ambiguous_symbols_keep_every_candidate(text: str, codes: set[str]) -> None:
    reading = read_currency(text)
    assert reading is not None
    assert reading.code is None
    assert set(reading.codes) == codes


def test_every_mapped_code_is_an_active_iso_4217_code() -> None:
    assert len(ISO_4217_CODES) == len(set(ISO_4217_CODES)) > 150
    assert all(len(code) == 3 and code.isupper() for code in ISO_4217_CODES)
    assert "XXX" not in ISO_4217_CODES


def test_euro_price_text_gives_eur() -> None:
    result = _normalize(("core:price", "1.234,56 €"))
    assert result.get("core:price") is not None
    assert _currency(result) == "EUR"


def test_yen_alone_is_ambiguous_and_no_currency_is_chosen() -> None:
    result = _normalize(("core:price", "¥1,200"))
    assert _currency(result) is None
    assert [(p.attribute, p.code) for p in result.problems] == [("core:currency", CURRENCY_AMBIGUOUS)]
    price = result.get("core:price")
    assert price is not None
    assert price.value == Decimal("1200")


@pytest.mark.parametrize("context", ["JPY", "円"])
def test_yen_with_a_currency_claim_takes_the_claimed_code(context: str) -> None:
    result = _normalize(("core:price", "¥1,200"), ("core:currency", context))
    assert _currency(result) == "JPY"
    assert result.problems == ()


def test_bare_dollar_is_usd_by_the_documented_default_rule() -> None:
    result = _normalize(("core:price", "$1,299.00"))
    assert _currency(result) == "USD"
    assert result.problems == ()


def test_bare_dollar_with_a_cad_claim_is_cad_without_a_problem() -> None:
    result = _normalize(("core:price", "$1,299.00"), ("core:currency", "CAD"))
    assert _currency(result) == "CAD"
    assert result.problems == ()


def test_a_price_symbol_that_contradicts_the_currency_claim_is_a_conflict() -> None:
    result = _normalize(("core:price", "€10"), ("core:currency", "USD"))
    assert [(p.attribute, p.code) for p in result.problems] == [("core:currency", CONFLICTING_CLAIMS)]
    assert _currency(result) == "EUR"  # one claim each: the first claim wins the tie


def test_an_ambiguous_symbol_outside_the_chosen_code_is_a_conflict() -> None:
    result = _normalize(("core:price", "¥500"), ("core:currency", "EUR"))
    assert _currency(result) == "EUR"
    assert [p.code for p in result.problems] == [CONFLICTING_CLAIMS]


@pytest.mark.parametrize("text", ["BTC", "GBp", "Galleons"])
def test_non_iso_currencies_are_reported_unknown(text: str) -> None:
    result = _normalize(("core:currency", text))
    assert _currency(result) is None
    assert [p.code for p in result.problems] == [CURRENCY_UNKNOWN]


def test_scandinavian_krone_needs_context() -> None:
    assert [p.code for p in _normalize(("core:price", "1.198,- kr")).problems] == [CURRENCY_AMBIGUOUS]
    assert _currency(_normalize(("core:price", "1.198,- kr"), ("core:currency", "SEK"))) == "SEK"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("CAN$1.23", "CAN$"),
        ("US $1.23", "US $"),
        ("2963yen", "yen"),
        ("R273.00", "R"),
        ("1.198,- Kr", "Kr"),
        ("Rabatt 10", None),
        ("1 chf", "chf"),
        ("Price 10", None),
    ],
)
def test_currency_text_is_found_as_a_token_not_inside_words(text: str, found: str | None) -> None:
    assert find_currency_text(text) == found

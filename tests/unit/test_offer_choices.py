"""A reviewer's offer choice checked against the case's claims (``offer_choices.choose_offer``): what a claimed
text becomes on the listing, and what is refused before anything is written."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prw_platform.resolver.decisions.offer_choices import InvalidOfferChoice, choose_offer, offer_claims

CLAIMS = [
    {"attribute": "core:price", "value": "20.00"},
    {"attribute": "core:price", "value": "€25.00"},
    {"attribute": "core:price", "value": "1.234,50 €"},
    {"attribute": "core:price", "value": "1.234"},
    {"attribute": "core:price", "value": "from 10 to 20"},
    {"attribute": "core:price", "value": 19.5},
    {"attribute": "core:currency", "value": "EUR"},
    {"attribute": "core:currency", "value": "euro"},
    {"attribute": "core:availability", "value": "https://schema.org/InStock"},
    {"attribute": "core:availability", "value": "ask the shop"},
    {"attribute": "core:title", "value": "Desk lamp Nova"},
]


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("20.00", Decimal("20.00")),
        ("€25.00", Decimal("25.00")),
        ("1.234,50 €", Decimal("1234.50")),
        ("19.5", Decimal("19.5")),
    ],
)
def test_the_chosen_price_is_the_one_amount_its_text_prints(text: str, amount: Decimal) -> None:
    choice = choose_offer(CLAIMS, {"core:price": text, "core:currency": "EUR"}, not_an_offer=False)
    assert (choice.price, choice.currency) == (amount, "EUR")


@pytest.mark.parametrize(
    ("offer", "message"),
    [
        ({"core:price": "30.00", "core:currency": "EUR"}, "no claim of the case states core:price"),
        ({"core:price": "20.00"}, "a price and its currency are chosen together"),
        ({"core:currency": "EUR"}, "a price and its currency are chosen together"),
        ({"core:price": "1.234", "core:currency": "EUR"}, "no unambiguous amount"),
        ({"core:price": "from 10 to 20", "core:currency": "EUR"}, "does not print exactly one amount"),
        ({"core:price": "20.00", "core:currency": "euro"}, "not a three-letter currency code"),
        ({"core:availability": "ask the shop"}, "not one the platform knows"),
        ({"core:title": "Desk lamp Nova"}, "not an offer attribute"),
        ({}, "at least one offer value"),
    ],
)
def test_a_choice_that_cannot_be_the_listing_s_offer_is_refused(offer: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidOfferChoice, match=message) as refused:
        choose_offer(CLAIMS, offer, not_an_offer=False)
    assert refused.value.status == 422


def test_availability_alone_is_read_through_the_platform_s_vocabulary() -> None:
    choice = choose_offer(CLAIMS, {"core:availability": "https://schema.org/InStock"}, not_an_offer=False)
    assert (choice.availability, choice.keys) == ("in_stock", frozenset({"core:availability"}))


def test_not_an_offer_settles_every_offer_attribute_and_takes_no_values() -> None:
    choice = choose_offer(CLAIMS, None, not_an_offer=True)
    assert choice.keys == {"core:price", "core:currency", "core:availability"}
    assert (choice.price, choice.currency, choice.availability) == (None, None, None)
    with pytest.raises(InvalidOfferChoice):
        choose_offer(CLAIMS, {"core:price": "20.00", "core:currency": "EUR"}, not_an_offer=True)


def test_the_recorded_claims_are_the_offer_claims_sorted_once_whatever_their_order() -> None:
    claims = offer_claims([*reversed(CLAIMS), CLAIMS[0]])
    assert claims == offer_claims(CLAIMS)
    assert claims["core:price"] == ("1.234", "1.234,50 €", "19.5", "20.00", "from 10 to 20", "€25.00")
    assert "core:title" not in claims

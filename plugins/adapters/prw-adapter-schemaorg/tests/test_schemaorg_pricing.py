"""Which price is the listing's, in which currency, and every disagreement made visible in diagnostics."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal

import pytest
from prw_adapter_schemaorg.money import parse_amount, read_currency, region_hint

from prw_platform.plugins import Extraction

Extract = Callable[..., Extraction]
ClaimsOf = Callable[[Extraction, str], list[tuple[object, str]]]


def page(offers: object = None, *, head: str = "", body: str = "", name: str = "Kettle") -> str:
    node: dict[str, object] = {"@context": "https://schema.org", "@type": "Product", "name": name}
    if offers is not None:
        node["offers"] = offers
    script = f'<script type="application/ld+json">{json.dumps(node)}</script>'
    return f"<html><head><title>{name}</title>{head}{script}</head><body>{body}</body></html>"


def test_markup_price_differing_from_the_visible_price_reports_both(extract_html: Extract) -> None:
    offer = {"@type": "Offer", "price": "59.99", "priceCurrency": "USD"}
    extraction = extract_html(page(offer, body='<span class="product-price">$49.99</span>'))
    assert extraction.listing.price == Decimal("59.99")
    assert (
        "markup price '59.99' USD at jsonld[0].offers.price differs from visible price '$49.99' at "
        "css:.product-price"
    ) in extraction.diagnostics


def test_markup_price_equal_to_the_visible_price_is_not_reported(extract_html: Extract) -> None:
    offer = {"@type": "Offer", "price": "49.99", "priceCurrency": "USD"}
    extraction = extract_html(page(offer, body='<span class="product-price">$49.99</span>'))
    assert not any("differs" in d for d in extraction.diagnostics)


def test_struck_and_hidden_prices_are_not_the_visible_price(extract_html: Extract) -> None:
    body = '<s class="price">$80.00</s><span class="price hide">$1.00</span><span class="price">$59.99</span>'
    extraction = extract_html(page(None, body=body))
    assert extraction.listing.price == Decimal("59.99")


def test_offer_list_takes_the_first_priced_offer_and_notes_the_others(extract_html: Extract) -> None:
    offers = [
        {"@type": "Offer", "availability": "https://schema.org/OutOfStock"},
        {"@type": "Offer", "price": 12, "priceCurrency": "EUR"},
        {"@type": "Offer", "price": 14, "priceCurrency": "EUR"},
    ]
    extraction = extract_html(page(offers))
    assert extraction.listing.price == Decimal("12")
    assert (
        "2 offer prices differ (12 at jsonld[0].offers[1].price, 14 at jsonld[0].offers[2].price); the first in "
        "markup order is the listing's"
    ) in extraction.diagnostics


def test_aggregate_offer_range_takes_low_price(extract_fixture: Extract, claims_of: ClaimsOf) -> None:
    extraction = extract_fixture("schemaorg_examples/eg-0011.jsonld.html")
    assert claims_of(extraction, "core:price") == [("1250", "jsonld[0].offers.lowPrice")]
    assert (
        "jsonld[0].offers: price range 1250 to 1495; lowPrice is the listing's price"
        in extraction.diagnostics
    )


def test_price_specification_skips_member_and_list_prices(extract_html: Extract, claims_of: ClaimsOf) -> None:
    offer = {
        "@type": "Offer",
        "priceCurrency": "USD",
        "priceSpecification": [
            {"@type": "UnitPriceSpecification", "price": 9.95, "validForMemberTier": {"@id": "#gold"}},
            {
                "@type": "UnitPriceSpecification",
                "price": 20,
                "priceType": "https://schema.org/StrikethroughPrice",
            },
            {"@type": "UnitPriceSpecification", "price": 15},
        ],
    }
    extraction = extract_html(page(offer))
    assert claims_of(extraction, "core:price") == [(15, "jsonld[0].offers.priceSpecification[2].price")]
    assert claims_of(extraction, "core:currency") == [("USD", "jsonld[0].offers.priceCurrency")]
    assert "jsonld[0].offers.priceSpecification[0]: member-tier price skipped" in extraction.diagnostics
    assert "jsonld[0].offers.priceSpecification[1]: StrikethroughPrice skipped (not the price to pay)" in (
        extraction.diagnostics
    )


def test_price_specification_of_a_real_example(extract_fixture: Extract) -> None:
    extraction = extract_fixture("schemaorg_examples/eg-0475.jsonld.html")
    assert (extraction.listing.price, extraction.listing.currency) == (Decimal("99.99"), "USD")


def test_zero_price_is_ignored_and_the_next_source_is_used(extract_html: Extract) -> None:
    offer = {"@type": "Offer", "price": "0.00", "priceCurrency": "USD"}
    head = '<meta property="product:price:amount" content="35.00"><meta property="product:price:currency" content="USD">'
    extraction = extract_html(page(offer, head=head))
    assert extraction.listing.price == Decimal("35.00")
    assert "price '0.00' at jsonld[0].offers.price ignored: not a positive amount" in extraction.diagnostics


def test_number_price_stays_a_number_in_the_claim_and_a_decimal_in_the_listing(
    extract_fixture: Extract, claims_of: ClaimsOf
) -> None:
    extraction = extract_fixture("metascraper_shopping/html/jossandmain.html")
    assert claims_of(extraction, "core:price") == [(98.99, "jsonld[0].offers.price")]
    assert extraction.listing.price == Decimal("98.99")


def test_page_without_structured_data_uses_twitter_price(extract_html: Extract, claims_of: ClaimsOf) -> None:
    html = (
        '<html><head><meta name="twitter:title" content="Moka Pot"><meta name="twitter:label1" content="Price">'
        '<meta name="twitter:data1" content="£34.00"></head><body><h1>Moka pot</h1></body></html>'
    )
    extraction = extract_html(html)
    assert claims_of(extraction, "core:price") == [("£34.00", "meta[name=twitter:data1]")]
    assert (extraction.listing.price, extraction.listing.currency) == (Decimal("34.00"), "GBP")
    assert claims_of(extraction, "core:title") == [("Moka Pot", "meta[name=twitter:title]")]
    assert (
        "no schema.org offer price; price from meta[name=twitter:data1] (twitter)" in extraction.diagnostics
    )


def test_itemprop_price_outside_an_item_is_read(extract_html: Extract, claims_of: ClaimsOf) -> None:
    html = '<html><body><h1>Lamp</h1><meta itemprop="price" content="45.50"><b class="price">$45.50</b></body></html>'
    extraction = extract_html(html)
    assert claims_of(extraction, "core:price") == [("45.50", "css:[itemprop=price]")]
    assert extraction.listing.price == Decimal("45.50")


def test_currency_printed_next_to_a_markup_price_without_price_currency(extract_fixture: Extract) -> None:
    # A Common Crawl page: <span itemprop="price" content="59.00"><strong>59</strong>&nbsp;Kč</span>.
    extraction = extract_fixture("wdc_lspc/06.html")
    assert (extraction.listing.price, extraction.listing.currency) == (Decimal("59.00"), "CZK")


def test_dollar_sign_is_resolved_by_the_shop_country(extract_html: Extract) -> None:
    html = '<html><body><h1>Toque</h1><span class="price">$24.00</span></body></html>'
    extraction = extract_html(html, url="https://shop.example.ca/toque")
    assert extraction.listing.currency == "CAD"
    assert (
        "css:.price: currency symbol '$' is ambiguous; CAD from the page's region CA"
        in extraction.diagnostics
    )


def test_dollar_sign_without_a_region_is_assumed_usd_and_said_so(extract_html: Extract) -> None:
    extraction = extract_html('<html><body><h1>Cap</h1><span class="price">$24.00</span></body></html>')
    assert extraction.listing.currency == "USD"
    assert "css:.price: currency symbol '$' is ambiguous; assumed USD" in extraction.diagnostics


@pytest.mark.parametrize(
    ("raw", "region", "code", "noted"),
    [
        ("usd", None, "USD", False),
        ("€", None, "EUR", False),
        ("kr", "SE", "SEK", True),
        ("kr", None, None, True),
        ("¥", "JP", "JPY", True),
        ("XYZ", None, None, True),
        ("Dollars", None, None, True),
    ],
)
def test_currency_reading(raw: str, region: str | None, code: str | None, noted: bool) -> None:
    reading = read_currency(raw, region)
    assert reading.code == code
    assert (reading.note is not None) == noted


@pytest.mark.parametrize(
    ("raw", "amount"),
    [
        ("1000.00", Decimal("1000.00")),
        ("1.000", Decimal("1.000")),  # machine-readable: '.' is the decimal mark (schema.org)
        ("$1,000.00", Decimal("1000.00")),
        ("48,00", Decimal("48.00")),
        ("1.234,56 €", Decimal("1234.56")),
        (98.99, Decimal("98.99")),
        (12, Decimal("12")),
        (True, None),
        ("", None),
        ("call us", None),
    ],
)
def test_amount_parsing(raw: str | int | float | bool, amount: Decimal | None) -> None:
    assert parse_amount(raw) == amount


@pytest.mark.parametrize(
    ("url", "lang", "region"),
    [
        ("https://www.amazon.co.uk/x", "en-us", "GB"),
        ("https://www.amazon.com/x", "en-us", "US"),
        ("https://shop.example.com/x", None, None),
        (None, "de_CH", "CH"),
        (None, "fr", None),
    ],
)
def test_region_hint(url: str | None, lang: str | None, region: str | None) -> None:
    assert region_hint(url, lang) == region

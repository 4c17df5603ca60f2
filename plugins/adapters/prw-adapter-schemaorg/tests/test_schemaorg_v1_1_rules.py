"""pa_schemaorg@1.1.0's recall rules, one small hand-made page each, beside what @1.0.0 reads from the same
page (pins are honoured: @1.0.0 stays as it was)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from prw_adapter_schemaorg import SchemaOrgAdapter, SchemaOrgAdapterV11
from prw_adapter_schemaorg.adapter_1_1 import INFERRED

from prw_platform.plugins import Extraction

from .conftest import artifact_for, capture_for


def extract(html: str, url: str | None = None, version: str = "1.1.0") -> Extraction:
    adapter = SchemaOrgAdapterV11() if version == "1.1.0" else SchemaOrgAdapter()
    data = html.encode("utf-8")
    return adapter.extract(capture_for("text/html", url), [artifact_for(data)])


def claims(extraction: Extraction, attribute: str) -> list[tuple[object, str]]:
    return [(c.value, c.evidence_locator) for c in extraction.claims if c.attribute == attribute]


def page(body: str, head: str = "") -> str:
    return f"<html><head><title>Desk lamp</title>{head}</head><body><h1>Desk lamp</h1>{body}</body></html>"


def offers_jsonld(offers: str) -> str:
    return (
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product", '
        f'"name": "Desk lamp", "offers": {offers}}}</script>'
    )


def test_the_adapter_version_is_1_1_0_and_1_0_0_is_unchanged() -> None:
    assert extract(page("<p>x</p>")).adapter == "pa_schemaorg@1.1.0"
    assert extract(page("<p>x</p>"), version="1.0.0").adapter == "pa_schemaorg@1.0.0"


def test_in_stock_if_any_variant_is_and_the_disagreement_is_a_diagnostic() -> None:
    html = page(
        "",
        offers_jsonld(
            '[{"@type": "Offer", "price": "20", "priceCurrency": "EUR", "availability": "https://schema.org/OutOfStock"},'
            ' {"@type": "Offer", "price": "20", "priceCurrency": "EUR", "availability": "https://schema.org/InStock"}]'
        ),
    )
    old, new = extract(html, version="1.0.0"), extract(html)
    assert old.listing.availability == "out_of_stock"
    assert new.listing.availability == "in_stock"
    assert claims(new, "core:availability") == [
        ("https://schema.org/InStock", "jsonld[0].offers[1].availability")
    ]
    assert any(
        "offers disagree on availability" in note and "1 of 2 offers" in note for note in new.diagnostics
    )


def test_a_variant_nested_in_an_aggregate_offer_counts() -> None:
    html = page(
        "",
        offers_jsonld(
            '{"@type": "AggregateOffer", "lowPrice": "10", "priceCurrency": "EUR", '
            '"availability": "OutOfStock", "offers": [{"@type": "Offer", "price": "10", "availability": "InStock"}]}'
        ),
    )
    assert extract(html).listing.availability == "in_stock"


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("In stock", "in_stock"),
        ("Auf Lager", "in_stock"),
        ("Na skladě", "in_stock"),
        ("В наличии", "in_stock"),  # noqa: RUF001 (Russian)
        ("Sold out", "out_of_stock"),
        ("Ausverkauft", "out_of_stock"),
        ("Épuisé", "out_of_stock"),
        ("Нет в наличии", "out_of_stock"),
    ],
)
def test_availability_stated_only_in_visible_text(statement: str, expected: str) -> None:
    html = page(f'<div class="stock"><span>{statement}</span></div>')
    assert extract(html, version="1.0.0").listing.availability is None
    extraction = extract(html)
    assert extraction.listing.availability == expected
    ((_, locator),) = claims(extraction, "core:availability")
    assert locator.startswith("css:")
    assert not locator.startswith(INFERRED)


def test_a_sold_out_statement_beside_a_buy_button_is_not_taken() -> None:
    # "Sold out" is then another size's or another product's: the buy button says this one can be bought.
    html = page(
        '<span class="price">€ 20,00</span><button type="submit">Add to cart</button>'
        '<ul class="sizes"><li>XL <span>Sold out</span></li></ul>'
    )
    extraction = extract(html)
    assert extraction.listing.availability == "in_stock"
    ((_, locator),) = claims(extraction, "core:availability")
    assert locator.startswith(INFERRED)
    assert any("beside a buy action" in note for note in extraction.diagnostics)


def test_offered_for_sale_without_a_stock_statement_is_an_inferred_claim_with_its_evidence() -> None:
    html = page('<div class="buy"><span class="price">€ 20,00</span><button>Add to cart</button></div>')
    extraction = extract(html)
    ((value, locator),) = claims(extraction, "core:availability")
    assert value == "InStock"
    assert locator.startswith(f"{INFERRED} offered for sale")
    assert "Add to cart" in locator
    assert "price at" in locator


def test_a_disabled_buy_button_infers_nothing() -> None:
    html = page(
        '<div class="buy"><span class="price">€ 20,00</span><button disabled>Add to cart</button></div>'
    )
    assert claims(extract(html), "core:availability") == []


def test_an_offer_price_in_markup_is_offered_for_sale() -> None:
    html = page("", offers_jsonld('{"@type": "Offer", "price": "20", "priceCurrency": "EUR"}'))
    assert extract(html, version="1.0.0").listing.availability is None
    ((value, locator),) = claims(extract(html), "core:availability")
    assert (value, locator) == (
        "InStock",
        f"{INFERRED} offered for sale, no stock statement (offer price at jsonld[0].offers.price)",
    )


def test_a_page_without_price_or_buy_action_infers_no_availability() -> None:
    assert claims(extract(page("<p>Desk lamp, brass.</p>")), "core:availability") == []


@pytest.mark.parametrize(
    "label",
    [
        "SKU: 48213",
        "Item # 48213",
        "Product code: 48213",
        "Art.-Nr.: 48213",
        "Kód produktu: 48213",
        "Артикул: 48213",
        "Réf. 48213",
    ],
)
def test_a_labelled_sku_in_visible_text(label: str) -> None:
    html = page(f"<p>{label}</p>")
    assert claims(extract(html, version="1.0.0"), "core:sku") == []
    ((value, _),) = claims(extract(html), "core:sku")
    assert value == "48213"


def test_a_label_and_its_value_in_the_next_element() -> None:
    html = page("<dl><dt>Artikelnummer</dt><dd>AB-4821</dd></dl>")
    assert claims(extract(html), "core:sku") == [("AB-4821", "css:dl > dd")]


def test_a_model_label_gives_the_mpn_not_the_sku() -> None:
    extraction = extract(page("<p>Model: HX-200</p>"))
    assert [v for v, _ in claims(extraction, "core:mpn")] == ["HX-200"]
    assert claims(extraction, "core:sku") == []


def test_a_label_without_a_digit_is_not_an_identifier() -> None:
    assert claims(extract(page("<p>SKU: unknown</p>")), "core:sku") == []


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.example.com/dp/B081ZQK4BZ", "B081ZQK4BZ"),
        ("https://www.example.it/itm/133588510845", "133588510845"),
        ("https://shop.example/p/desk-lamp/p4781720", "p4781720"),
        ("https://shop.example/desk-lamp-987929.html", "987929"),
        ("https://shop.example/p/M67296549.htm?pc=promo", "M67296549"),
    ],
)
def test_the_marketplace_item_id_in_the_url(url: str, expected: str) -> None:
    assert claims(extract(page("<p>x</p>"), url=url), "core:sku") == [(expected, "url:path")]


def test_no_item_id_in_a_url_of_words_and_short_numbers() -> None:
    assert (
        claims(extract(page("<p>x</p>"), url="https://shop.example/glasses-330-ml-6-pcs"), "core:sku") == []
    )


def test_a_markup_sku_wins_over_the_url() -> None:
    html = page(
        "", offers_jsonld('{"@type": "Offer", "price": "20"}').replace('"name"', '"sku": "LAMP-1", "name"')
    )
    assert [v for v, _ in claims(extract(html, url="https://shop.example/p/4781720"), "core:sku")] == [
        "LAMP-1"
    ]


def test_a_markup_sku_with_spaces_is_a_name_and_is_replaced() -> None:
    html = page(
        "",
        offers_jsonld('{"@type": "Offer", "price": "20"}').replace(
            '"name"', '"sku": "OPTIPLEX 9010 TOWER", "name"'
        ),
    )
    extraction = extract(html, url="https://shop.example/Prod/144432/")
    assert claims(extraction, "core:sku") == [("144432", "url:path")]
    assert any("has spaces" in note for note in extraction.diagnostics)


def test_the_buy_box_price_when_there_is_no_markup() -> None:
    html = page(
        '<div class="related"><span class="amount">€ 9,99</span></div>'
        '<div class="buy"><span class="price-old">€ 25,00</span><span class="amount">€ 20,00</span>'
        "<button>Add to cart</button></div>"
    )
    old, new = extract(html, version="1.0.0"), extract(html)
    assert old.listing.price is None
    assert new.listing.price == Decimal("20.00")
    assert any("from the buy box" in note for note in new.diagnostics)


def test_a_price_printed_without_currency_outside_a_price_element_is_not_a_price() -> None:
    html = page('<div class="buy"><span>Rated 365 times</span><button>Add to cart</button></div>')
    assert extract(html).listing.price is None


def test_the_sale_price_wins_over_a_markup_price_shown_as_was() -> None:
    html = page(
        '<div class="price-block"><div><span class="price-original">€ 219,99</span>'
        '<span class="price-current">€ 110,00</span></div></div><button>Add to cart</button>',
        offers_jsonld('{"@type": "Offer", "price": "219.99", "priceCurrency": "EUR"}'),
    )
    assert extract(html, version="1.0.0").listing.price == Decimal("219.99")
    extraction = extract(html)
    assert (extraction.listing.price, extraction.listing.currency) == (Decimal("110.00"), "EUR")
    assert any("shown as a reference (was) price" in note for note in extraction.diagnostics)


def test_a_markup_price_not_shown_as_was_is_kept_even_when_the_buy_box_differs() -> None:
    html = page(
        '<div class="price-block"><span class="price-current">€ 110,00</span></div><button>Add to cart</button>',
        offers_jsonld('{"@type": "Offer", "price": "219.99", "priceCurrency": "EUR"}'),
    )
    assert extract(html).listing.price == Decimal("219.99")

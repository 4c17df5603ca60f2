"""pa_schemaorg@3.0.0: every claim rated, the offer read as independent statements, and the consumer price rules,
one small hand-made page each, beside what @2.0.0 reads from the same page (pins are honoured: @2.0.0 makes one
unrated price claim and takes the amounts it always took)."""

from __future__ import annotations

import json
from decimal import Decimal

from prw_adapter_schemaorg import SchemaOrgAdapterV2, SchemaOrgAdapterV3
from prw_adapter_schemaorg.consumer_price import (
    BLOCK_COMPETITOR,
    BLOCK_LOWER,
    BUY_BOX_BUTTON,
    GROSS_OF_PAIR,
    STRUCTURED,
    VISIBLE_AND_BUY_BOX,
)

from prw_platform.plugins import EVIDENCE_SOURCES, Extraction, confidence_problem, weigh

from .conftest import artifact_for, capture_for


def extract(html: str, version: str = "3.0.0", url: str | None = None) -> Extraction:
    adapter = SchemaOrgAdapterV3() if version == "3.0.0" else SchemaOrgAdapterV2()
    return adapter.extract(capture_for("text/html", url), [artifact_for(html.encode("utf-8"))])


def rated(extraction: Extraction, attribute: str) -> list[tuple[object, str, str | None, float | None]]:
    return [
        (c.value, c.evidence_locator, c.source, c.confidence)
        for c in extraction.claims
        if c.attribute == attribute
    ]


def rules(extraction: Extraction) -> list[tuple[str, object, object]]:
    return [(r.rule, r.before, r.after) for r in extraction.rules_fired]


def page(body: str, head: str = "", title: str = "Desk lamp") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def jsonld(offers: object, name: str = "Desk lamp") -> str:
    product = {"@context": "https://schema.org", "@type": "Product", "name": name, "offers": offers}
    return f'<script type="application/ld+json">{json.dumps(product)}</script>'


BUTTON = "<button>Add to cart</button>"


def offer(
    price: str, currency: str = "EUR", availability: str = "https://schema.org/InStock"
) -> dict[str, str]:
    return {"@type": "Offer", "price": price, "priceCurrency": currency, "availability": availability}


def test_the_adapter_version_is_3_0_0() -> None:
    assert extract(page("<h1>Desk lamp</h1>")).adapter == "pa_schemaorg@3.0.0"


def test_every_claim_names_its_source_and_a_confidence_the_kit_accepts() -> None:
    html = page(
        f'<h1>Desk lamp</h1><p>SKU: DL-1001</p><span class="price">€20.00</span>{BUTTON}',
        head=jsonld(offer("20.00")) + '<meta property="og:image" content="https://shop.example/l.jpg">',
    )
    extraction = extract(html, url="https://shop.example/p/12345678")
    assert extraction.claims
    for claim in extraction.claims:
        assert claim.source in EVIDENCE_SOURCES
        assert confidence_problem(claim) is None
    sources = {c.attribute: c.source for c in extraction.claims}
    assert (sources["core:title"], sources["core:image"]) == ("structured", "meta")


def test_the_markup_and_the_buy_box_are_two_statements_of_one_price() -> None:
    html = page(f'<h1>Desk lamp</h1><span class="amount">€20.00</span>{BUTTON}', head=jsonld(offer("20.00")))
    new, old = extract(html), extract(html, "2.0.0")
    assert rated(new, "core:price") == [
        ("20.00", "jsonld[0].offers.price", "structured", STRUCTURED),
        ("€20.00", "css:span.amount", "buy_box", BUY_BOX_BUTTON),
    ]
    assert [(v, loc) for v, loc, _, _ in rated(old, "core:price")] == [("20.00", "jsonld[0].offers.price")]
    assert all(c.confidence is None for c in old.claims)
    assert new.listing.price == old.listing.price == Decimal("20.00")
    both = weigh([("20.00", STRUCTURED), ("20.00", BUY_BOX_BUTTON)])[0].confidence
    assert both > STRUCTURED


def test_every_price_container_agreeing_with_the_buy_box_is_one_strong_statement() -> None:
    html = page(f'<h1>Desk lamp</h1><span class="price">€20.00</span>{BUTTON}')
    assert rated(extract(html), "core:price") == [
        ("€20.00", "css:span.price", "buy_box", VISIBLE_AND_BUY_BOX)
    ]


def test_a_buy_box_showing_the_markup_s_own_price_element_is_one_statement() -> None:
    html = page(
        '<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Desk lamp</h1>'
        '<div itemprop="offers" itemscope itemtype="https://schema.org/Offer">'
        '<span itemprop="price" content="20.00">€20.00</span><meta itemprop="priceCurrency" content="EUR">'
        f"</div>{BUTTON}</div>"
    )
    prices = rated(extract(html), "core:price")
    assert [source for _, _, source, _ in prices] == ["structured"]


def test_disagreeing_statements_are_claims_and_a_diagnostic_names_both() -> None:
    html = page(f'<h1>Desk lamp</h1><span class="price">€25.00</span>{BUTTON}', head=jsonld(offer("20.00")))
    extraction = extract(html)
    assert [value for value, *_ in rated(extraction, "core:price")] == ["20.00", "€25.00"]
    assert extraction.listing.price == Decimal("20.00")
    assert any(
        d.startswith("price statements disagree: '20.00' at jsonld[0].offers.price") and "'€25.00'" in d
        for d in extraction.diagnostics
    )


# -- the consumer price rules --------------------------------------------------------------------------------


def test_price_sale_takes_the_buy_box_price_where_the_markup_price_is_struck() -> None:
    html = page(
        f'<h1>Desk lamp</h1><div class="prices"><s>€59.99</s> <span class="price">€49.99</span></div>{BUTTON}',
        head=jsonld(offer("59.99")),
    )
    new = extract(html)
    assert new.listing.price == Decimal("49.99")
    assert rules(new) == [("price.sale", "59.99", "49.99")]
    assert [value for value, *_ in rated(new, "core:price")] == ["€49.99"]
    assert any(
        d.startswith("price.sale: '59.99' at jsonld[0].offers.price is shown as") for d in new.diagnostics
    )


def test_price_vat_inclusive_takes_the_gross_price_of_a_net_and_gross_pair() -> None:
    html = page(
        '<h1>Desk lamp</h1><div class="price-box">'
        '<div class="tax"><span>s DPH</span> <span class="price">120,00 €</span></div>'
        '<div class="notax"><span>bez DPH</span> <span class="price">100,00 €</span></div></div>' + BUTTON
    )
    new = extract(html)
    assert new.listing.price == Decimal("120.00")  # the buy box's last price before the button is the net one
    assert rules(new) == [("price.vat_inclusive", "100.00", "120.00")]
    ((value, _, source, confidence),) = rated(new, "core:price")
    assert (value, source, confidence) == ("120,00 €", "buy_box", GROSS_OF_PAIR)
    assert any("is the price without VAT" in d for d in new.diagnostics)


def test_a_shop_printing_the_net_price_first_is_read_gross_and_doubted() -> None:
    html = page(
        '<h1>Desk lamp</h1><div class="price-box">'
        '<div class="notax"><span>bez DPH</span> <span class="price">100,00 €</span></div>'
        '<div class="tax"><span>s DPH</span> <span class="price">120,00 €</span></div></div>' + BUTTON
    )
    new, old = extract(html), extract(html, "2.0.0")
    assert old.listing.price == Decimal("100.00")  # @2.0.0: the first printed of the pair
    assert new.listing.price == Decimal("120.00")
    assert [(value, confidence) for value, _, _, confidence in rated(new, "core:price")] == [
        ("120,00 €", GROSS_OF_PAIR)
    ]


def test_a_net_markup_price_beside_the_gross_pair_is_explained() -> None:
    html = page(
        '<h1>Desk lamp</h1><div class="price-box">'
        '<div><span>excl. VAT</span> <span class="price">€100.00</span></div>'
        '<div><span>incl. VAT</span> <span class="price">€120.00</span></div></div>' + BUTTON,
        head=jsonld(offer("100.00")),
    )
    new = extract(html)
    assert new.listing.price == Decimal("120.00")
    assert [value for value, *_ in rated(new, "core:price")] == ["€120.00"]


def test_price_auction_current_bid_is_not_the_starting_price() -> None:
    html = page(
        "<h1>Desk lamp</h1><div>Estimate $300 - $500</div>"
        '<div class="status"><span class="price">$200</span><span>2 bids</span></div>'
        "<span>Starting Price $150</span><div>Your Maximum Bid: <div class=value>$225</div></div>"
        "<button>Place Bid</button>",
        head=jsonld(offer("150", "USD")),
    )
    new, old = extract(html), extract(html, "2.0.0")
    assert old.listing.price == Decimal("150")
    assert new.listing.price == Decimal("200")
    assert ("price.auction_current_bid", "150", "200") in rules(new)
    assert [value for value, *_ in rated(new, "core:price")] == ["$200"]


def test_an_auction_without_bids_keeps_its_starting_price() -> None:
    html = page(
        "<h1>Desk lamp</h1><div>Prezzo di partenza: <span class=price>GBP 12,99</span></div><span>0 offerte</span>"
        "<button>Fai un'offerta</button>"
    )
    assert extract(html).listing.price == Decimal("12.99")


def test_price_buy_box_offer_takes_the_markup_offer_the_buy_box_shows() -> None:
    html = page(
        f'<h1>Desk lamp</h1><span class="price">€12.00</span>{BUTTON}',
        head=jsonld([offer("10.00"), offer("12.00")]),
    )
    new, old = extract(html), extract(html, "2.0.0")
    assert old.listing.price == Decimal("10.00")
    assert new.listing.price == Decimal("12.00")
    assert ("price.buy_box_offer", "10.00", "12.00") in rules(new)
    assert ("12.00", "jsonld[0].offers[1].price", "structured", STRUCTURED) in rated(new, "core:price")
    assert "10.00" not in [value for value, *_ in rated(new, "core:price")]


def test_price_not_conditional_leaves_out_cash_back_to_a_loyalty_card() -> None:
    html = page(
        "<h1>Desk lamp</h1><p>Cena: <strong>13,40 €</strong></p>"
        "<p>Cash back to your card <strong>0,27 €</strong></p>" + BUTTON
    )
    new, old = extract(html), extract(html, "2.0.0")
    assert old.listing.price == Decimal("0.27")
    assert new.listing.price == Decimal("13.40")
    assert ("price.not_conditional", "0.27", "13.40") in rules(new)


def test_price_not_difference_leaves_out_a_signed_change() -> None:
    html = page("<h1>Desk lamp</h1><table><tr><td>July</td><td class=price>-0,02 €</td></tr></table>")
    new, old = extract(html), extract(html, "2.0.0")
    assert old.listing.price == Decimal("0.02")
    assert new.listing.price is None
    assert rules(new) == [("price.not_difference", "0.02", None)]


def test_price_og_sale_takes_opengraph_s_sale_price_over_its_regular_price() -> None:
    head = (
        '<meta property="product:sale_price:amount" content="997.00">'
        '<meta property="product:price:amount" content="1148.00">'
        '<meta property="product:price:currency" content="PLN">'
    )
    new, old = (
        extract(page("<h1>Desk lamp</h1>", head=head)),
        extract(page("<h1>Desk lamp</h1>", head=head), "2.0.0"),
    )
    assert old.listing.price == Decimal("1148.00")
    assert (new.listing.price, new.listing.currency) == (Decimal("997.00"), "PLN")
    assert rules(new) == [("price.og_sale", "1148.00", "997.00")]


def test_price_block_lower_takes_the_lower_of_two_prices_in_one_block_and_doubts_it() -> None:
    html = page(
        '<h1>Desk lamp</h1><div class="box"><span class="p">€39.30</span>'
        '<div class="w"><span class="p">€49.10</span><span>VAT included</span></div></div>' + BUTTON
    )
    new, old = extract(html), extract(html, "2.0.0")
    assert new.listing.price == Decimal("39.30")
    assert ("price.block_lower", "49.10", "39.30") in rules(new)
    assert sorted((value, confidence) for value, _, _, confidence in rated(new, "core:price")) == [
        ("€39.30", BLOCK_LOWER),
        ("€49.10", BLOCK_COMPETITOR),
    ]
    assert old.listing.price == Decimal("39.30")  # @2.0.0: one VAT-labelled pair, the first printed


def test_a_price_in_a_link_to_another_product_is_never_a_statement() -> None:
    html = page(
        f'<h1>Desk lamp</h1><span class="price">€20.00</span>{BUTTON}'
        '<a href="/p/other"><span class="price">€5.00</span></a>',
        head=jsonld(offer("20.00")),
    )
    assert {value for value, *_ in rated(extract(html), "core:price")} == {"20.00", "€20.00"}


# -- currency ------------------------------------------------------------------------------------------------


def test_an_ambiguous_symbol_is_claimed_as_found_with_the_shop_s_country_beside_it() -> None:
    html = page(f'<h1>Desk lamp</h1><span class="price">$20.00</span>{BUTTON}')
    extraction = extract(html, url="https://shop.example.ca/p/1")
    assert rated(extraction, "core:currency") == [
        ("$", "css:span.price", "buy_box", 0.5),
        ("CAD", "url:host", "url", 0.85),
    ]
    assert extraction.listing.currency == "CAD"


def test_a_dollar_without_a_country_is_assumed_only_in_the_listing_field() -> None:
    html = page(f'<h1>Desk lamp</h1><span class="price">$20.00</span>{BUTTON}')
    extraction = extract(html)
    assert [value for value, *_ in rated(extraction, "core:currency")] == ["$"]
    assert extraction.listing.currency == "USD"


# -- availability ---------------------------------------------------------------------------------------------


def test_a_disabled_buy_button_disputes_the_markup_s_in_stock() -> None:
    html = page(
        '<h1>Desk lamp</h1><span class="price">€20.00</span><button disabled>Add to cart</button>',
        head=jsonld(offer("20.00")),
    )
    extraction = extract(html)
    assert [(v, s) for v, _, s, _ in rated(extraction, "core:availability")] == [
        ("https://schema.org/InStock", "structured"),
        ("OutOfStock", "buy_box"),
    ]
    assert extraction.listing.availability == "in_stock"
    assert any("is disabled" in d for d in extraction.diagnostics)


def test_a_disabled_buy_button_alone_states_nothing() -> None:
    html = page("<h1>Desk lamp</h1><button disabled>Add to cart</button>")
    assert rated(extract(html), "core:availability") == []


def test_an_enabled_buy_button_corroborates_the_markup_s_in_stock() -> None:
    html = page(f'<h1>Desk lamp</h1><span class="price">€20.00</span>{BUTTON}', head=jsonld(offer("20.00")))
    assert [(v, s) for v, _, s, _ in rated(extract(html), "core:availability")] == [
        ("https://schema.org/InStock", "structured"),
        ("InStock", "buy_box"),
    ]

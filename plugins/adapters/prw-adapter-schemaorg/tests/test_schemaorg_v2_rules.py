"""pa_schemaorg@2.0.0's rules, one small hand-made page each, beside what @1.1.0 reads from the
same page: the positive case, and the precision traps it must not fall into (a list price beside the sale price,
other products' prices, prices with and without VAT, instalments, converted amounts). @1.1.0 stays as it was
(pins are honoured)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from prw_adapter_schemaorg import SchemaOrgAdapterV2, SchemaOrgAdapterV11
from prw_adapter_schemaorg.adapter_1_1 import INFERRED

from prw_platform.plugins import Extraction

from .conftest import artifact_for, capture_for


def extract(html: str, version: str = "2.0.0", url: str | None = None) -> Extraction:
    adapter = SchemaOrgAdapterV2() if version == "2.0.0" else SchemaOrgAdapterV11()
    return adapter.extract(capture_for("text/html", url), [artifact_for(html.encode("utf-8"))])


def both(html: str) -> tuple[Extraction, Extraction]:
    """(@1.1.0, @2.0.0) on the same page."""
    return extract(html, "1.1.0"), extract(html)


def claims(extraction: Extraction, attribute: str) -> list[tuple[object, str]]:
    return [(c.value, c.evidence_locator) for c in extraction.claims if c.attribute == attribute]


def page(body: str, head: str = "", title: str = "Desk lamp") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def test_the_adapter_version_is_2_0_0() -> None:
    old, new = both(page("<h1>Desk lamp</h1>"))
    assert (old.adapter, new.adapter) == ("pa_schemaorg@1.1.0", "pa_schemaorg@2.0.0")


# -- the whole page is read ---------------------------------------------------------------------------------


def test_a_product_after_a_long_cookie_dialog_is_read() -> None:
    dialog = "<div id=consent>" + "<p>vendor</p>" * 12_000 + "</div>"
    html = page(f"{dialog}<h1>Desk lamp</h1><div class=box>€ <span>206,-</span></div>")
    old, new = both(html)
    assert old.listing.price is None  # @1.1.0 stopped reading after 20,000 nodes
    assert new.listing.price == Decimal("206")


# -- the product's heading ---------------------------------------------------------------------------------


def test_a_hidden_heading_of_a_dialog_does_not_anchor_the_buy_box() -> None:
    html = page(
        '<div class="hidden"><h1>Added to cart</h1></div>'
        "<div class=price>$5.00</div>"  # another product's, before the product's heading
        "<h1>Desk lamp</h1><span class=price>$20.00</span>"
    )
    old, new = both(html)
    assert old.listing.price == Decimal("5.00")
    assert new.listing.price == Decimal("20.00")


def test_without_an_h1_the_element_naming_the_page_title_is_the_heading() -> None:
    html = page(
        "<ul class=nav><li><a href=/deals>Deals</a></li><li class=price>$1.00</li></ul>"
        "<div class=title>Desk lamp</div><div class=price>$20.00</div><button>Add to cart</button>",
        title="Desk lamp - Lamp Shop",
    )
    old, new = both(html)
    assert old.listing.price == Decimal("20.00")  # the buy button anchors both
    assert new.listing.price == Decimal("20.00")
    no_button = html.replace("<button>Add to cart</button>", "")
    old, new = both(no_button)
    assert old.listing.price is None  # no heading, no button: no anchor
    assert claims(new, "core:price") == [("$20.00", "css:div.price")]


@pytest.mark.parametrize(
    ("head", "url"),
    [
        ('<meta property="og:site_name" content="Lamp Shop Online Store">', None),
        ("", "https://www.lampshoponline.example/p/1"),
    ],
)
def test_the_shops_name_in_the_title_is_not_the_products_heading(head: str, url: str | None) -> None:
    html = page(
        "<div class=brand>Lamp Shop Online Store</div><div class=promo>$1.00</div>"
        "<div class=name>Desk lamp</div><div class=cost>$20.00</div>",
        head=head,
        title="Desk lamp | Lamp Shop Online Store" if head else "Desk lamp | LampShopOnline",
    )
    if url:
        html = html.replace("Lamp Shop Online Store</div>", "LampShopOnline</div>")
    assert extract(html, url=url).listing.price == Decimal("20.00")


def test_a_title_that_no_element_repeats_gives_no_anchor() -> None:
    html = page("<div class=cost>$1.00</div><div>Lamps</div>", title="Desk lamp - Lamp Shop")
    assert extract(html).listing.price is None


# -- other products' prices -------------------------------------------------------------------------------


def test_a_price_inside_a_link_is_another_products() -> None:
    card = '<a href="/p/other"><span class=price-value>2,86 €</span></a>'
    old, new = both(page(f"<h1>Desk lamp</h1>{card}"))
    assert old.listing.price == Decimal("2.86")
    assert new.listing.price is None
    new = extract(page(f"<h1>Desk lamp</h1>{card}<span class=price-value>19,90 €</span>"))
    assert new.listing.price == Decimal("19.90")


def test_a_price_in_a_script_link_or_an_anchor_on_the_page_still_counts() -> None:
    html = page('<h1>Desk lamp</h1><a href="#offer"><span class=price>$20.00</span></a>')
    assert extract(html).listing.price == Decimal("20.00")


# -- instalments, unit prices, converted amounts --------------------------------------------------------


@pytest.mark.parametrize(
    "per_period",
    [
        "<td>每期 <span>$ 98</span></td>",
        "<p>or <span>$25.00</span>/mo</p>",
        "<p><span>$25.00</span> per month</p>",
        "<p>12 x <span>9,90 €</span></p>",
        "<p>(<span>12,50 €</span> / 1 kg)</p>",
        "<p>(1 kg = <span>9,98 €</span>)</p>",
    ],
)
def test_an_instalment_or_unit_price_before_the_buy_button_is_not_the_price(per_period: str) -> None:
    html = page(
        f"<h1>Desk lamp</h1><div><span>$ 294.00</span></div><table><tr>{per_period}</tr></table>"
        "<button>Add to cart</button>"
    )
    old, new = both(html)
    assert old.listing.price != Decimal("294.00")  # @1.1.0 took the last one before the button
    assert new.listing.price == Decimal("294.00")


def test_a_price_per_piece_or_per_pack_is_the_price() -> None:
    html = page("<h1>Desk lamp</h1><p><span>5,00 €</span> / piece</p><button>Add to cart</button>")
    assert extract(html).listing.price == Decimal("5.00")
    html = page("<h1>Desk lamp</h1><p><span>4,99 €</span> / 500 g</p><button>Add to cart</button>")
    assert extract(html).listing.price == Decimal("4.99")


@pytest.mark.parametrize(
    "extra",
    [
        '<p class="delivery-to"><span class="cost">+45,00 CHF</span> Versand</p>',
        '<span id="reduction_amount_display">-12,50 €</span>',
        '<div class="shipping-cost"><span>4,90 €</span></div>',
    ],
)
def test_a_shipping_cost_or_a_discount_amount_before_the_button_is_not_the_price(extra: str) -> None:
    html = page(
        f"<h1>Desk lamp</h1><span class=amount>109,00 €</span>{extra}<button>In den Warenkorb</button>"
    )
    old, new = both(html)
    assert old.listing.price != Decimal("109.00")  # @1.1.0 took the amount nearest the button
    assert new.listing.price == Decimal("109.00")


def test_a_converted_amount_is_an_estimate_not_the_price() -> None:
    html = page(
        "<h1>Desk lamp</h1><span id=bid>GBP 12,99</span><div>Circa <span>EUR 14,43</span></div>"
        "<button>Place bid</button>"
    )
    new = extract(html)
    assert new.listing.price == Decimal("12.99")
    assert claims(new, "core:price") == [("GBP 12,99", "css:span#bid")]


# -- sale vs list, with vs without VAT ----------------------------------------------------------------------


def test_prices_with_and_without_vat_side_by_side_give_the_first_printed() -> None:
    html = page(
        "<h1>Desk lamp</h1><div class=box>"
        "<div class=notax><span>bez DPH</span><span class=price>4386,00 €</span></div>"
        "<div class=tax><span>s DPH</span><span class=price>5263,20 €</span></div>"
        "</div><button>Do košíka</button>"
    )
    old, new = both(html)
    assert old.listing.price is None  # @1.1.0 left both out
    assert new.listing.price == Decimal("4386.00")
    assert any("prices with and without VAT side by side" in note for note in new.diagnostics)


def test_one_price_labelled_vat_included_is_simply_the_price() -> None:
    html = page("<h1>Desk lamp</h1><p><span>€344.00</span> VAT included</p><button>Add to bag</button>")
    new = extract(html)
    assert new.listing.price == Decimal("344.00")
    assert not any("with and without VAT" in note for note in new.diagnostics)


def test_a_net_price_is_not_a_sale_price_below_the_markup_price() -> None:
    markup = (
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product", '
        '"name": "Desk lamp", "offers": {"@type": "Offer", "price": "40.00", "priceCurrency": "EUR"}}</script>'
    )
    html = page(
        "<h1>Desk lamp</h1><ul id=price-list><li class=price><span class=price-old-live>40.00€</span></li>"
        "<li class=price-tax>Brez DDV: <span class=price-tax-live>36.53€</span></li></ul>",
        head=markup,
    )
    assert extract(html).listing.price == Decimal("40.00")


def test_the_sale_price_still_wins_over_a_markup_price_shown_as_was() -> None:
    markup = (
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product", '
        '"name": "Desk lamp", "offers": {"@type": "Offer", "price": "219.99", "priceCurrency": "EUR"}}</script>'
    )
    html = page(
        "<h1>Desk lamp</h1><div class=price-block><span class=original-price>EUR219.99</span>"
        "<span class=discount>-50%</span><span class=price-now>EUR110.00</span></div>"
        "<button><span>Ielikt grozā</span></button>",
        head=markup,
    )
    old, new = both(html)
    assert old.listing.price == Decimal("219.99")  # @1.1.0 did not read EUR110.00 as a price
    assert new.listing.price == Decimal("110.00")
    assert claims(new, "core:price") == [("EUR110.00", "css:div.price-block > span.price-now")]


# -- printed currencies --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("printed", "amount"),
    [
        ("<span class=amount>EUR110.00</span>", "110.00"),
        ("<span>294</span><span>元</span>", "294"),
        ("<p>Price: $<b>99</b></p>", "99"),
        ("<p>最低價$ <span>99</span> 元起/包</p>", "99"),
    ],
)
def test_a_currency_glued_to_the_amount_or_printed_beside_it(printed: str, amount: str) -> None:
    assert extract(page(f"<h1>Desk lamp</h1>{printed}")).listing.price == Decimal(amount)


@pytest.mark.parametrize(
    "not_a_price",
    ["<span>3</span> <span>points</span>", "<span>1448</span> sold", "<p>Only <b>2</b> left</p>"],
)
def test_a_number_without_a_currency_is_not_a_price(not_a_price: str) -> None:
    assert extract(page(f"<h1>Desk lamp</h1>{not_a_price}")).listing.price is None


# -- buy actions and inferred availability --------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [
        "<a class=btn href=/bid>Fai un'offerta</a>",
        "<button>Place bid</button>",
        "<button><span>Ielikt grozā</span></button>",
        "<div class=buyBtn><a href=\"javascript:buy('1')\">宅配</a></div>",
    ],
)
def test_bidding_and_other_buy_actions_infer_availability(action: str) -> None:
    old, new = both(page(f"<h1>Desk lamp</h1><span id=p>GBP 12,99</span>{action}"))
    assert old.listing.availability is None
    (value, locator), *_ = claims(new, "core:availability")
    assert value == "InStock"
    assert locator.startswith(f"{INFERRED} offered for sale")


def test_add_to_a_wish_list_is_not_a_buy_action() -> None:
    new = extract(page("<h1>Desk lamp</h1><span id=p>12,99 €</span><button>Aggiungi alla Lista</button>"))
    assert new.listing.availability is None


def test_an_offer_declared_in_any_markup_vocabulary_with_the_price_printed_beside_it() -> None:
    offer = '<div itemscope itemtype="http://data-vocabulary.org/Offer"><span>Dornbirn</span></div>'
    html = page(f"<h1>Desk lamp</h1><div class=price><strong>€ <span>206,-</span></strong></div>{offer}")
    old, new = both(html)
    assert old.listing.availability is None
    ((value, locator),) = claims(new, "core:availability")
    assert value == "InStock"
    assert "markup http://data-vocabulary.org/Offer" in locator
    assert locator.startswith(INFERRED)
    assert extract(html.replace(offer, "")).listing.availability is None


def test_a_sold_out_statement_still_wins_over_a_markup_offer_without_a_button() -> None:
    offer = '<div itemscope itemtype="http://data-vocabulary.org/Offer"></div>'
    html = page(f"<h1>Desk lamp</h1><div class=price>€ 206</div><p>Sold out</p>{offer}")
    assert claims(extract(html), "core:availability") == [("OutOfStock", "css:p")]


def test_a_long_buy_form_label_is_cut_in_the_evidence() -> None:
    form = '<form id=addToCart action="/cart">' + "<span>word </span>" * 40 + "</form>"
    new = extract(page(f"<h1>Desk lamp</h1><span class=price>$20.00</span>{form}"))
    ((_, locator),) = claims(new, "core:availability")
    assert "…" in locator
    assert len(locator) < 250

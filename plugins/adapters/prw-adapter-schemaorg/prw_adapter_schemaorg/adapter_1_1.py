"""``pa_schemaorg@1.1.0``: ``@1.0.0``'s reading, then rules that raise recall without giving up precision
(measured with ``prw eval extraction``; README.md lists them):

- availability per variant: a product is in stock if any of its offers is (the offers' disagreement is a
  diagnostic);
- availability stated only in visible text ("In stock", "Sold out", in several languages); an out-of-stock
  statement counts only where the page offers no buy action;
- availability *inferred*: a page that offers the product for sale (a price and a buy action) and states nothing
  about stock is in stock, recorded with the evidence under an ``inferred:`` locator so downstream can tell it
  from a statement;
- identifiers shown as labelled text ("SKU", "Item #", "Product code", "Art.-Nr.", "Kód", "Артикул", ...; "Model"
  and "Part number" give the MPN) when the markup has none; a markup SKU with spaces is a name, not an identifier;
- the marketplace item id in the page URL (a long digit run or an ASIN-like id in the path) when nothing else
  gives a SKU;
- the price next to the buy action when nothing else gives one, only when the prices there agree once reference
  prices (was, list, per-unit, monthly) are left out.
"""

from __future__ import annotations

import re
from decimal import Decimal
from urllib.parse import unquote, urlsplit

from prw_adapter_schemaorg.adapter import PageReading, SchemaOrgAdapter
from prw_adapter_schemaorg.entities import Entity, Value
from prw_adapter_schemaorg.pricing import PriceDecision, PriceSource
from prw_adapter_schemaorg.visible import V1_1, Rules, VisiblePage, read_visible
from prw_platform.plugins import Claim, availability_from_text

INFERRED = "inferred:"
_IN_STOCK = frozenset({"in_stock", "limited", "preorder", "backorder"})
_OUT_OF_STOCK = frozenset({"out_of_stock", "discontinued"})
_ASIN = re.compile(r"^B0[A-Z0-9]{8}$")
_ITEM_ID = re.compile(r"^[A-Za-z]{0,2}\d{5,20}$")
_MAX_OFFERS = 200
_OFFER_KINDS = frozenset({"structured", "meta", "itemprop"})


class SchemaOrgAdapterV11(SchemaOrgAdapter):
    version = "1.1.0"
    #: How this version reads the visible page (``@2.0.0`` has its own; a pin keeps its version's reading).
    rules: Rules = V1_1

    def _refine(self, reading: PageReading) -> None:
        visible = read_visible(reading.html, self.rules, reading.capture.url)
        _price_from_buy_box(reading, visible)
        _availability(reading, visible)
        _identifiers(reading, visible)
        reading.diagnostics.extend(reading.claims.notes)
        reading.claims.notes.clear()


def _claim(reading: PageReading, attribute: str) -> Claim | None:
    return next((c for c in reading.claims.claims if c.attribute == attribute), None)


def _replace(reading: PageReading, attribute: str, value: str, locator: str) -> None:
    reading.claims.claims[:] = [c for c in reading.claims.claims if c.attribute != attribute]
    reading.claims.add(attribute, value, locator)


def _offer_availabilities(reading: PageReading) -> list[Value]:
    """Every offer's availability, nested offers (an AggregateOffer's, an offer's offers) included."""
    if reading.primary is None:
        return []
    found: list[Value] = []
    pending: list[Entity] = list(reading.primary.entities("offers"))
    seen = 0
    while pending and seen < _MAX_OFFERS:
        offer = pending.pop(0)
        seen += 1
        found.extend(v for v in offer.values("availability") if isinstance(v.data, str))
        pending.extend(offer.entities("offers"))
    return found


def _availability(reading: PageReading, visible: VisiblePage) -> None:
    stated = _claim(reading, "core:availability")
    if stated is not None:
        current = availability_from_text(str(stated.value))
        if current in _OUT_OF_STOCK:
            offers = _offer_availabilities(reading)
            in_stock = [v for v in offers if availability_from_text(str(v.data)) in _IN_STOCK]
            if in_stock:
                reading.diagnostics.append(
                    f"offers disagree on availability: {stated.value!r} at {stated.evidence_locator} but "
                    f"{in_stock[0].data!r} at {in_stock[0].locator} ({len(in_stock)} of {len(offers)} offers in "
                    "stock); in stock if any variant is"
                )
                _replace(reading, "core:availability", str(in_stock[0].data), in_stock[0].locator)
        return
    if visible.out_of_stock is not None and not visible.buy_button:
        reading.claims.add("core:availability", "OutOfStock", visible.out_of_stock.locator)
        reading.diagnostics.append(f"availability from visible text {visible.out_of_stock.value!r}")
        return
    if visible.in_stock is not None:
        reading.claims.add("core:availability", "InStock", visible.in_stock.locator)
        reading.diagnostics.append(f"availability from visible text {visible.in_stock.value!r}")
        if visible.out_of_stock is not None:
            reading.diagnostics.append(
                f"visible stock statements disagree: {visible.in_stock.value!r} at {visible.in_stock.locator} vs "
                f"{visible.out_of_stock.value!r} at {visible.out_of_stock.locator}; in stock (a buy action is shown)"
            )
        return
    price = reading.decision.source
    if price is None:
        return
    if visible.buy_action is not None:
        evidence = (
            f"{INFERRED} offered for sale, no stock statement (price at {price.locator}; buy action "
            f"{visible.buy_action.value!r} at {visible.buy_action.locator})"
        )
    elif price.kind in _OFFER_KINDS and visible.out_of_stock is None:
        # A schema.org Offer (or the OpenGraph product price) is the merchant's own statement that the
        # product is offered at that price: the buy action in markup, where the snapshot shows none.
        evidence = f"{INFERRED} offered for sale, no stock statement (offer price at {price.locator})"
    elif visible.markup_offer is not None and visible.out_of_stock is None:
        # @2.0.0: an Offer declared in markup without a price of its own (its price printed beside it).
        evidence = (
            f"{INFERRED} offered for sale, no stock statement (price at {price.locator}; markup "
            f"{visible.markup_offer.value} at {visible.markup_offer.locator})"
        )
    else:
        return
    reading.claims.add("core:availability", "InStock", evidence)
    if visible.out_of_stock is not None:
        reading.diagnostics.append(
            f"{visible.out_of_stock.value!r} at {visible.out_of_stock.locator} beside a buy action; inferred in stock"
        )


def _identifiers(reading: PageReading, visible: VisiblePage) -> None:
    sku = _claim(reading, "core:sku")
    if sku is not None and isinstance(sku.value, str) and " " in sku.value.strip():
        reading.diagnostics.append(
            f"SKU {sku.value!r} at {sku.evidence_locator} has spaces: a name, not an identifier; dropped"
        )
        reading.claims.claims.remove(sku)
        sku = None
    if sku is None and visible.sku is not None:
        reading.claims.add("core:sku", visible.sku.value, visible.sku.locator)
        sku = _claim(reading, "core:sku")
    if sku is None:
        from_url = _url_item_id(reading.capture.url)
        if from_url is not None:
            reading.claims.add("core:sku", from_url, "url:path")
    elif visible.sku is not None and visible.sku.value != sku.value:
        reading.diagnostics.append(
            f"SKU {sku.value!r} at {sku.evidence_locator} differs from labelled {visible.sku.value!r} at "
            f"{visible.sku.locator}"
        )
    if _claim(reading, "core:mpn") is None and visible.mpn is not None:
        reading.claims.add("core:mpn", visible.mpn.value, visible.mpn.locator)


def _url_item_id(url: str | None) -> str | None:
    """The last path token that looks like an item id: an ASIN-like id, or a run of five or more digits after
    at most two letters (``4781720``, ``M67296549``), as the URL spells it."""
    if not url:
        return None
    path = unquote(urlsplit(url).path)
    tokens = [t for t in re.split(r"[/_\-.,;=+]", path) if t]
    for token in reversed(tokens):
        if _ASIN.match(token):
            return token
        if _ITEM_ID.match(token):
            return token
    return None


def _price_from_buy_box(reading: PageReading, visible: VisiblePage) -> None:
    chosen = reading.decision.source
    if chosen is not None:
        _sale_price(reading, visible, chosen)
        return
    if visible.buy_box_price is None or visible.buy_box_amount is None:
        return
    source = PriceSource(
        Decimal(visible.buy_box_amount),
        visible.buy_box_price.value,
        visible.buy_box_price.locator,
        None,
        "buy_box",
    )
    notes = [f"no markup price; price {source.value!r} from the buy box at {source.locator}"]
    if visible.buy_box_others:
        notes.append(f"the buy box also shows {visible.buy_box_others}")
    reading.decision = PriceDecision(source, None, None, tuple(notes))
    reading.claims.add("core:price", source.value, source.locator)
    reading.diagnostics.extend(reading.decision.notes)


def _sale_price(reading: PageReading, visible: VisiblePage, chosen: PriceSource) -> None:
    """The markup states the regular price while the page sells for less: the markup amount is shown only as a
    reference price (struck, "was", "original") and the buy box shows a lower one, which is not a reference
    price itself. The buy box's price is the listing's; the markup's is kept in a diagnostic."""
    sale = visible.buy_box_amount
    if (
        sale is None
        or visible.buy_box_price is None
        or visible.buy_box_vat_labelled
        or chosen.amount not in visible.reference_amounts
        or sale in visible.reference_amounts
        or sale >= chosen.amount
    ):
        return
    note = (
        f"markup price {chosen.value!r} at {chosen.locator} is shown as a reference (was) price; the buy box "
        f"sells at {visible.buy_box_price.value!r} ({visible.buy_box_price.locator}): the sale price is the listing's"
    )
    source = PriceSource(
        sale, visible.buy_box_price.value, visible.buy_box_price.locator, chosen.currency, "buy_box"
    )
    reading.decision = PriceDecision(
        source, reading.decision.currency, reading.decision.currency_code, (*reading.decision.notes, note)
    )
    _replace(reading, "core:price", str(source.value), source.locator)
    reading.diagnostics.append(note)

"""The listing's price and currency, chosen from every place a page states one.

Precedence (README.md explains each rule):
1. the primary product's schema.org offer price;
   except when the page's OpenGraph product tags call that very amount its standard (regular) price
   (``og:price:standard_amount`` / ``product:original_price:amount``) and state a different current price
   (``product:price:amount`` / ``og:price:amount``): then the item is on sale and the current price is taken;
2. the OpenGraph product price (``product:price:amount``, ``og:price:amount``);
3. ``[itemprop=price]`` outside any microdata item;
4. a Twitter card price (``twitter:labelN`` = Price, ``twitter:dataN``);
5. the visible price (Amazon's buy box, else common price containers), only when every match agrees.
Disagreements are diagnosed with both values and locators; they never change which rule wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from prw_adapter_schemaorg.entities import Entity
from prw_adapter_schemaorg.money import CurrencyReading, currency_symbol_in, parse_amount, read_currency
from prw_adapter_schemaorg.offers import OfferReading
from prw_adapter_schemaorg.page import Located, PagePrice, PageSignals
from prw_platform.plugins import ClaimValue

_CURRENT_META = (("product:price:amount", "product:price:currency"), ("og:price:amount", "og:price:currency"))
_STANDARD_META = (
    ("og:price:standard_amount", "og:price:currency"),
    ("product:original_price:amount", "product:original_price:currency"),
)
_TWITTER_SLOTS = 4


@dataclass(frozen=True, slots=True)
class PriceSource:
    amount: Decimal
    value: ClaimValue
    locator: str
    currency: Located | None
    #: ``structured``, ``meta``, ``itemprop``, ``twitter`` or ``visible``.
    kind: str


@dataclass(frozen=True, slots=True)
class PriceDecision:
    source: PriceSource | None = None
    currency: Located | None = None
    currency_code: str | None = None
    notes: tuple[str, ...] = ()


def _meta_price(page: PageSignals, pairs: tuple[tuple[str, str], ...]) -> PriceSource | None:
    for amount_key, currency_key in pairs:
        located = page.meta.get(amount_key)
        amount = parse_amount(located.value) if located else None
        if located is not None and amount is not None and amount > 0:
            return PriceSource(amount, located.value, located.locator, page.meta.get(currency_key), "meta")
    return None


def _twitter_price(page: PageSignals) -> PriceSource | None:
    for slot in range(1, _TWITTER_SLOTS + 1):
        label, data = page.meta.get(f"twitter:label{slot}"), page.meta.get(f"twitter:data{slot}")
        if label is None or data is None or label.value.casefold() != "price":
            continue
        amount = parse_amount(data.value)
        if amount is not None and amount > 0:
            return PriceSource(amount, data.value, data.locator, None, "twitter")
    return None


def _from_page(price: PagePrice | None, kind: str) -> PriceSource | None:
    return PriceSource(price.amount, price.text, price.locator, None, kind) if price else None


def _structured(offer: OfferReading) -> PriceSource | None:
    if offer.amount is None or offer.price is None or isinstance(offer.price.data, Entity):
        return None
    currency = offer.currency
    located = (
        Located(str(currency.data), currency.locator) if currency and isinstance(currency.data, str) else None
    )
    return PriceSource(offer.amount, offer.price.data, offer.price.locator, located, "structured")


def _describe(source: PriceSource) -> str:
    currency = f" {source.currency.value}" if source.currency else ""
    return f"{source.value!r}{currency} at {source.locator}"


def decide_price(offer: OfferReading, page: PageSignals, region: str | None) -> PriceDecision:
    notes: list[str] = []
    structured = _structured(offer)
    current = _meta_price(page, _CURRENT_META)
    chosen = structured or current
    if structured is not None and current is not None and current.amount != structured.amount:
        standard = _meta_price(page, _STANDARD_META)
        if standard is not None and standard.amount == structured.amount:
            chosen = current
            notes.append(
                f"schema.org price {_describe(structured)} is the page's standard price ({standard.locator}); "
                f"the current (sale) price is {_describe(current)}"
            )
        else:
            notes.append(
                f"markup prices disagree: schema.org {_describe(structured)} vs {_describe(current)}; "
                "the schema.org offer is the listing's"
            )
    if chosen is None:
        chosen = (
            _from_page(page.itemprop_price.price, "itemprop")
            or _twitter_price(page)
            or _from_page(page.visible_price.price, "visible")
        )
        if chosen is not None:
            notes.append(f"no schema.org offer price; price from {chosen.locator} ({chosen.kind})")
        elif page.visible_price.conflict:
            notes.append(f"no price taken: visible prices disagree ({page.visible_price.conflict})")
    visible = page.visible_price.price
    if (
        chosen is not None
        and chosen.kind != "visible"
        and visible is not None
        and visible.amount != chosen.amount
    ):
        notes.append(
            f"markup price {_describe(chosen)} differs from visible price {visible.text!r} at {visible.locator}"
        )
    if chosen is None:
        return PriceDecision(notes=tuple(notes))
    currency, reading = _currency(chosen, page, region)
    if reading is not None and reading.note and currency is not None:
        notes.append(f"{currency.locator}: {reading.note}")
    return PriceDecision(chosen, currency, reading.code if reading else None, tuple(notes))


def _currency(
    chosen: PriceSource, page: PageSignals, region: str | None
) -> tuple[Located | None, CurrencyReading | None]:
    """The price's own currency; else the symbol in the price text; else the page's OpenGraph currency; else
    the symbol printed in an ``[itemprop=price]`` element."""
    if chosen.currency is not None:
        return chosen.currency, read_currency(chosen.currency.value, region)
    symbol = currency_symbol_in(chosen.value) if isinstance(chosen.value, str) else None
    if symbol:
        return Located(symbol, chosen.locator), read_currency(symbol, region)
    meta = page.first_meta("product:price:currency", "og:price:currency")
    if meta is not None:
        return meta, read_currency(meta.value, region)
    if page.printed_currency is not None:
        return page.printed_currency, read_currency(page.printed_currency.value, region)
    return None, None

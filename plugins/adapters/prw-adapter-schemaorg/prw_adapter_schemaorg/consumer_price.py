"""``pa_schemaorg@3.0.0``: the price a consumer pays, from every independent statement of it on the page.

Each place that states a price is a *statement* with a source and a confidence (README.md, "Confidence"): the
schema.org offer, the OpenGraph price, an ``[itemprop=price]`` outside any item, a Twitter card, the visible
price containers, the buy box, and the other payable amounts of the buy box's own price block. The consumer price
rules below *explain* a statement away when the page says it is not the price to pay, keeping the evidence in a
diagnostic; the statements left are weighed (``prw_platform.plugins.weigh``) and the most trusted amount is the
listing's. Every rule is general (page structure and words in several languages); each one that changes the
price is reported as a ``RuleFired``:

- ``price.og_sale``: OpenGraph names a sale price (``product:sale_price:amount``), or names the markup's amount
  its standard price beside another current one: the markup's amount is the regular price.
- ``price.sale``: the markup's amount is shown only as a reference price (struck, "was", "original") in the buy
  box, which sells for less.
- ``price.vat_inclusive``: the buy box shows the price without and with VAT: the consumer price includes VAT
  (a statement of the net amount is explained; the choice is less certain, since a shop addressing businesses
  headlines its net price).
- ``price.auction_current_bid``: an auction shows its current bid: the starting price, an estimate and the
  visitor's own maximum bid are not the price.
- ``price.buy_box_offer``: the markup lists several offers (variants, other sellers) and the buy box shows one of
  them: that offer's price, not the first in markup order.
- ``price.not_<role>``: the buy box's price, as ``@2.0.0`` would have taken it, is an amount the page labels as
  something else (``difference``: a signed change; ``conditional``: cash back, a card or member price;
  ``bid_input``, ``bid_start``, ``estimate``): the next payable amount is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from prw_adapter_schemaorg.buy_box import BuyBox, PriceCandidate
from prw_adapter_schemaorg.entities import Entity
from prw_adapter_schemaorg.money import parse_amount
from prw_adapter_schemaorg.offers import PricedOffer, _priced
from prw_adapter_schemaorg.page import Located, PageSignals
from prw_adapter_schemaorg.pricing import (
    _CURRENT_META,
    _STANDARD_META,
    PriceSource,
    _meta_price,
    _twitter_price,
)
from prw_platform.plugins import ClaimValue, EvidenceSource, RuleFired, weigh

# How far one statement of the price to pay is trusted on its own (README.md lists the reasons).
STRUCTURED = 0.85
RANGE_LOW = 0.7  # an AggregateOffer's lowPrice: the cheapest of several offers, a "from" price
META = 0.75
META_SALE = 0.8
ITEMPROP = 0.7
TWITTER = 0.6
SITE_BUY_BOX = 0.85  # the buy box's own ids on the one site with site-aware selectors
VISIBLE = 0.7  # every price container of the page agrees
BUY_BOX_BUTTON = 0.8  # between the product's heading and its buy button
BUY_BOX_HEADING = 0.75  # the first price after the heading, no buy button
VISIBLE_AND_BUY_BOX = 0.85  # the page's price containers all show the buy box's price
NET_PRICE = 0.4  # the buy box's price is labelled without VAT, and no gross price is beside it
GROSS_OF_PAIR = 0.7  # the VAT-inclusive price of a pair: the rule is sure, the headline is not
CURRENT_BID = 0.8
BLOCK_COMPETITOR = 0.5  # another payable amount in the price's own block
BLOCK_LOWER = 0.6  # the lower of two prices one block shows without saying which is the price
_LOWER_RATIO = Decimal(
    "0.3"
)  # below this share of the price, an amount is a part (a deposit, a unit), not a sale
_SIGNS = ("+", "-", "\u2212", "\u2013")
_SITE_BUY_BOX_IDS = ("css:#priceblock", "css:#price_inside_buybox", "css:#corePrice")


@dataclass(frozen=True, slots=True)
class Statement:
    """One independent statement of the price to pay."""

    amount: Decimal
    value: ClaimValue
    locator: str
    source: EvidenceSource
    confidence: float
    #: Its own currency, where it states one (a schema.org ``priceCurrency``, an OpenGraph currency).
    currency: Located | None = None
    #: Markup syntax of a structured statement (``microdata``, ``rdfa``, ``jsonld``), else None.
    syntax: str | None = None


@dataclass(frozen=True, slots=True)
class PriceVerdict:
    """The statements to claim (the chosen amount's first), the chosen one, and what the rules did."""

    statements: tuple[Statement, ...] = ()
    chosen: Statement | None = None
    rules: tuple[RuleFired, ...] = ()
    notes: tuple[str, ...] = ()


def _syntax(locator: str) -> str | None:
    return next((s for s in ("jsonld", "microdata", "rdfa") if locator.startswith(s)), None)


def _statement(source: PriceSource, kind: EvidenceSource, confidence: float) -> Statement:
    return Statement(
        source.amount,
        source.value,
        source.locator,
        kind,
        confidence,
        source.currency,
        _syntax(source.locator),
    )


def _candidate(candidate: PriceCandidate, confidence: float) -> Statement:
    return Statement(candidate.amount, candidate.text, candidate.locator, "buy_box", confidence)


def _describe(statement: Statement | PriceCandidate) -> str:
    value = statement.value if isinstance(statement, Statement) else statement.text
    return f"{value!r} at {statement.locator}"


@dataclass
class _Reading:
    """The statements as they are explained away, with the notes and rules that did it."""

    statements: list[Statement]
    notes: list[str]
    rules: list[RuleFired]

    def choice(self) -> Statement | None:
        ranked = weigh([(s.amount, s.confidence) for s in self.statements])
        return self.statements[ranked[0].witnesses[0]] if ranked else None

    def explain(self, rule: str, amounts: set[Decimal], why: str) -> None:
        """Drop every statement of one of ``amounts``, noting why."""
        dropped = [s for s in self.statements if s.amount in amounts]
        if dropped:
            self.statements = [s for s in self.statements if s not in dropped]
            self.notes.append(f"{rule}: {', '.join(_describe(s) for s in dropped)} {why}")

    def add(self, rule: str, statement: Statement, why: str) -> None:
        self.statements = [s for s in self.statements if s.locator != statement.locator] + [statement]
        self.notes.append(f"{rule}: {_describe(statement)} {why}")

    def record(self, rule: str, before: Statement | None) -> None:
        """The rule fired: a ``RuleFired`` when the chosen amount differs from ``before`` (the choice before it)."""
        after = self.choice()
        before_value = None if before is None else str(before.amount)
        after_value = None if after is None else str(after.amount)
        if before_value != after_value:
            self.rules.append(RuleFired(rule, "core:price", before_value, after_value))


_Rule = Callable[[_Reading], None]


def decide_consumer_price(
    primary_offers: tuple[Entity, ...], page: PageSignals, box: BuyBox, structured_offer: PriceSource | None
) -> PriceVerdict:
    """The statements of the price to pay on a page, explained and weighed."""
    offers = _markup_offers(primary_offers)
    reading = _Reading(_statements(page, box, structured_offer), [], [])
    rules: list[tuple[str, _Rule]] = [
        ("price.og_sale", lambda r: _og_sale(r, page, structured_offer)),
        ("price.sale", lambda r: _sale(r, box)),
        ("price.vat_inclusive", lambda r: _vat_inclusive(r, box)),
        ("price.auction_current_bid", lambda r: _auction(r, box)),
        ("price.buy_box_offer", lambda r: _buy_box_offer(r, box, offers)),
        ("price.block_lower", lambda r: _block_lower(r, box)),
    ]
    for name, rule in rules:
        before = reading.choice()
        rule(reading)
        reading.record(name, before)
    for excluded, candidate in box.excluded:
        _record_exclusion(reading, excluded, candidate, box.price)
        reading.notes.append(
            f"{excluded}: the buy box's {_describe(candidate)} is {candidate.role.replace('_', ' ')} "
            f"({candidate.label or 'by its class'}), not the price"
        )
    chosen = reading.choice()
    ordered = sorted(reading.statements, key=lambda s: chosen is None or s.amount != chosen.amount)
    disagreeing = sorted({s.amount for s in ordered} - ({chosen.amount} if chosen else set()))
    if chosen is not None and disagreeing:
        others = "; ".join(
            _describe(s) + f" ({s.source} {s.confidence})" for s in ordered if s.amount != chosen.amount
        )
        reading.notes.append(f"price statements disagree: {_describe(chosen)} ({chosen.source}) vs {others}")
    return PriceVerdict(tuple(ordered), chosen, tuple(reading.rules), tuple(reading.notes))


def _record_exclusion(
    reading: _Reading, rule: str, candidate: PriceCandidate, price: PriceCandidate | None
) -> None:
    """A ``price.not_<role>`` reading fired: the listing's price with the excluded amount in the buy box's place
    (``@2.0.0``'s choice) against the price now."""
    place = None if price is None else price.locator
    statements = [s for s in reading.statements if s.locator != place]
    confidence = next((s.confidence for s in reading.statements if s.locator == place), BUY_BOX_HEADING)
    without = _Reading([*statements, _candidate(candidate, confidence)], [], [])
    reading.record(rule, without.choice())


def _markup_offers(offers: tuple[Entity, ...]) -> list[PricedOffer]:
    sink: list[str] = []
    return [found for offer in offers[:50] for found in _priced(offer, None, sink)]


def _statements(page: PageSignals, box: BuyBox, structured: PriceSource | None) -> list[Statement]:
    found: list[Statement] = []
    if structured is not None:
        low = structured.locator.endswith("lowPrice")
        found.append(_statement(structured, "structured", RANGE_LOW if low else STRUCTURED))
    meta = _meta_price(page, _CURRENT_META)
    if meta is not None:
        found.append(_statement(meta, "meta", META))
    itemprop = page.itemprop_price.price
    if itemprop is not None:
        found.append(Statement(itemprop.amount, itemprop.text, itemprop.locator, "structured", ITEMPROP))
    twitter = _twitter_price(page)
    if twitter is not None:
        found.append(_statement(twitter, "meta", TWITTER))
    visible = page.visible_price.price
    seen_visible: Statement | None = None
    if visible is not None and visible.text.lstrip().startswith(_SIGNS):
        visible = None  # a signed amount is a change or an extra ("-0,02 €", "+5,00 €"), not a price
    if visible is not None:
        site = visible.locator.startswith(_SITE_BUY_BOX_IDS)
        seen_visible = Statement(
            visible.amount, visible.text, visible.locator, "buy_box", SITE_BUY_BOX if site else VISIBLE
        )
        found.append(seen_visible)
    price = box.price
    if price is not None:
        confidence = BUY_BOX_BUTTON if box.anchor == "button" else BUY_BOX_HEADING
        if price.role == "vat_excl" and box.gross is None:
            confidence = NET_PRICE
        own = _candidate(price, confidence)
        markup = next((s for s in found if s.syntax is not None and s.amount == price.amount), None)
        if price.marked_up and markup is not None:
            pass  # the buy box shows the markup's own price element: the markup's statement, not another one
        elif seen_visible is not None and seen_visible.amount == price.amount:
            # The visible page read two ways is one witness, and a strong one: every price container of the
            # page shows the amount the buy box asks for.
            strongest = max(own.confidence, seen_visible.confidence, VISIBLE_AND_BUY_BOX)
            found[found.index(seen_visible)] = replace(own, confidence=strongest)
        else:
            found.append(own)
        for competitor in box.cluster:
            if competitor.amount != price.amount and competitor.role in ("current", "vat_incl"):
                found.append(_candidate(competitor, BLOCK_COMPETITOR))
    return _distinct_places(found)


def _distinct_places(statements: list[Statement]) -> list[Statement]:
    """One statement per place (two readings of one element are one witness)."""
    seen: set[str] = set()
    kept = []
    for statement in statements:
        if statement.locator not in seen:
            seen.add(statement.locator)
            kept.append(statement)
    return kept


def _og_sale(reading: _Reading, page: PageSignals, structured: PriceSource | None) -> None:
    sale = page.meta.get("product:sale_price:amount")
    sale_amount = parse_amount(sale.value) if sale is not None else None
    current = _meta_price(page, _CURRENT_META)
    if sale is not None and sale_amount is not None and sale_amount > 0:
        currency = page.meta.get("product:sale_price:currency") or (current.currency if current else None)
        regular = {current.amount} if current is not None and current.amount != sale_amount else set()
        if regular:
            reading.explain(
                "price.og_sale",
                regular,
                f"is the regular price: OpenGraph's sale price is {sale.value!r} at {sale.locator}",
            )
        reading.add(
            "price.og_sale",
            Statement(sale_amount, sale.value, sale.locator, "meta", META_SALE, currency),
            "is OpenGraph's sale price",
        )
        return
    standard = _meta_price(page, _STANDARD_META)
    if (
        structured is not None
        and standard is not None
        and current is not None
        and standard.amount == structured.amount
        and current.amount != structured.amount
    ):
        reading.explain(
            "price.og_sale",
            {structured.amount},
            f"is the page's standard price ({standard.locator}); the current (sale) price is "
            f"{current.value!r} at {current.locator}",
        )


def _sale(reading: _Reading, box: BuyBox) -> None:
    price = box.price
    if price is None or price.role == "vat_excl" or price.role == "vat_incl":
        return
    references = {amount for amount in box.references if amount > price.amount}
    markup = {s.amount for s in reading.statements if s.source in ("structured", "meta")}
    shown_struck = (references & markup) - {price.amount}
    if shown_struck:
        reading.explain(
            "price.sale",
            shown_struck,
            f"is shown as a reference (was) price; the buy box sells at {_describe(price)}",
        )
        if not any(s.amount == price.amount for s in reading.statements):
            reading.add("price.sale", _candidate(price, BUY_BOX_BUTTON), "is the sale price")


def _vat_inclusive(reading: _Reading, box: BuyBox) -> None:
    if box.net is None or box.gross is None:
        return
    net, gross = box.net, box.gross
    reading.explain(
        "price.vat_inclusive",
        {net.amount},
        f"is the price without VAT ({net.label or net.role}); the consumer price is {_describe(gross)}",
    )
    kept = [s for s in reading.statements if s.amount == gross.amount]
    for statement in kept:
        if statement.source == "buy_box":
            reading.statements[reading.statements.index(statement)] = replace(
                statement, confidence=GROSS_OF_PAIR
            )
    if not kept:
        reading.add("price.vat_inclusive", _candidate(gross, GROSS_OF_PAIR), "includes VAT")


def _auction(reading: _Reading, box: BuyBox) -> None:
    amounts = [*box.window, *box.labelled]
    current = [c for c in amounts if c.role == "bid_current"]
    if not current:
        return
    bid = current[0]
    others = {c.amount for c in amounts if c.role in ("bid_start", "estimate", "bid_input")} - {bid.amount}
    # A bid to place is above the current bid: the buy box's higher amounts are the visitor's next bid.
    others |= {c.amount for c in box.window if c.role == "current" and c.amount > bid.amount}
    if others:
        reading.explain(
            "price.auction_current_bid",
            others,
            f"is a starting price, an estimate or a bid to place; the current bid is {_describe(bid)}",
        )
    if not any(s.amount == bid.amount and s.source == "buy_box" for s in reading.statements):
        reading.add("price.auction_current_bid", _candidate(bid, CURRENT_BID), "is the auction's current bid")


def _buy_box_offer(reading: _Reading, box: BuyBox, offers: list[PricedOffer]) -> None:
    price = box.price
    amounts = {found.amount for found in offers}
    if price is None or len(amounts) < 2 or price.amount not in amounts:
        return
    first = offers[0]
    if first.amount == price.amount:
        return
    shown = next(found for found in offers if found.amount == price.amount)
    currency = shown.currency
    located = (
        Located(str(currency.data), currency.locator) if currency and isinstance(currency.data, str) else None
    )
    value = shown.price.data if not isinstance(shown.price.data, Entity) else str(shown.amount)
    reading.explain(
        "price.buy_box_offer",
        {first.amount},
        f"is another offer of the product (a variant or another seller); the buy box shows {_describe(price)}",
    )
    reading.add(
        "price.buy_box_offer",
        Statement(
            shown.amount,
            value,
            shown.price.locator,
            "structured",
            STRUCTURED,
            located,
            _syntax(shown.price.locator),
        ),
        "is the markup offer the buy box shows",
    )


def _block_lower(reading: _Reading, box: BuyBox) -> None:
    """``price.block_lower``: the buy box's price block shows another, lower amount (neither labelled without
    VAT), and nothing says which one is paid: a regular price beside a sale price whose
    styling alone (a class, not a struck tag) marks the regular one. The lower one is taken, both stay
    statements, so the choice is a doubtful one."""
    price = box.price
    if price is None or price.role not in ("current", "vat_incl") or box.net is not None:
        return
    lower = [
        c
        for c in box.cluster
        if c.role in ("current", "vat_incl") and price.amount * _LOWER_RATIO <= c.amount < price.amount
    ]
    if not lower:
        return
    sale = min(lower, key=lambda c: c.amount)
    statements = reading.statements
    for index, statement in enumerate(statements):
        if statement.source == "buy_box" and statement.amount == price.amount:
            statements[index] = replace(statement, confidence=BLOCK_COMPETITOR)
    reading.statements = [s for s in statements if not (s.source == "buy_box" and s.amount == sale.amount)]
    reading.add(
        "price.block_lower",
        _candidate(sale, BLOCK_LOWER),
        f"is the lower of two prices in the buy box's block (the other: {_describe(price)})",
    )

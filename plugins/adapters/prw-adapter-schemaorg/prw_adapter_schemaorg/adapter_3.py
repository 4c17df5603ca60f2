"""``pa_schemaorg@3.0.0``: ``@2.0.0``'s reading, every claim rated, and the offer read as statements.

Every claim names its evidence source and a confidence (``ratings``). The offer's price, currency and
availability are claimed once per independent statement on the page, so a profile weighing them sees agreement
and disagreement: the schema.org offer, the OpenGraph tags and the buy box each say their piece. The price to pay
follows the consumer price rules of ``consumer_price`` (sale, VAT included, an auction's current bid, the offer
the buy box shows, amounts that are no price); each rule that changes the price is reported (``RuleFired``), with
the statements it explained away in a diagnostic. README.md lists the rules and the confidences; a MAJOR version,
since the claims ``@2.0.0`` makes change (more of them, and another price on auction, VAT and multi-offer pages).
"""

from __future__ import annotations

from dataclasses import dataclass

from prw_adapter_schemaorg.adapter import PageReading
from prw_adapter_schemaorg.adapter_1_1 import (
    _availability,
    _identifiers,
    _price_from_buy_box,
)
from prw_adapter_schemaorg.adapter_2 import SchemaOrgAdapterV2
from prw_adapter_schemaorg.buy_box import BuyBox, read_buy_box
from prw_adapter_schemaorg.consumer_price import PriceVerdict, Statement, decide_consumer_price
from prw_adapter_schemaorg.money import currency_symbol_in, read_currency, region_hint
from prw_adapter_schemaorg.page import Located
from prw_adapter_schemaorg.pricing import PriceDecision, PriceSource, _structured
from prw_adapter_schemaorg.ratings import INFERRED, rated, source_of
from prw_adapter_schemaorg.visible import VisiblePage, read_visible
from prw_platform.plugins import Claim, EvidenceSource, availability_from_text, weigh

# Currency statements (README.md, "Confidence").
_OWN_CURRENCY = {"structured": 0.95, "meta": 0.9}
_PAGE_CURRENCY = 0.85  # the page's OpenGraph currency
_SYMBOL = 0.85  # an unambiguous symbol printed with the price (€, zł, R$)
_AMBIGUOUS_SYMBOL = 0.5  # $, kr, ¥: the symbol alone names several currencies
_PRINTED_CURRENCY = 0.8  # a currency printed inside the markup's price element
_REGION_BY_DOMAIN = 0.85  # the shop's country from its country-code domain
_REGION_BY_LANGUAGE = 0.8  # the shop's country from the region of <html lang>
# Availability statements.
_STATED = {"structured": 0.9, "meta": 0.8, "text": 0.8}
_INFERRED_BY_BUTTON = 0.8  # a price and an enabled buy button, no stock statement
_INFERRED = 0.75  # a price and a buy action that is not a button
_INFERRED_BY_OFFER = 0.7  # a markup offer price, no buy action seen
_BUY_BUTTON = 0.7  # an enabled buy button beside a stated availability
_DISABLED_BUTTON = 0.7  # a buy button shown disabled (a variant to choose first, or nothing to buy)


class SchemaOrgAdapterV3(SchemaOrgAdapterV2):
    version = "3.0.0"

    def _refine(self, reading: PageReading) -> None:
        visible = read_visible(reading.html, self.rules, reading.capture.url)
        _price_from_buy_box(reading, visible)
        _availability(reading, visible)
        _identifiers(reading, visible)
        box = read_buy_box(reading.html, self.rules, reading.capture.url)
        offers = reading.primary.entities("offers") if reading.primary is not None else ()
        verdict = decide_consumer_price(offers, reading.page, box, _structured(reading.offer))
        reading.rules_fired.extend(verdict.rules)
        # @2.0.0's notes on its own price choice would contradict this one: the verdict's notes replace them.
        superseded = set(reading.decision.notes)
        reading.diagnostics[:] = [d for d in reading.diagnostics if d not in superseded]
        reading.diagnostics.extend(verdict.notes)
        _claim_price(reading, verdict)
        _claim_availability(reading, visible, box)
        claims = reading.claims.claims
        claims[:] = [rated(claim) for claim in claims]
        reading.diagnostics.extend(reading.claims.notes)
        reading.claims.notes.clear()


@dataclass(frozen=True, slots=True)
class _Witness:
    value: str
    locator: str
    source: EvidenceSource
    confidence: float


def _replace_claims(reading: PageReading, attribute: str, witnesses: list[Claim]) -> None:
    claims = reading.claims.claims
    claims[:] = [c for c in claims if c.attribute != attribute]
    for claim in witnesses:
        if not any(c.attribute == attribute and c.evidence_locator == claim.evidence_locator for c in claims):
            claims.append(claim)


def _claim_price(reading: PageReading, verdict: PriceVerdict) -> None:
    chosen = verdict.chosen
    _replace_claims(
        reading,
        "core:price",
        [Claim("core:price", s.value, s.locator, s.source, s.confidence) for s in verdict.statements],
    )
    if chosen is None:
        _replace_claims(reading, "core:currency", [])
        reading.decision = PriceDecision(notes=reading.decision.notes)
        return
    witnesses = _currency_witnesses(reading, verdict, chosen)
    _replace_claims(
        reading,
        "core:currency",
        [Claim("core:currency", w.value, w.locator, w.source, w.confidence) for w in witnesses],
    )
    definite = [(code, w.confidence) for w in witnesses if (code := _definite(w.value))]
    ranked = weigh(definite)
    code = ranked[0].key if ranked else _assumed(witnesses, reading.region)
    first = witnesses[0] if witnesses else None
    currency = Located(first.value, first.locator) if first else None
    source = PriceSource(chosen.amount, chosen.value, chosen.locator, chosen.currency, chosen.source)
    reading.decision = PriceDecision(source, currency, code, reading.decision.notes)


def _assumed(witnesses: list[_Witness], region: str | None) -> str | None:
    """An ambiguous symbol read as ``@2.0.0`` reads it (``$`` without a region: USD), for the listing field only;
    no claim says so, so a profile does not count the assumption as evidence."""
    for witness in witnesses:
        code = read_currency(witness.value, region).code
        if code is not None:
            return code
    return None


def _currency_witnesses(reading: PageReading, verdict: PriceVerdict, chosen: Statement) -> list[_Witness]:
    """Every statement of the chosen price's currency: its own (``priceCurrency``, the OpenGraph currency), the
    symbol printed with it, the page's OpenGraph currency, a currency printed in the markup's price element, and,
    when a symbol is ambiguous, the shop's country (its country domain, else the region of ``<html lang>``)."""
    found: list[_Witness] = []
    for statement in verdict.statements:
        if statement.amount != chosen.amount:
            continue
        own = statement.currency
        if own is not None and own.value.strip():
            found.append(
                _Witness(own.value, own.locator, statement.source, _OWN_CURRENCY.get(statement.source, 0.85))
            )
        symbol = currency_symbol_in(statement.value) if isinstance(statement.value, str) else None
        if symbol:
            definite = _definite(symbol) is not None
            found.append(
                _Witness(
                    symbol, statement.locator, statement.source, _SYMBOL if definite else _AMBIGUOUS_SYMBOL
                )
            )
    page = reading.page
    meta = page.first_meta("product:price:currency", "og:price:currency")
    if meta is not None:
        found.append(_Witness(meta.value, meta.locator, "meta", _PAGE_CURRENCY))
    if page.printed_currency is not None:
        printed = page.printed_currency
        found.append(_Witness(printed.value, printed.locator, "text", _PRINTED_CURRENCY))
    found = _distinct(found)
    ambiguous = [w for w in found if _definite(w.value) is None]
    if ambiguous and reading.region is not None:
        code = read_currency(ambiguous[0].value, reading.region).code
        if code is not None:
            by_domain = _country_domain(reading.capture.url) == reading.region
            found.append(
                _Witness(code, "url:host", "url", _REGION_BY_DOMAIN)
                if by_domain
                else _Witness(code, "css:html[lang]", "text", _REGION_BY_LANGUAGE)
            )
    return found


def _definite(text: str) -> str | None:
    """The ISO code a currency text names by itself (``EUR``, ``€``, ``zł``); None for an ambiguous symbol (``$``,
    ``kr``, ``¥``), whatever default a listing field would assume for it."""
    reading = read_currency(text, None)
    return reading.code if reading.note is None else None


def _distinct(witnesses: list[_Witness]) -> list[_Witness]:
    seen: set[str] = set()
    kept = []
    for witness in witnesses:
        if witness.locator not in seen:
            seen.add(witness.locator)
            kept.append(witness)
    return kept


def _country_domain(url: str | None) -> str | None:
    return region_hint(url, None)


def _claim_availability(reading: PageReading, visible: VisiblePage, box: BuyBox) -> None:
    """The stated (or inferred) availability, the visible statements beside it, and a disabled buy button."""
    stated = next((c for c in reading.claims.claims if c.attribute == "core:availability"), None)
    witnesses: list[Claim] = []
    if stated is not None:
        witnesses.append(_rated_availability(stated, visible, reading))
        if source_of(stated.evidence_locator) in ("structured", "meta"):
            if visible.in_stock is not None:
                witnesses.append(
                    Claim("core:availability", "InStock", visible.in_stock.locator, "text", _STATED["text"])
                )
            if visible.out_of_stock is not None and not visible.buy_button:
                witnesses.append(
                    Claim(
                        "core:availability",
                        "OutOfStock",
                        visible.out_of_stock.locator,
                        "text",
                        _STATED["text"],
                    )
                )
            if visible.buy_button and visible.buy_action is not None:
                witnesses.append(
                    Claim("core:availability", "InStock", visible.buy_action.locator, "buy_box", _BUY_BUTTON)
                )
    if box.buy_disabled is not None and witnesses:
        # A disabled button disputes a statement (a variant may have to be chosen first); it never states alone.
        witnesses.append(
            Claim("core:availability", "OutOfStock", box.buy_disabled.locator, "buy_box", _DISABLED_BUTTON)
        )
        reading.diagnostics.append(
            f"availability: the buy button {box.buy_disabled.value!r} at {box.buy_disabled.locator} is disabled"
        )
    if not witnesses:
        return
    ranked = weigh(
        [(availability_from_text(str(c.value)) or str(c.value), c.confidence or 0.0) for c in witnesses]
    )
    chosen = set(ranked[0].witnesses)
    ordered = [c for i, c in enumerate(witnesses) if i in chosen] + [
        c for i, c in enumerate(witnesses) if i not in chosen
    ]
    if len(ranked) > 1:
        reading.diagnostics.append(
            "availability statements disagree: "
            + "; ".join(f"{c.value!r} at {c.evidence_locator} ({c.source} {c.confidence})" for c in witnesses)
        )
    _replace_claims(reading, "core:availability", ordered)


def _rated_availability(claim: Claim, visible: VisiblePage, reading: PageReading) -> Claim:
    source = source_of(claim.evidence_locator)
    if claim.evidence_locator.startswith(INFERRED):
        if "buy action" not in claim.evidence_locator:
            confidence = _INFERRED_BY_OFFER
        else:
            confidence = _INFERRED_BY_BUTTON if visible.buy_button else _INFERRED
    else:
        confidence = _STATED.get(source, 0.7)
    return Claim(claim.attribute, claim.value, claim.evidence_locator, source, confidence)

"""The offer of the primary product: price, currency, availability and URL, with where each was found.

Rules, in order (each documented in README.md):
- ``offers`` may be one Offer, an AggregateOffer or a list; offers are read in markup order and the first one
  with a positive price is the listing's offer.
- An AggregateOffer gives ``price`` if present, else ``lowPrice`` (a range is noted); with neither, its own
  ``offers`` are read.
- An Offer gives ``price``; without it, the first ``priceSpecification`` that is not a member-tier price and
  not a list/strikethrough price.
- The currency is the chosen offer's (or its price specification's, or the enclosing AggregateOffer's)
  ``priceCurrency``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from prw_adapter_schemaorg.entities import Entity, ProductView, Value, local_name
from prw_adapter_schemaorg.money import parse_amount

# priceType values that mark a price that is not the one to pay now.
_REFERENCE_PRICE_TYPES = frozenset(
    {"ListPrice", "StrikethroughPrice", "MSRP", "SRP", "InvoicePrice", "MinimumAdvertisedPrice"}
)


@dataclass(frozen=True, slots=True)
class PricedOffer:
    offer: Entity
    price: Value
    amount: Decimal
    currency: Value | None


@dataclass(frozen=True, slots=True)
class OfferReading:
    #: The offer the price came from; without a price, the first offer (for availability and URL).
    offer: Entity | None = None
    price: Value | None = None
    amount: Decimal | None = None
    currency: Value | None = None
    availability: Value | None = None
    url: Value | None = None
    notes: tuple[str, ...] = ()


def read_offer(view: ProductView) -> OfferReading:
    offers = view.entities("offers")
    if not offers:
        return OfferReading()
    notes: list[str] = []
    priced = [found for offer in offers for found in _priced(offer, None, notes)]
    if not priced:
        first = offers[0]
        return OfferReading(
            offer=first,
            availability=_first_availability(offers),
            url=first.first("url"),
            notes=tuple(notes),
        )
    chosen = priced[0]
    distinct = sorted({found.amount for found in priced})
    if len(distinct) > 1:
        listed = ", ".join(f"{found.amount} at {found.price.locator}" for found in priced[:6])
        notes.append(
            f"{len(priced)} offer prices differ ({listed}); the first in markup order is the listing's"
        )
    return OfferReading(
        offer=chosen.offer,
        price=chosen.price,
        amount=chosen.amount,
        currency=chosen.currency,
        availability=chosen.offer.first("availability") or _first_availability(offers),
        url=chosen.offer.first("url"),
        notes=tuple(notes),
    )


def _first_availability(offers: tuple[Entity, ...]) -> Value | None:
    return next((value for offer in offers if (value := offer.first("availability"))), None)


def _positive(value: Value | None, notes: list[str]) -> Decimal | None:
    if value is None or isinstance(value.data, Entity):
        return None
    amount = parse_amount(value.data)
    if amount is not None and amount <= 0:
        notes.append(f"price {value.data!r} at {value.locator} ignored: not a positive amount")
        return None
    return amount


def _priced(offer: Entity, inherited_currency: Value | None, notes: list[str]) -> list[PricedOffer]:
    currency = offer.first("priceCurrency") or inherited_currency
    price = offer.first("price")
    amount = _positive(price, notes)
    if price is not None and amount is not None:
        return [PricedOffer(offer, price, amount, currency)]
    if offer.is_a(("AggregateOffer",)) or offer.values("lowPrice"):
        low = offer.first("lowPrice")
        low_amount = _positive(low, notes)
        if low is not None and low_amount is not None:
            high = offer.first("highPrice")
            high_amount = _positive(high, notes)
            if high is not None and high_amount is not None and high_amount != low_amount:
                notes.append(
                    f"{offer.locator}: price range {low_amount} to {high_amount}; lowPrice is the listing's price"
                )
            return [PricedOffer(offer, low, low_amount, currency)]
        return [found for inner in offer.entities("offers") for found in _priced(inner, currency, notes)]
    return _from_price_specification(offer, currency, notes)


def _from_price_specification(offer: Entity, currency: Value | None, notes: list[str]) -> list[PricedOffer]:
    for specification in offer.entities("priceSpecification"):
        price_type = specification.first("priceType")
        kind = local_name(price_type.data) if price_type and isinstance(price_type.data, str) else None
        if specification.values("validForMemberTier"):
            notes.append(f"{specification.locator}: member-tier price skipped")
            continue
        if kind in _REFERENCE_PRICE_TYPES:
            notes.append(f"{specification.locator}: {kind} skipped (not the price to pay)")
            continue
        price = specification.first("price")
        amount = _positive(price, notes)
        if price is not None and amount is not None:
            return [PricedOffer(offer, price, amount, specification.first("priceCurrency") or currency)]
    return []

"""Shipping evaluation (if_product_query ``POST /v1/shipping/evaluations``): a basket of public listings, one
merchant's, shipped to a destination costs the merchant's released rate for it, or nothing once the basket is
worth the free-shipping threshold. Computed per request from the released snapshot; stores nothing.

Errors, in the order checked: 422 INVALID_DESTINATION (not ISO 3166-1 alpha-2), 404 NOT_FOUND (a listing no
release publishes, or one no public merchant sells), 422 BASKET_SPANS_MERCHANTS, 422 INVALID_DESTINATION (the
merchant does not ship there), 422 INVALID_QUERY (a listing without a price in the policy's currency).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Final

from prw_platform.contracts import decimal_string
from prw_platform.db.database import Database
from prw_platform.inputs.countries import is_country_code
from prw_platform.product.errors import BasketSpansMerchants, InvalidDestination, InvalidQuery, NotPublic
from prw_platform.product.public import store
from prw_platform.product.public.rows import ListingMerchant, MerchantListing, Release

MAX_BASKET_LINES: Final = 50


@dataclass(frozen=True, slots=True)
class BasketLine:
    listing_id: str
    quantity: int


@dataclass(frozen=True, slots=True)
class PricedLine:
    listing_id: str
    quantity: int
    price: Decimal


@dataclass(frozen=True, slots=True)
class ShippingEvaluation:
    merchant_id: str
    destination: str
    currency: str
    lines: tuple[PricedLine, ...]
    subtotal: Decimal
    shipping: Decimal
    free_shipping_threshold: Decimal | None
    release: Release

    @property
    def free_shipping(self) -> bool:
        return self.free_shipping_threshold is not None and self.subtotal >= self.free_shipping_threshold


def evaluate_shipping(
    db: Database, tenant_id: str, catalog_id: str, destination: str, lines: Sequence[BasketLine]
) -> ShippingEvaluation:
    if not is_country_code(destination):
        raise InvalidDestination(f"destination {destination!r} is not an ISO 3166-1 alpha-2 country code")
    if not 1 <= len(lines) <= MAX_BASKET_LINES:
        raise InvalidQuery(f"a basket has 1 to {MAX_BASKET_LINES} lines")
    quantities: Counter[str] = Counter()
    for line in lines:
        quantities[line.listing_id] += line.quantity
    basket = store.basket_read(tenant_id, catalog_id, sorted(quantities)).run(db)
    listings = {entry.listing.listing_id: entry for entry in basket.listings}
    missing = sorted(set(quantities) - set(listings))
    if missing:
        raise NotPublic(f"no public listing {', '.join(missing)}")
    merchant = _one_merchant(list(listings.values()))
    policy = merchant.shipping_policy or {}
    rates = {rate["destination"]: rate["rate"] for rate in policy.get("rates", []) if isinstance(rate, dict)}
    if destination not in rates:
        raise InvalidDestination(f"merchant {merchant.merchant_id} does not ship to {destination}")
    currency = str(policy["currency"])
    priced = tuple(
        _priced(listings[listing_id], quantity, currency) for listing_id, quantity in quantities.items()
    )
    subtotal = sum((line.price * line.quantity for line in priced), Decimal(0))
    threshold = policy.get("free_shipping_threshold")
    evaluation = ShippingEvaluation(
        merchant.merchant_id,
        destination,
        currency,
        priced,
        subtotal,
        Decimal(rates[destination]),
        None if threshold is None else Decimal(threshold),
        basket.release,
    )
    # "free above the threshold": the rate times zero keeps its scale ("0.00").
    return replace(evaluation, shipping=evaluation.shipping * 0) if evaluation.free_shipping else evaluation


def serialize_evaluation(evaluation: ShippingEvaluation) -> dict[str, Any]:
    document: dict[str, Any] = {
        "merchant": evaluation.merchant_id,
        "destination": evaluation.destination,
        "currency": evaluation.currency,
        "lines": [
            {"listing": line.listing_id, "quantity": line.quantity, "price": decimal_string(line.price)}
            for line in evaluation.lines
        ],
        "subtotal": decimal_string(evaluation.subtotal),
        "shipping": decimal_string(evaluation.shipping),
        "total": decimal_string(evaluation.subtotal + evaluation.shipping),
        "free_shipping": evaluation.free_shipping,
        "publication_revision": evaluation.release.publication_revision,
    }
    if evaluation.free_shipping_threshold is not None:
        document["free_shipping_threshold"] = decimal_string(evaluation.free_shipping_threshold)
    return document


def _one_merchant(listings: list[MerchantListing]) -> ListingMerchant:
    unsold = sorted(entry.listing.listing_id for entry in listings if entry.merchant is None)
    if unsold:
        raise NotPublic(f"no public merchant sells listing {', '.join(unsold)}")
    merchants = {
        entry.merchant.merchant_id: entry.merchant for entry in listings if entry.merchant is not None
    }
    if len(merchants) > 1:
        raise BasketSpansMerchants(
            f"the basket's listings belong to merchants {', '.join(sorted(merchants))}: evaluate one merchant's "
            "basket at a time"
        )
    return next(iter(merchants.values()))


def _priced(entry: MerchantListing, quantity: int, currency: str) -> PricedLine:
    price, listing_currency = entry.listing.fields.get("price"), entry.listing.fields.get("currency")
    if not isinstance(price, str) or listing_currency != currency:
        raise InvalidQuery(
            f"listing {entry.listing.listing_id} has no price in {currency}, the policy's currency"
        )
    return PricedLine(entry.listing.listing_id, quantity, Decimal(price))

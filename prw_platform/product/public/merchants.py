"""The public merchant documents (if_product_query ``GET /v1/merchants``, ``GET /v1/merchants/{id}``,
``GET /v1/items/{id}/listings``): merchants, their shipping policies, an item's listings with their merchants.

Read from the released snapshot of the serving generation (``store.MERCHANTS``, ``store.item_listings_read``); a
merchant, a source binding or a shipping policy accepted but not released is not public. Absent values (a
merchant's URL, a listing's merchant, a policy's threshold) are left out, not null.
"""

from __future__ import annotations

from typing import Any, Final

from prw_platform.product.public.fields import (
    public_listing_fields,
    public_merchant_fields,
    public_policy_fields,
)
from prw_platform.product.public.rows import (
    Detail,
    ItemListings,
    MerchantListing,
    Page,
    PublicItem,
    PublicMerchant,
)

__all__ = [
    "ItemListings",
    "MerchantDetail",
    "MerchantPage",
    "serialize_item_listings",
    "serialize_merchant",
    "serialize_merchant_page",
    "serialize_policy",
]

MerchantPage = Page[PublicMerchant]
MerchantDetail = Detail[PublicMerchant]
_INVENTORY_FIELDS: Final = ("price", "currency", "availability", "observed_at")


def serialize_merchant(merchant: PublicMerchant) -> dict[str, Any]:
    fields = public_merchant_fields(merchant.fields)
    document: dict[str, Any] = {"merchant": merchant.merchant_id, "name": fields["name"]}
    if fields["url"] is not None:
        document["url"] = fields["url"]
    document["sources"] = list(merchant.sources)
    if merchant.shipping_policy is not None:
        document["shipping_policy"] = serialize_policy(merchant.shipping_policy)
    document["published_revision"] = merchant.published_revision
    document["publication_revision"] = merchant.publication_revision
    return document


def serialize_policy(snapshot: dict[str, Any]) -> dict[str, Any]:
    fields = public_policy_fields(snapshot)
    document: dict[str, Any] = {"currency": fields["currency"], "rates": fields["rates"]}
    if fields["free_shipping_threshold"] is not None:
        document["free_shipping_threshold"] = fields["free_shipping_threshold"]
    return document


def serialize_merchant_page(page: MerchantPage) -> dict[str, Any]:
    return {
        "merchants": [serialize_merchant(merchant) for merchant in page.entries],
        "next_cursor": page.next_cursor,
        "publication_revision": page.release.publication_revision,
    }


def serialize_item_listings(item: PublicItem, listings: tuple[MerchantListing, ...]) -> dict[str, Any]:
    return {
        "item": item.item_id,
        "published_revision": item.published_revision,
        "publication_revision": item.publication_revision,
        "listings": [_serialize_listing(entry) for entry in listings],
    }


def _serialize_listing(entry: MerchantListing) -> dict[str, Any]:
    fields = public_listing_fields(entry.listing.fields)
    document: dict[str, Any] = {
        "listing": entry.listing.listing_id,
        "source_id": fields["source_id"],
        "url": fields["url"],
        "title": fields["title"],
    }
    if entry.merchant is not None:
        document["merchant"] = {"merchant": entry.merchant.merchant_id, "name": entry.merchant.name}
    # The latest released observation: as the collector reported it (observed_at keeps its offset).
    document["inventory"] = {key: fields[key] for key in _INVENTORY_FIELDS}
    document["publication_revision"] = entry.listing.publication_revision
    return document

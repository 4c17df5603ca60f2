"""Public merchant queries (if_product_query ``GET /v1/merchants``, ``GET /v1/merchants/{id}``,
``GET /v1/items/{id}/listings``) and their serializers.

Like ``queries``, everything read here is the released snapshot of the serving generation (``public_store``), one
statement per read; a merchant, a source binding or a shipping policy accepted but not released is not public.
Absent values (a merchant's URL, a listing's merchant, a policy's threshold) are left out, not null.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from prw_platform.db.database import Connection, Database
from prw_platform.product.errors import InvalidQuery
from prw_platform.product.public import store as public_store
from prw_platform.product.public.fields import (
    public_listing_fields,
    public_merchant_fields,
    public_policy_fields,
)
from prw_platform.product.public.items import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PROCESS_CURSORS, CursorCodec
from prw_platform.product.public.rows import (
    MerchantListing,
    MerchantRows,
    PublicItem,
    PublicMerchant,
    Release,
)

#: The cursor fingerprint of the merchant collection (it has no filters): an item cursor is not one of these.
MERCHANT_CURSORS: Final = "merchants"
_INVENTORY_FIELDS: Final = ("price", "currency", "availability", "observed_at")
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class MerchantPage:
    merchants: tuple[PublicMerchant, ...]
    next_cursor: str | None
    release: Release


@dataclass(frozen=True, slots=True)
class MerchantDetail:
    release: Release
    merchant: PublicMerchant | None


@dataclass(frozen=True, slots=True)
class ItemListings:
    release: Release
    item: PublicItem | None
    listings: tuple[MerchantListing, ...]


def list_public_merchants(
    db: Database,
    tenant_id: str,
    catalog_id: str,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    cursors: CursorCodec = PROCESS_CURSORS,
) -> MerchantPage:
    """Released merchants by id, ``limit`` per page; ``cursor`` is the previous page's ``next_cursor``."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidQuery(f"limit must be between 1 and {MAX_PAGE_SIZE}")
    after = cursors.decode_keyed(cursor, MERCHANT_CURSORS) if cursor else None

    def work(conn: Connection) -> MerchantRows | None:
        # One more than a page tells whether a next page exists.
        return public_store.find_merchants(conn, tenant_id, catalog_id, after=after, limit=limit + 1)

    rows = _read(db, tenant_id, work)
    if rows is None:
        return MerchantPage((), None, Release(0, None))
    merchants = tuple(rows.merchants[:limit])
    more = len(rows.merchants) > limit
    next_cursor = cursors.encode_keyed(merchants[-1].merchant_id, MERCHANT_CURSORS) if more else None
    return MerchantPage(merchants, next_cursor, rows.release)


def get_public_merchant(db: Database, tenant_id: str, catalog_id: str, merchant_id: str) -> MerchantDetail:
    rows = _read(
        db,
        tenant_id,
        lambda conn: public_store.find_merchants(
            conn, tenant_id, catalog_id, limit=1, merchant_id=merchant_id
        ),
    )
    if rows is None:
        return MerchantDetail(Release(0, None), None)
    return MerchantDetail(rows.release, rows.merchants[0] if rows.merchants else None)


def get_item_listings(db: Database, tenant_id: str, catalog_id: str, item_id: str) -> ItemListings:
    """A released item's public listings, each with its merchant and latest released inventory."""
    row = _read(
        db, tenant_id, lambda conn: public_store.find_item_listings(conn, tenant_id, catalog_id, item_id)
    )
    if row is None:
        return ItemListings(Release(0, None), None, ())
    return ItemListings(row.release, row.item, row.listings)


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
        "merchants": [serialize_merchant(merchant) for merchant in page.merchants],
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


def _read(db: Database, tenant_id: str, work: Callable[[Connection], _T]) -> _T:
    return db.run(work, tenant_id=tenant_id, read_only=True, pipeline=True)

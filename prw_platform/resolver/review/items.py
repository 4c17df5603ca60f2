"""Items as a reviewer reads them before merging or splitting (``decisions.item_merges``): an item with the
listings mapped to it now, and the catalog's likely duplicate pairs (``decisions.duplicates``). Reads only."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from prw_platform.db.database import Connection
from prw_platform.resolver.decisions import facts
from prw_platform.resolver.decisions.errors import ItemNotFound


@dataclass(frozen=True, slots=True)
class ItemListing:
    """A listing mapped to the item now: what a reviewer recognises it by."""

    listing_id: str
    source_id: str
    title: str | None
    url: str | None
    price: Decimal | None
    currency: str | None
    #: The mapping's revision and the decision that made it.
    mapping_revision: int
    decision_id: str


@dataclass(frozen=True, slots=True)
class ItemView:
    item_id: str
    catalog_id: str
    revision: int
    status: str
    profile: str
    title: str | None
    brand: str | None
    gtin: str | None
    mpn: str | None
    #: The item a reviewer merged this one into (a retired item only).
    merged_into: str | None
    listings: tuple[ItemListing, ...]


def item_view(conn: Connection, tenant_id: str, item_id: str) -> ItemView:
    """The item of ``tenant_id`` with its current listings; ``ItemNotFound`` (404 NOT_FOUND) otherwise."""
    item = facts.get_item(conn, tenant_id, item_id)
    if item is None:
        raise ItemNotFound(f"no item {item_id} in tenant {tenant_id}")
    listings = tuple(
        ItemListing(
            listing.listing_id,
            listing.source_id,
            listing.title,
            listing.url,
            listing.price,
            listing.currency,
            mapping.revision,
            mapping.decision_id,
        )
        for listing, mapping in facts.listings_of_item(conn, tenant_id, item_id)
    )
    return ItemView(
        item.item_id,
        item.catalog_id,
        item.revision,
        item.status,
        item.profile,
        item.title,
        item.brand,
        item.identifiers.get("gtin"),
        item.identifiers.get("mpn"),
        item.merged_into,
        listings,
    )

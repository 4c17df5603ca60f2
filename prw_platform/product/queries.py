"""Public product queries and THE public serializer (if_product_query).

Reads only the released snapshot of the serving generation (through ``public_store``, the owner of
``public_item``, ``public_listing`` and ``release_pointer``), never the internal projection: "Internal acceptance or projection application does not publish a
record [...] No public serializer reads live internal mappings." Item identity, ``published_revision`` and
``publication_revision`` come from the same ``public_item`` row in the collection and the detail, so they agree.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, replace
from typing import Any, Final

from prw_platform.db.database import REPEATABLE_READ, Connection, Database
from prw_platform.inputs import unstorable_character
from prw_platform.product import public_store
from prw_platform.product.errors import InvalidQuery
from prw_platform.product.public_fields import (
    PUBLIC_ITEM_FIELDS,
    PUBLIC_LISTING_FIELDS,
    public_item_fields,
    public_listing_fields,
)
from prw_platform.product.public_store import ItemFilters, PublicItem, PublicListing
from prw_platform.product.scopes import find_scope

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "NO_FILTERS",
    "ItemFilters",
    "ItemPage",
    "PublicItem",
    "PublicListing",
    "get_public_item",
    "list_public_items",
    "serialize_item",
    "serialize_page",
]

DEFAULT_PAGE_SIZE: Final = 20
MAX_PAGE_SIZE: Final = 100
#: Every released item (a frozen value, safe as a default).
NO_FILTERS: Final = ItemFilters()


@dataclass(frozen=True, slots=True)
class ItemPage:
    items: tuple[PublicItem, ...]
    next_cursor: str | None
    #: The catalog's current release (None before the first release is applied).
    publication_revision: int | None


def list_public_items(
    db: Database,
    tenant_id: str,
    catalog_id: str,
    filters: ItemFilters = NO_FILTERS,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
) -> ItemPage:
    """Released items ordered by item id, ``limit`` per page; ``cursor`` is the previous page's ``next_cursor``."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidQuery(f"limit must be between 1 and {MAX_PAGE_SIZE}")
    after = _decode_cursor(cursor) if cursor else None

    def work(conn: Connection) -> ItemPage:
        scope = find_scope(conn, tenant_id, catalog_id)
        if scope is None:  # not projected here: nothing was ever released
            return ItemPage((), None, None)
        # One more than a page tells whether a next page exists.
        found = public_store.find_items(conn, scope, filters, after=after, limit=limit + 1)
        items = tuple(found[:limit])
        next_cursor = _encode_cursor(items[-1].item_id) if len(found) > limit else None
        return ItemPage(items, next_cursor, public_store.current_publication_revision(conn, scope))

    return db.run(work, tenant_id=tenant_id, isolation=REPEATABLE_READ, read_only=True)


def get_public_item(db: Database, tenant_id: str, catalog_id: str, item_id: str) -> PublicItem | None:
    """A released item with the listings it publicly owns (INV-01), or None when it is not public."""

    def work(conn: Connection) -> PublicItem | None:
        scope = find_scope(conn, tenant_id, catalog_id)
        if scope is None:
            return None
        item = public_store.find_item(conn, scope, item_id)
        if item is None:
            return None
        return replace(item, listings=tuple(public_store.item_listings(conn, scope, item_id)))

    return db.run(work, tenant_id=tenant_id, isolation=REPEATABLE_READ, read_only=True)


def serialize_item(item: PublicItem) -> dict[str, Any]:
    """THE public item serializer: collection entries and the detail both go through it.

    Whitelists again on the way out (public_fields), so capture, decision, review and evidence references cannot
    appear even if a snapshot carried them."""
    fields = public_item_fields(item.fields)
    document: dict[str, Any] = {
        "item": item.item_id,
        "published_revision": item.published_revision,
        "publication_revision": item.publication_revision,
    }
    document.update({key: fields[key] for key in PUBLIC_ITEM_FIELDS if key != "item"})
    if item.listings is not None:
        document["listings"] = [_serialize_listing(listing) for listing in item.listings]
    return document


def serialize_page(page: ItemPage) -> dict[str, Any]:
    return {
        "items": [serialize_item(item) for item in page.items],
        "next_cursor": page.next_cursor,
        "publication_revision": page.publication_revision,
    }


def _serialize_listing(listing: PublicListing) -> dict[str, Any]:
    fields = public_listing_fields(listing.fields)
    document: dict[str, Any] = {"listing": listing.listing_id, "item": listing.item_id}
    document.update({key: fields[key] for key in PUBLIC_LISTING_FIELDS if key != "listing"})
    document["publication_revision"] = listing.publication_revision
    return document


def _encode_cursor(item_id: str) -> str:
    return base64.urlsafe_b64encode(item_id.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        decoded = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidQuery("cursor is not one this API issued") from exc
    if not decoded or unstorable_character(decoded) is not None:
        # A NUL decoded from a forged cursor would reach PostgreSQL text; no cursor of ours holds one.
        raise InvalidQuery("cursor is not one this API issued")
    return decoded

"""Public product queries and THE public serializer (if_product_query).

Reads only the released snapshot (``public_item``, ``public_listing``, ``release_pointer``) of the serving
generation, never the internal projection: "Internal acceptance or projection application does not publish a
record [...] No public serializer reads live internal mappings." Item identity, ``published_revision`` and
``publication_revision`` come from the same ``public_item`` row in the collection and the detail, so they agree.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Final

from prw_platform.db.database import REPEATABLE_READ, Connection, Database
from prw_platform.product.errors import InvalidQuery
from prw_platform.product.public_fields import (
    PUBLIC_ITEM_FIELDS,
    PUBLIC_LISTING_FIELDS,
    public_item_fields,
    public_listing_fields,
)

DEFAULT_PAGE_SIZE: Final = 20
MAX_PAGE_SIZE: Final = 100


@dataclass(frozen=True, slots=True)
class ItemFilters:
    """Simple filters on released items; all given filters must match."""

    brand: str | None = None  # case-insensitive equality
    gtin: str | None = None
    mpn: str | None = None
    profile: str | None = None
    #: Case-insensitive substring of the title.
    text: str | None = None
    #: (attribute key, value) pairs; a value matches the attribute's value, or its value and unit ("1 TB").
    attributes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class PublicListing:
    listing_id: str
    item_id: str
    publication_revision: int
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PublicItem:
    item_id: str
    published_revision: int
    publication_revision: int
    fields: dict[str, Any]
    #: Only the detail query loads listings; None in a collection.
    listings: tuple[PublicListing, ...] | None = None


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
    filters: ItemFilters = ItemFilters(),  # frozen value, safe as a default
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
) -> ItemPage:
    """Released items ordered by item id, ``limit`` per page; ``cursor`` is the previous page's ``next_cursor``."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidQuery(f"limit must be between 1 and {MAX_PAGE_SIZE}")
    after = _decode_cursor(cursor) if cursor else None
    params = {
        "tenant": tenant_id,
        "catalog": catalog_id,
        "brand": filters.brand,
        "gtin": filters.gtin,
        "mpn": filters.mpn,
        "profile": filters.profile,
        "text": _like_pattern(filters.text) if filters.text else None,
        "attr_names": [name for name, _ in filters.attributes],
        "attr_values": [value for _, value in filters.attributes],
        "after": after,
        "fetch": limit + 1,
    }

    def work(conn: Connection) -> ItemPage:
        rows = conn.execute(_LIST_ITEMS, params).fetchall()
        items = tuple(_item(row) for row in rows[:limit])
        next_cursor = _encode_cursor(items[-1].item_id) if len(rows) > limit else None
        return ItemPage(items, next_cursor, _publication_revision(conn, tenant_id, catalog_id))

    return db.run(work, tenant_id=tenant_id, isolation=REPEATABLE_READ, read_only=True)


def get_public_item(db: Database, tenant_id: str, catalog_id: str, item_id: str) -> PublicItem | None:
    """A released item with the listings it publicly owns (INV-01), or None when it is not public."""

    def work(conn: Connection) -> PublicItem | None:
        row = conn.execute(
            _GET_ITEM, {"tenant": tenant_id, "catalog": catalog_id, "item": item_id}
        ).fetchone()
        if row is None:
            return None
        listings = conn.execute(
            _ITEM_LISTINGS, {"tenant": tenant_id, "catalog": catalog_id, "item": item_id}
        ).fetchall()
        item = _item(row)
        return PublicItem(
            item.item_id,
            item.published_revision,
            item.publication_revision,
            item.fields,
            tuple(_listing(listing) for listing in listings),
        )

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


_SERVING = """JOIN product.projected_scope s
                ON s.tenant_id = p.tenant_id AND s.catalog_id = p.catalog_id
               AND s.serving_generation = p.generation"""

_ITEM_COLUMNS = "p.item_id, p.published_revision, p.publication_revision, p.fields"

_LIST_ITEMS = f"""
SELECT {_ITEM_COLUMNS}
  FROM product.public_item p {_SERVING}
 WHERE p.tenant_id = %(tenant)s AND p.catalog_id = %(catalog)s
   AND (%(brand)s::text IS NULL OR lower(p.fields->>'brand') = lower(%(brand)s::text))
   AND (%(gtin)s::text IS NULL OR p.fields->'identifiers'->>'gtin' = %(gtin)s::text)
   AND (%(mpn)s::text IS NULL OR p.fields->'identifiers'->>'mpn' = %(mpn)s::text)
   AND (%(profile)s::text IS NULL OR p.fields->>'profile' = %(profile)s::text)
   AND (%(text)s::text IS NULL OR p.fields->>'title' ILIKE %(text)s::text)
   AND NOT EXISTS (
       SELECT 1 FROM unnest(%(attr_names)s::text[], %(attr_values)s::text[]) AS f (name, value)
        WHERE NOT coalesce(
              p.fields->'attributes'->f.name->>'value' = f.value
              OR concat_ws(' ', p.fields->'attributes'->f.name->>'value',
                                p.fields->'attributes'->f.name->>'unit') = f.value,
              false))
   AND (%(after)s::text IS NULL OR p.item_id > %(after)s::text)
 ORDER BY p.item_id
 LIMIT %(fetch)s
"""  # noqa: S608  # composed from constants only; every value is a bound parameter

_GET_ITEM = f"""
SELECT {_ITEM_COLUMNS}
  FROM product.public_item p {_SERVING}
 WHERE p.tenant_id = %(tenant)s AND p.catalog_id = %(catalog)s AND p.item_id = %(item)s
"""  # noqa: S608  # composed from constants only

_ITEM_LISTINGS = f"""
SELECT p.listing_id, p.item_id, p.publication_revision, p.fields
  FROM product.public_listing p {_SERVING}
 WHERE p.tenant_id = %(tenant)s AND p.catalog_id = %(catalog)s AND p.item_id = %(item)s
 ORDER BY p.listing_id
"""  # noqa: S608  # composed from constants only


def _publication_revision(conn: Connection, tenant_id: str, catalog_id: str) -> int | None:
    row = conn.execute(
        """SELECT r.publication_revision FROM product.release_pointer r
             JOIN product.projected_scope s
               ON s.tenant_id = r.tenant_id AND s.catalog_id = r.catalog_id
              AND s.serving_generation = r.generation
            WHERE r.tenant_id = %s AND r.catalog_id = %s""",
        (tenant_id, catalog_id),
    ).fetchone()
    return int(str(row["publication_revision"])) if row else None


def _item(row: dict[str, Any]) -> PublicItem:
    return PublicItem(
        item_id=str(row["item_id"]),
        published_revision=int(row["published_revision"]),
        publication_revision=int(row["publication_revision"]),
        fields=dict(row["fields"]),
    )


def _listing(row: dict[str, Any]) -> PublicListing:
    return PublicListing(
        listing_id=str(row["listing_id"]),
        item_id=str(row["item_id"]),
        publication_revision=int(row["publication_revision"]),
        fields=dict(row["fields"]),
    )


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _encode_cursor(item_id: str) -> str:
    return base64.urlsafe_b64encode(item_id.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        decoded = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidQuery("cursor is not one this API issued") from exc
    if not decoded:
        raise InvalidQuery("cursor is not one this API issued")
    return decoded

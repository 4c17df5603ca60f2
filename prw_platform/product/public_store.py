"""The released public snapshot: ``public_item``, ``public_listing`` and ``release_pointer`` (this module owns them).

Two callers, one set of tables: ``releases`` writes a release's snapshot when the consumer applies it, and
``queries`` reads it for the public API. Every read and write is of one generation, the scope's serving one; the
caller reads the scope (``scopes.find_scope``) in the same transaction. Nothing here reads the internal projection
(if_product_query: "No public serializer reads live internal mappings").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from prw_platform.db.database import Connection
from prw_platform.product.scopes import ProjectedScope


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


# --- writes: applying a release ------------------------------------------------------------------------------


def publish_item(conn: Connection, scope: ProjectedScope, item: PublicItem) -> None:
    conn.execute(
        """INSERT INTO product.public_item (tenant_id, catalog_id, generation, item_id, published_revision,
               publication_revision, fields)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, item_id) DO UPDATE
              SET published_revision = excluded.published_revision,
                  publication_revision = excluded.publication_revision,
                  fields = excluded.fields, released_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            item.item_id,
            item.published_revision,
            item.publication_revision,
            Jsonb(item.fields),
        ),
    )


def publish_listing(
    conn: Connection,
    scope: ProjectedScope,
    listing: PublicListing,
    *,
    mapping_revision: int,
    listing_revision: int,
) -> None:
    # INV-01: keyed by listing, so a remap moves the one public owner instead of adding a second.
    conn.execute(
        """INSERT INTO product.public_listing (tenant_id, catalog_id, generation, listing_id, item_id,
               mapping_revision, listing_revision, publication_revision, fields)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, listing_id) DO UPDATE
              SET item_id = excluded.item_id, mapping_revision = excluded.mapping_revision,
                  listing_revision = excluded.listing_revision,
                  publication_revision = excluded.publication_revision,
                  fields = excluded.fields, released_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            listing.listing_id,
            listing.item_id,
            mapping_revision,
            listing_revision,
            listing.publication_revision,
            Jsonb(listing.fields),
        ),
    )


def point_release(
    conn: Connection,
    scope: ProjectedScope,
    *,
    release_id: str,
    publication_revision: int,
    event_id: str,
    position: int,
) -> None:
    """Switch the serving generation's release pointer to the release just applied."""
    conn.execute(
        """INSERT INTO product.release_pointer (tenant_id, catalog_id, generation, release_id,
               publication_revision, event_id, position)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation) DO UPDATE
              SET release_id = excluded.release_id, publication_revision = excluded.publication_revision,
                  event_id = excluded.event_id, position = excluded.position, applied_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            release_id,
            publication_revision,
            event_id,
            position,
        ),
    )


# --- reads: the public API ------------------------------------------------------------------------------------

# Item and listing queries select exactly the fields of PublicItem (but ``listings``) and PublicListing.

_FIND_ITEMS = """
SELECT p.item_id, p.published_revision, p.publication_revision, p.fields
  FROM product.public_item p
 WHERE p.tenant_id = %(tenant)s AND p.catalog_id = %(catalog)s AND p.generation = %(generation)s
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
 LIMIT %(limit)s
"""


def find_items(
    conn: Connection, scope: ProjectedScope, filters: ItemFilters, *, after: str | None, limit: int
) -> list[PublicItem]:
    """Released items matching ``filters``, ordered by item id, the first ``limit`` after item id ``after``."""
    params = {
        "tenant": scope.tenant_id,
        "catalog": scope.catalog_id,
        "generation": scope.serving_generation,
        "brand": filters.brand,
        "gtin": filters.gtin,
        "mpn": filters.mpn,
        "profile": filters.profile,
        "text": _like_pattern(filters.text) if filters.text else None,
        "attr_names": [name for name, _ in filters.attributes],
        "attr_values": [value for _, value in filters.attributes],
        "after": after,
        "limit": limit,
    }
    return conn.cursor(row_factory=class_row(PublicItem)).execute(_FIND_ITEMS, params).fetchall()


def find_item(conn: Connection, scope: ProjectedScope, item_id: str) -> PublicItem | None:
    return (
        conn.cursor(row_factory=class_row(PublicItem))
        .execute(
            """SELECT item_id, published_revision, publication_revision, fields FROM product.public_item
                WHERE tenant_id = %s AND catalog_id = %s AND generation = %s AND item_id = %s""",
            (scope.tenant_id, scope.catalog_id, scope.serving_generation, item_id),
        )
        .fetchone()
    )


def item_listings(conn: Connection, scope: ProjectedScope, item_id: str) -> list[PublicListing]:
    """The listings ``item_id`` publicly owns (INV-01), by listing id."""
    return (
        conn.cursor(row_factory=class_row(PublicListing))
        .execute(
            """SELECT listing_id, item_id, publication_revision, fields FROM product.public_listing
                WHERE tenant_id = %s AND catalog_id = %s AND generation = %s AND item_id = %s
                ORDER BY listing_id""",
            (scope.tenant_id, scope.catalog_id, scope.serving_generation, item_id),
        )
        .fetchall()
    )


def current_publication_revision(conn: Connection, scope: ProjectedScope) -> int | None:
    """The publication revision of the release the serving generation points at; None before the first one."""
    revision: int | None = (
        conn.cursor(row_factory=scalar_row)
        .execute(
            """SELECT publication_revision FROM product.release_pointer
                WHERE tenant_id = %s AND catalog_id = %s AND generation = %s""",
            (scope.tenant_id, scope.catalog_id, scope.serving_generation),
        )
        .fetchone()
    )
    return revision


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"

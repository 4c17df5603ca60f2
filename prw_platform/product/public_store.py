"""The released public snapshot: ``public_item``, ``public_listing`` and ``release_pointer`` (this module owns them).

Two callers, one set of tables: ``releases`` writes a release's snapshot when the consumer applies it, and
``queries`` reads it for the public API. Every read and write is of one generation, the scope's serving one; the
caller reads the scope (``scopes.find_scope``) in the same transaction. Nothing here reads the internal projection
(if_product_query: "No public serializer reads live internal mappings").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from prw_platform.db.database import Connection
from prw_platform.product.scopes import SERVING_GENERATION_SUBQUERY, ProjectedScope


@dataclass(frozen=True, slots=True)
class ItemFilters:
    """Filters on released items; all given filters must match (if_product_query)."""

    brand: str | None = None  # case-insensitive equality
    gtin: str | None = None
    mpn: str | None = None
    profile: str | None = None
    #: Text search: every word occurs, case-insensitively, in the title, brand, MPN or GTIN.
    text: str | None = None
    #: (attribute key, value) pairs; a value matches the attribute's value, its value and unit ("1 TB"), or the
    #: canonical value and unit a profile reads it as (1 TB is stored as 1000 GB: ``queries`` resolves it).
    attributes: tuple[tuple[str, str], ...] = ()
    #: A product class a profile declares (``cls_storage_ssd``).
    item_class: str | None = None


@dataclass(frozen=True, slots=True)
class AttributeCondition:
    """One ``attr[key]=text`` filter, with the canonical value and unit a profile read the text as (if any)."""

    key: str
    text: str
    canonical: str | None = None
    unit: str | None = None


@dataclass(frozen=True, slots=True)
class ClassCondition:
    """Items of a profile (by name, any version) whose attributes satisfy one of ``any_of``."""

    profile: str
    any_of: tuple[dict[str, list[str]], ...]


@dataclass(frozen=True, slots=True)
class ItemSearch:
    """A list query resolved against the vocabulary: what ``find_page`` runs."""

    filters: ItemFilters
    attributes: tuple[AttributeCondition, ...] = ()
    item_class: ClassCondition | None = None
    facet_keys: tuple[str, ...] = ()


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
#
# Every public read is one statement (a consistent snapshot without a multi-statement transaction, and one round
# trip): the scope's serving generation comes from scopes.SERVING_GENERATION_SUBQUERY, the release pointer, the
# items and listings from the tables this module owns.


@dataclass(frozen=True, slots=True)
class Release:
    """The release the serving generation points at; ``publication_revision`` None before the first one."""

    generation: int
    publication_revision: int | None


@dataclass(frozen=True, slots=True)
class FacetCount:
    key: str
    value: Any
    unit: str | None
    count: int


@dataclass(frozen=True, slots=True)
class ItemRows:
    release: Release
    items: list[PublicItem]
    facets: list[FacetCount]


@dataclass(frozen=True, slots=True)
class ItemDetailRow:
    release: Release
    item: PublicItem | None


@dataclass(frozen=True, slots=True)
class SourceRow:
    release: Release
    source_id: str
    listings: int
    items: int
    last_observed_at: str | None


_SCOPE = sql.SQL(
    """scope AS (SELECT {generation} AS generation),
       pointer AS (SELECT s.generation, r.publication_revision FROM scope s
                     LEFT JOIN product.release_pointer r
                       ON r.tenant_id = %(tenant)s AND r.catalog_id = %(catalog)s AND r.generation = s.generation
                    WHERE s.generation IS NOT NULL)"""
).format(generation=sql.SQL(SERVING_GENERATION_SUBQUERY))

_LISTINGS_OF = """coalesce((
    SELECT jsonb_agg(jsonb_build_object('listing_id', l.listing_id, 'item_id', l.item_id,
                                        'publication_revision', l.publication_revision, 'fields', l.fields)
                     ORDER BY l.listing_id)
      FROM product.public_listing l
     WHERE l.tenant_id = %(tenant)s AND l.catalog_id = %(catalog)s AND l.generation = i.generation
       AND l.item_id = i.item_id), '[]'::jsonb)"""

_ITEM_DETAIL = sql.SQL(
    """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision, i.item_id, i.published_revision,
       i.publication_revision, i.fields, CASE WHEN i.item_id IS NULL THEN NULL ELSE {listings} END AS listings
  FROM pointer p
  LEFT JOIN product.public_item i
    ON i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s AND i.generation = p.generation
   AND i.item_id = %(item)s"""
).format(scope=_SCOPE, listings=sql.SQL(_LISTINGS_OF))

# A numeric comparison only between two numbers written as decimals (a CASE, so no cast is tried on other text).
_NUMERIC = r"'^-?[0-9]+(\.[0-9]+)?$'"
_MATCHED = sql.SQL(
    """matched AS NOT MATERIALIZED (
    SELECT i.item_id, i.published_revision, i.publication_revision, i.fields
      FROM pointer p
      JOIN product.public_item i
        ON i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s AND i.generation = p.generation
     WHERE (%(brand)s::text IS NULL OR lower(i.fields->>'brand') = lower(%(brand)s::text))
       AND (%(gtin)s::text IS NULL OR i.fields->'identifiers'->>'gtin' = %(gtin)s::text)
       AND (%(mpn)s::text IS NULL OR i.fields->'identifiers'->>'mpn' = %(mpn)s::text)
       AND (%(profile)s::text IS NULL OR i.fields->>'profile' = %(profile)s::text)
       AND NOT EXISTS (
           SELECT 1 FROM unnest(%(terms)s::text[]) AS t (pattern)
            WHERE NOT concat_ws(' ', i.fields->>'title', i.fields->>'brand', i.fields->'identifiers'->>'mpn',
                                i.fields->'identifiers'->>'gtin') ILIKE t.pattern)
       AND NOT EXISTS (
           SELECT 1 FROM unnest(%(attr_keys)s::text[], %(attr_texts)s::text[], %(attr_canonical)s::text[],
                                %(attr_units)s::text[]) AS f (key, text, canonical, unit)
                CROSS JOIN LATERAL (SELECT i.fields->'attributes'->f.key->>'value' AS value,
                                           i.fields->'attributes'->f.key->>'unit' AS unit) AS a
            WHERE NOT coalesce(
                  a.value = f.text
                  OR concat_ws(' ', a.value, a.unit) = f.text
                  OR (f.canonical IS NOT NULL AND coalesce(a.unit, '') = coalesce(f.unit, '')
                      AND (a.value = f.canonical
                           OR CASE WHEN a.value ~ {numeric} AND f.canonical ~ {numeric}
                                   THEN a.value::numeric = f.canonical::numeric ELSE false END)),
                  false))
       AND (%(class_profile)s::text IS NULL OR (
            split_part(i.fields->>'profile', '@', 1) = %(class_profile)s::text
            AND EXISTS (
                SELECT 1 FROM jsonb_array_elements(%(class_rules)s::jsonb) AS r (rule)
                 WHERE NOT EXISTS (
                       SELECT 1 FROM jsonb_each(r.rule) AS c (key, allowed)
                        WHERE NOT coalesce(c.allowed ? (i.fields->'attributes'->c.key->>'value'), false)))))
)"""
).format(numeric=sql.SQL(_NUMERIC))

_ITEM_PAGE = sql.SQL(
    """WITH {scope}, {matched},
page AS (SELECT * FROM matched WHERE %(after)s::text IS NULL OR item_id > %(after)s::text
          ORDER BY item_id LIMIT %(limit)s),
facet AS (SELECT k.key, m.fields->'attributes'->k.key->'value' AS value,
                 m.fields->'attributes'->k.key->>'unit' AS unit, count(*) AS count
            FROM matched m CROSS JOIN unnest(%(facet_keys)s::text[]) AS k (key)
           WHERE cardinality(%(facet_keys)s::text[]) > 0
             AND jsonb_typeof(m.fields->'attributes'->k.key->'value') IN ('string', 'number', 'boolean')
           GROUP BY 1, 2, 3)
SELECT p.generation, p.publication_revision AS current_revision,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('item_id', item_id,
                                                     'published_revision', published_revision,
                                                     'publication_revision', publication_revision,
                                                     'fields', fields) ORDER BY item_id), '[]'::jsonb)
          FROM page) AS items,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('key', key, 'value', value, 'unit', unit, 'count', count)
                                  ORDER BY key, count DESC, value), '[]'::jsonb)
          FROM facet) AS facets
  FROM pointer p"""
).format(scope=_SCOPE, matched=_MATCHED)

_SOURCE = sql.SQL(
    """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision, count(l.listing_id) AS listings,
       count(DISTINCT l.item_id) AS items, max(l.fields->>'observed_at') AS last_observed_at
  FROM pointer p
  LEFT JOIN product.public_listing l
    ON l.tenant_id = %(tenant)s AND l.catalog_id = %(catalog)s AND l.generation = p.generation
   AND l.fields->>'source_id' = %(source)s
   -- INV-01: a listing is public while the item that owns it is.
   AND EXISTS (SELECT 1 FROM product.public_item i
                WHERE i.tenant_id = l.tenant_id AND i.catalog_id = l.catalog_id
                  AND i.generation = l.generation AND i.item_id = l.item_id)
 GROUP BY p.generation, p.publication_revision"""
).format(scope=_SCOPE)

_RELEASE = sql.SQL(
    "WITH {scope} SELECT generation, publication_revision AS current_revision FROM pointer"
).format(scope=_SCOPE)


def current_release(conn: Connection, tenant_id: str, catalog_id: str) -> Release | None:
    """The serving generation's release; None when the catalog is not projected here."""
    row = conn.execute(_RELEASE, {"tenant": tenant_id, "catalog": catalog_id}).fetchone()
    return None if row is None else _release(row)


def find_item_detail(conn: Connection, tenant_id: str, catalog_id: str, item_id: str) -> ItemDetailRow | None:
    """A released item with the listings it publicly owns (INV-01), and the current release; None when the
    catalog is not projected here."""
    params = {"tenant": tenant_id, "catalog": catalog_id, "item": item_id}
    row = conn.execute(_ITEM_DETAIL, params).fetchone()
    if row is None:
        return None
    if row["item_id"] is None:
        return ItemDetailRow(_release(row), None)
    listings = tuple(_listing(entry) for entry in _list(row["listings"]))
    item = PublicItem(
        str(row["item_id"]),
        _int(row["published_revision"]),
        _int(row["publication_revision"]),
        _dict(row["fields"]),
        listings,
    )
    return ItemDetailRow(_release(row), item)


def find_page(
    conn: Connection, tenant_id: str, catalog_id: str, search: ItemSearch, *, after: str | None, limit: int
) -> ItemRows | None:
    """Released items matching ``search``, by item id, the first ``limit`` after item id ``after``, with facet
    counts over every match (not only the page); None when the catalog is not projected here."""
    filters = search.filters
    item_class = search.item_class
    params: dict[str, Any] = {
        "tenant": tenant_id,
        "catalog": catalog_id,
        "brand": filters.brand,
        "gtin": filters.gtin,
        "mpn": filters.mpn,
        "profile": filters.profile,
        "terms": [_like_pattern(word) for word in (filters.text or "").split()],
        "attr_keys": [a.key for a in search.attributes],
        "attr_texts": [a.text for a in search.attributes],
        "attr_canonical": [a.canonical for a in search.attributes],
        "attr_units": [a.unit for a in search.attributes],
        "class_profile": item_class.profile if item_class else None,
        "class_rules": Jsonb(list(item_class.any_of) if item_class else []),
        "after": after,
        "limit": limit,
        "facet_keys": list(search.facet_keys),
    }
    row = conn.execute(_ITEM_PAGE, params).fetchone()
    if row is None:
        return None
    items = [
        PublicItem(
            str(e["item_id"]), int(e["published_revision"]), int(e["publication_revision"]), e["fields"]
        )
        for e in _list(row["items"])
    ]
    facets = [FacetCount(f["key"], f["value"], f["unit"], int(f["count"])) for f in _list(row["facets"])]
    return ItemRows(_release(row), items, facets)


def find_source(conn: Connection, tenant_id: str, catalog_id: str, source_id: str) -> SourceRow | None:
    """What the current release publishes of a source: its public listings and the items that own them."""
    row = conn.execute(_SOURCE, {"tenant": tenant_id, "catalog": catalog_id, "source": source_id}).fetchone()
    if row is None:
        return None
    observed = row["last_observed_at"]
    return SourceRow(
        _release(row),
        source_id,
        _int(row["listings"]),
        _int(row["items"]),
        None if observed is None else str(observed),
    )


def _release(row: dict[str, Any]) -> Release:
    revision = row["current_revision"]
    return Release(_int(row["generation"]), None if revision is None else _int(revision))


def _listing(entry: dict[str, Any]) -> PublicListing:
    return PublicListing(
        str(entry["listing_id"]),
        str(entry["item_id"]),
        int(entry["publication_revision"]),
        _dict(entry["fields"]),
    )


def _list(value: object) -> list[dict[str, Any]]:
    return value if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"

"""The released public snapshot: ``public_item``, ``public_listing`` and ``release_pointer`` (this module owns them).

Two callers, one set of tables: ``releases`` writes a release's snapshot when the consumer applies it, and
``queries`` reads it for the public API. Every read and write is of one generation, the scope's serving one; the
caller reads the scope (``scopes.find_scope``) in the same transaction. Nothing here reads the internal projection
(if_product_query: "No public serializer reads live internal mappings").
"""

from __future__ import annotations

import re
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

# The list query is composed of the filters given, each a plain expression on the row, so PostgreSQL uses the
# brand / GTIN indexes and evaluates nothing for an absent filter; the shapes are few (prepared per connection).
_NUMBER = "'^-?[0-9]+(\\.[0-9]+)?$'"
_ATTRIBUTE = "i.fields->'attributes'->{key}"
_SIMPLE_FILTERS = {
    "brand": "lower(i.fields->>'brand') = lower(%(brand)s::text)",
    "gtin": "i.fields->'identifiers'->>'gtin' = %(gtin)s::text",
    "mpn": "i.fields->'identifiers'->>'mpn' = %(mpn)s::text",
    "profile": "i.fields->>'profile' = %(profile)s::text",
}
_TERM = """concat_ws(' ', i.fields->>'title', i.fields->>'brand', i.fields->'identifiers'->>'mpn',
                    i.fields->'identifiers'->>'gtin') ILIKE {pattern}"""
# An attribute matches the text as typed (its value, or value and unit), or the canonical value and unit a profile
# read the text as; two numbers compare as numbers ("1000" and "1000.0"), in a CASE so no other text is cast.
_AS_TYPED = "({a}->>'value' = {text} OR concat_ws(' ', {a}->>'value', {a}->>'unit') = {text})"
_CANONICAL = """coalesce({a}->>'unit', '') = {unit} AND ({a}->>'value' = {canonical}
                 OR CASE WHEN {a}->>'value' ~ {number} THEN ({a}->>'value')::numeric = {canonical}::numeric
                         ELSE false END)"""
_CLASS_KEY = "i.fields->'attributes'->{key}->>'value' = ANY({allowed}::text[])"

_MATCHED = """matched AS NOT MATERIALIZED (
    SELECT i.item_id, i.published_revision, i.publication_revision, i.fields
      FROM product.public_item i
     WHERE i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s AND i.generation = {generation}
       AND {conditions})"""

_PAGE = """page AS (SELECT * FROM matched WHERE %(after)s::text IS NULL OR item_id > %(after)s::text
          ORDER BY item_id LIMIT %(limit)s)"""

_FACET = """facet AS (SELECT k.key, m.fields->'attributes'->k.key->'value' AS value,
                 m.fields->'attributes'->k.key->>'unit' AS unit, count(*) AS count
            FROM matched m CROSS JOIN unnest(%(facet_keys)s::text[]) AS k (key)
           WHERE jsonb_typeof(m.fields->'attributes'->k.key->'value') IN ('string', 'number', 'boolean')
           GROUP BY 1, 2, 3)"""

_ITEM_PAGE = """WITH {scope}, {ctes}
SELECT p.generation, p.publication_revision AS current_revision,
       (SELECT coalesce(jsonb_agg(jsonb_build_object('item_id', item_id,
                                                     'published_revision', published_revision,
                                                     'publication_revision', publication_revision,
                                                     'fields', fields) ORDER BY item_id), '[]'::jsonb)
          FROM page) AS items,
       {facets} AS facets
  FROM pointer p"""

_FACETS = """(SELECT coalesce(jsonb_agg(jsonb_build_object('key', key, 'value', value, 'unit', unit, 'count', count)
                                  ORDER BY key, count DESC, value), '[]'::jsonb)
          FROM facet)"""


def _page_query(search: ItemSearch, params: dict[str, Any]) -> sql.Composed:
    """The list statement for ``search``; fills ``params`` with the values of its placeholders."""
    filters = search.filters
    conditions: list[sql.Composable] = []
    for name, condition in _SIMPLE_FILTERS.items():
        if getattr(filters, name) is not None:
            params[name] = getattr(filters, name)
            conditions.append(sql.SQL(condition))
    for n, word in enumerate((filters.text or "").split()):
        params[f"term{n}"] = _like_pattern(word)
        conditions.append(sql.SQL(_TERM).format(pattern=sql.Placeholder(f"term{n}")))
    for n, attribute in enumerate(search.attributes):
        params[f"attr{n}_key"], params[f"attr{n}_text"] = attribute.key, attribute.text
        a = sql.SQL(_ATTRIBUTE).format(key=sql.Placeholder(f"attr{n}_key"))
        match = sql.SQL(_AS_TYPED).format(a=a, text=sql.Placeholder(f"attr{n}_text"))
        if attribute.canonical is not None:
            params[f"attr{n}_canonical"], params[f"attr{n}_unit"] = attribute.canonical, attribute.unit or ""
            canonical = sql.SQL(_CANONICAL).format(
                a=a,
                canonical=sql.Placeholder(f"attr{n}_canonical"),
                unit=sql.Placeholder(f"attr{n}_unit"),
                number=sql.SQL(_NUMBER),
            )
            # A canonical value that is not a number is never cast (the CASE needs both sides numeric).
            if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", attribute.canonical):
                canonical = sql.SQL(
                    "coalesce({a}->>'unit', '') = {unit} AND {a}->>'value' = {canonical}"
                ).format(
                    a=a,
                    canonical=sql.Placeholder(f"attr{n}_canonical"),
                    unit=sql.Placeholder(f"attr{n}_unit"),
                )
            match = sql.SQL("({} OR ({}))").format(match, canonical)
        conditions.append(sql.SQL("coalesce({}, false)").format(match))
    if search.item_class is not None:
        params["class_profile"] = search.item_class.profile
        alternatives: list[sql.Composable] = []
        for a_n, alternative in enumerate(search.item_class.any_of):
            keys: list[sql.Composable] = [sql.SQL("true")]
            for k_n, (key, allowed) in enumerate(sorted(alternative.items())):
                params[f"class{a_n}_{k_n}_key"], params[f"class{a_n}_{k_n}_allowed"] = key, list(allowed)
                keys.append(
                    sql.SQL(_CLASS_KEY).format(
                        key=sql.Placeholder(f"class{a_n}_{k_n}_key"),
                        allowed=sql.Placeholder(f"class{a_n}_{k_n}_allowed"),
                    )
                )
            alternatives.append(sql.SQL("({})").format(sql.SQL(" AND ").join(keys)))
        conditions.append(
            sql.SQL(
                "(split_part(i.fields->>'profile', '@', 1) = %(class_profile)s::text AND coalesce({}, false))"
            ).format(sql.SQL(" OR ").join(alternatives or [sql.SQL("false")]))
        )
    matched = sql.SQL(_MATCHED).format(
        generation=sql.SQL(SERVING_GENERATION_SUBQUERY),
        conditions=sql.SQL(" AND ").join(conditions or [sql.SQL("true")]),
    )
    ctes: list[sql.Composable] = [matched, sql.SQL(_PAGE)]
    facets: sql.Composable = sql.SQL("'[]'::jsonb")
    if search.facet_keys:
        params["facet_keys"] = list(search.facet_keys)
        ctes.append(sql.SQL(_FACET))
        facets = sql.SQL(_FACETS)
    return sql.SQL(_ITEM_PAGE).format(scope=_SCOPE, ctes=sql.SQL(", ").join(ctes), facets=facets)


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
    params: dict[str, Any] = {"tenant": tenant_id, "catalog": catalog_id, "after": after, "limit": limit}
    row = conn.execute(_page_query(search, params), params).fetchone()
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

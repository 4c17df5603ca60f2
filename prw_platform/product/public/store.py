"""The released public snapshot: ``public_item``, ``public_listing``, ``release_pointer``, the merchant tables and
the pictures' ``public_item_pictures`` and ``public_class`` (this module owns them).

Two callers, one set of tables: ``releases`` writes a release's snapshot when the consumer applies it, in the
scope's serving generation; ``PublicCatalog`` runs the reads composed here for the public API, each one statement
(``read.OneRead``). Nothing here reads the internal projection (if_product_query: "No public serializer reads live
internal mappings").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, LiteralString, TypeVar

from psycopg import sql
from psycopg.types.json import Jsonb

from prw_platform.db.database import Connection, Query
from prw_platform.product.public.filters import SearchShape, conditions_of, search_params
from prw_platform.product.public.read import OneRead
from prw_platform.product.public.rows import (
    NO_RELEASE,
    Basket,
    Detail,
    FacetCount,
    ItemListings,
    ItemPage,
    ItemSearch,
    Page,
    PublicClass,
    PublicItem,
    PublicListing,
    PublicMerchant,
    Release,
    SourceSummary,
    class_of,
    dict_of,
    int_of,
    list_of,
    listing_of,
    merchant_listing_of,
    merchant_of,
    pictures_of,
    release_of,
)
from prw_platform.product.scopes import SERVING_GENERATION_SUBQUERY, ProjectedScope

R = TypeVar("R")
T = TypeVar("T")

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


def withdraw_item(conn: Connection, scope: ProjectedScope, item_id: str) -> None:
    """A retired item leaves the public catalog with the listings it owned (INV-07): they have no public owner."""
    key = (*_scope_key(scope), item_id)
    conn.execute(
        """DELETE FROM product.public_listing
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s AND item_id = %s""",
        key,
    )
    conn.execute(
        """DELETE FROM product.public_item_pictures
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s AND item_id = %s""",
        key,
    )
    conn.execute(
        """DELETE FROM product.public_item
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s AND item_id = %s""",
        key,
    )


def redirect_item(
    conn: Connection, scope: ProjectedScope, item_id: str, target_item_id: str, publication: int
) -> None:
    """A merged item's public id leads to the item it was merged into (its public redirect); the merged item left
    the public catalog with ``withdraw_item``."""
    conn.execute(
        """INSERT INTO product.public_item_redirect (tenant_id, catalog_id, generation, item_id, target_item_id,
               publication_revision)
           VALUES (%s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, item_id) DO UPDATE
              SET target_item_id = excluded.target_item_id,
                  publication_revision = excluded.publication_revision, released_at = now()""",
        (*_scope_key(scope), item_id, target_item_id, publication),
    )


def publish_item_pictures(
    conn: Connection,
    scope: ProjectedScope,
    item_id: str,
    revision: int,
    publication: int,
    fields: dict[str, Any],
) -> None:
    """An item's released pictures (seed 004): the whole set replaces the one an earlier release published."""
    conn.execute(
        """INSERT INTO product.public_item_pictures (tenant_id, catalog_id, generation, item_id,
               published_revision, publication_revision, fields)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, item_id) DO UPDATE
              SET published_revision = excluded.published_revision,
                  publication_revision = excluded.publication_revision, fields = excluded.fields,
                  released_at = now()""",
        (*_scope_key(scope), item_id, revision, publication, Jsonb(fields)),
    )


def publish_class(
    conn: Connection,
    scope: ProjectedScope,
    class_id: str,
    revision: int,
    publication: int,
    fields: dict[str, Any],
) -> None:
    conn.execute(
        """INSERT INTO product.public_class (tenant_id, catalog_id, generation, class_id, published_revision,
               publication_revision, fields)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, class_id) DO UPDATE
              SET published_revision = excluded.published_revision,
                  publication_revision = excluded.publication_revision, fields = excluded.fields,
                  released_at = now()""",
        (*_scope_key(scope), class_id, revision, publication, Jsonb(fields)),
    )


def withdraw_class(conn: Connection, scope: ProjectedScope, class_id: str) -> None:
    """A deleted class leaves the public catalog at the release that names its deletion."""
    conn.execute(
        """DELETE FROM product.public_class
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s AND class_id = %s""",
        (*_scope_key(scope), class_id),
    )


def publish_merchant(conn: Connection, scope: ProjectedScope, merchant: PublicMerchant) -> None:
    conn.execute(
        """INSERT INTO product.public_merchant (tenant_id, catalog_id, generation, merchant_id, published_revision,
               publication_revision, fields)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, merchant_id) DO UPDATE
              SET published_revision = excluded.published_revision,
                  publication_revision = excluded.publication_revision, fields = excluded.fields,
                  released_at = now()""",
        (
            *_scope_key(scope),
            merchant.merchant_id,
            merchant.published_revision,
            merchant.publication_revision,
            Jsonb(merchant.fields),
        ),
    )


def publish_merchant_source(
    conn: Connection, scope: ProjectedScope, source_id: str, merchant_id: str, revision: int, publication: int
) -> None:
    """One merchant per source: a later binding moves the source."""
    conn.execute(
        """INSERT INTO product.public_merchant_source (tenant_id, catalog_id, generation, source_id, merchant_id,
               published_revision, publication_revision)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, source_id) DO UPDATE
              SET merchant_id = excluded.merchant_id, published_revision = excluded.published_revision,
                  publication_revision = excluded.publication_revision, released_at = now()""",
        (*_scope_key(scope), source_id, merchant_id, revision, publication),
    )


def publish_shipping_policy(
    conn: Connection,
    scope: ProjectedScope,
    merchant_id: str,
    revision: int,
    publication: int,
    fields: dict[str, Any],
) -> None:
    conn.execute(
        """INSERT INTO product.public_shipping_policy (tenant_id, catalog_id, generation, merchant_id,
               published_revision, publication_revision, fields)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, merchant_id) DO UPDATE
              SET published_revision = excluded.published_revision,
                  publication_revision = excluded.publication_revision, fields = excluded.fields,
                  released_at = now()""",
        (*_scope_key(scope), merchant_id, revision, publication, Jsonb(fields)),
    )


def _scope_key(scope: ProjectedScope) -> tuple[str, str, int]:
    return scope.tenant_id, scope.catalog_id, scope.serving_generation


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


#: The tables keyed by generation, in the order ``rebuild.cleanup.drop_generation`` deletes a generation's rows (a
#: replaced one after a rebuild's cutover, or a failed rebuild's).
GENERATION_TABLES: Final = (
    "product.public_listing",
    "product.public_item",
    "product.release_pointer",
    "product.public_merchant_source",
    "product.public_shipping_policy",
    "product.public_merchant",
    "product.public_item_pictures",
    "product.public_class",
    "product.public_item_redirect",
)


# --- reads: the public API ------------------------------------------------------------------------------------
#
# Every public read is one statement (a consistent snapshot without a multi-statement transaction, and one round
# trip): the scope's serving generation comes from scopes.SERVING_GENERATION_SUBQUERY, the release pointer, the
# items and listings from the tables this module owns; no row means the catalog is not served here. A page's item
# documents and a detail's listings are aggregated as ``json``, not ``jsonb``: the aggregate is sent as text, and
# building it in binary only to print it again cost more per page (bench/README.md).

_SCOPE = sql.SQL(
    """scope AS MATERIALIZED (SELECT {generation} AS generation),
       pointer AS MATERIALIZED (SELECT s.generation, r.publication_revision FROM scope s
                     LEFT JOIN product.release_pointer r
                       ON r.tenant_id = %(tenant)s AND r.catalog_id = %(catalog)s AND r.generation = s.generation
                    WHERE s.generation IS NOT NULL)"""
).format(generation=sql.SQL(SERVING_GENERATION_SUBQUERY))

_LISTINGS_OF = """coalesce((
    SELECT json_agg(json_build_object('listing_id', l.listing_id, 'item_id', l.item_id,
                                        'publication_revision', l.publication_revision, 'fields', l.fields)
                     ORDER BY l.listing_id)
      FROM product.public_listing l
     WHERE l.tenant_id = %(tenant)s AND l.catalog_id = %(catalog)s AND l.generation = i.generation
       AND l.item_id = i.item_id), '[]'::json)"""

#: The released pictures of item ``i`` (null when no release published any).
_PICTURES_OF = """(SELECT pp.fields FROM product.public_item_pictures pp
     WHERE pp.tenant_id = %(tenant)s AND pp.catalog_id = %(catalog)s AND pp.generation = {generation}
       AND pp.item_id = i.item_id)"""

#: Where item ``%(item)s`` moved, when it is not public (``i``): it was merged into another item, maybe merged in
#: turn (a into b, b into c), and the public item at the end of its redirects is the answer; null when there is
#: none (not merged, or the end is not public). Merges never form a cycle (a survivor is active), and the depth is
#: bounded anyway.
_MOVED_TO = """CASE WHEN i.item_id IS NULL THEN (
    WITH RECURSIVE chain (item_id, depth) AS (
        SELECT r.target_item_id, 1 FROM product.public_item_redirect r
         WHERE r.tenant_id = %(tenant)s AND r.catalog_id = %(catalog)s AND r.generation = p.generation
           AND r.item_id = %(item)s
        UNION ALL
        SELECT r.target_item_id, c.depth + 1 FROM chain c
          JOIN product.public_item_redirect r
            ON r.tenant_id = %(tenant)s AND r.catalog_id = %(catalog)s AND r.generation = p.generation
           AND r.item_id = c.item_id
         WHERE c.depth < 64)
    SELECT c.item_id FROM chain c
      JOIN product.public_item t
        ON t.tenant_id = %(tenant)s AND t.catalog_id = %(catalog)s AND t.generation = p.generation
       AND t.item_id = c.item_id
     ORDER BY c.depth DESC LIMIT 1) END"""

_ITEM_DETAIL = sql.SQL(
    """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision, i.item_id, i.published_revision,
       i.publication_revision, i.fields, CASE WHEN i.item_id IS NULL THEN NULL ELSE {listings} END AS listings,
       {pictures} AS pictures, {moved_to} AS moved_to
  FROM pointer p
  LEFT JOIN product.public_item i
    ON i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s AND i.generation = p.generation
   AND i.item_id = %(item)s"""
).format(
    scope=_SCOPE,
    listings=sql.SQL(_LISTINGS_OF),
    pictures=sql.SQL(_PICTURES_OF).format(generation=sql.SQL("p.generation")),
    moved_to=sql.SQL(_MOVED_TO),
)

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
       (SELECT coalesce(json_agg(json_build_object('item_id', i.item_id,
                                                     'published_revision', i.published_revision,
                                                     'publication_revision', i.publication_revision,
                                                     'fields', i.fields,
                                                     'pictures', {pictures}) ORDER BY i.item_id), '[]'::json)
          FROM page i) AS items,
       {facets} AS facets
  FROM pointer p"""

_FACETS = """(SELECT coalesce(jsonb_agg(jsonb_build_object('key', key, 'value', value, 'unit', unit, 'count', count)
                                  ORDER BY key, count DESC, value), '[]'::jsonb)
          FROM facet)"""


@functools.lru_cache(maxsize=256)
def _page_statement(shape: SearchShape) -> bytes:
    """The list statement of a shape, composed once per process (a request only fills its parameters)."""
    matched = sql.SQL(_MATCHED).format(
        generation=sql.SQL(SERVING_GENERATION_SUBQUERY),
        conditions=sql.SQL(" AND ").join(conditions_of(shape) or [sql.SQL("true")]),
    )
    ctes: list[sql.Composable] = [matched, sql.SQL(_PAGE)]
    facets: sql.Composable = sql.SQL("'[]'::jsonb")
    if shape.facets:
        ctes.append(sql.SQL(_FACET))
        facets = sql.SQL(_FACETS)
    pictures = sql.SQL(_PICTURES_OF).format(generation=sql.SQL("p.generation"))
    statement = sql.SQL(_ITEM_PAGE).format(
        scope=_SCOPE, ctes=sql.SQL(", ").join(ctes), facets=facets, pictures=pictures
    )
    return statement.as_bytes(None)


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


#: The public merchant of listing ``l``: its source's released binding to a released merchant, with the
#: merchant's released shipping policy (null when none). Null when the source is bound to no public merchant.
_LISTING_MERCHANT = """(SELECT jsonb_build_object('merchant_id', m.merchant_id, 'name', m.fields->>'name',
                                   'shipping_policy', sp.fields)
     FROM product.public_merchant_source s
     JOIN product.public_merchant m
       ON m.tenant_id = s.tenant_id AND m.catalog_id = s.catalog_id AND m.generation = s.generation
      AND m.merchant_id = s.merchant_id
     LEFT JOIN product.public_shipping_policy sp
       ON sp.tenant_id = m.tenant_id AND sp.catalog_id = m.catalog_id AND sp.generation = m.generation
      AND sp.merchant_id = m.merchant_id
    WHERE s.tenant_id = l.tenant_id AND s.catalog_id = l.catalog_id AND s.generation = l.generation
      AND s.source_id = l.fields->>'source_id')"""

_LISTING_DOCUMENT = """jsonb_build_object('listing_id', l.listing_id, 'item_id', l.item_id,
                                 'publication_revision', l.publication_revision, 'fields', l.fields,
                                 'merchant', {merchant})"""

_ITEM_LISTINGS = sql.SQL(
    """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision, i.item_id, i.published_revision,
       i.publication_revision, i.fields,
       coalesce((SELECT jsonb_agg({listing} ORDER BY l.listing_id)
                   FROM product.public_listing l
                  WHERE l.tenant_id = %(tenant)s AND l.catalog_id = %(catalog)s AND l.generation = i.generation
                    AND l.item_id = i.item_id), '[]'::jsonb) AS listings,
       {moved_to} AS moved_to
  FROM pointer p
  LEFT JOIN product.public_item i
    ON i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s AND i.generation = p.generation
   AND i.item_id = %(item)s"""
).format(
    scope=_SCOPE,
    listing=sql.SQL(_LISTING_DOCUMENT).format(merchant=sql.SQL(_LISTING_MERCHANT)),
    moved_to=sql.SQL(_MOVED_TO),
)

_BASKET = sql.SQL(
    """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision,
       coalesce((SELECT jsonb_agg({listing} ORDER BY l.listing_id)
                   FROM product.public_listing l
                  WHERE l.tenant_id = %(tenant)s AND l.catalog_id = %(catalog)s AND l.generation = p.generation
                    AND l.listing_id = ANY(%(listings)s::text[])
                    -- INV-01: a listing is public while the item that owns it is.
                    AND EXISTS (SELECT 1 FROM product.public_item i
                                 WHERE i.tenant_id = l.tenant_id AND i.catalog_id = l.catalog_id
                                   AND i.generation = l.generation AND i.item_id = l.item_id)), '[]'::jsonb)
         AS listings
  FROM pointer p"""
).format(scope=_SCOPE, listing=sql.SQL(_LISTING_DOCUMENT).format(merchant=sql.SQL(_LISTING_MERCHANT)))


# A released collection by id (merchants, classes): a page after an id, or the one entry ``%(id)s``. ``{document}``
# is the entry's JSON from row ``e`` of ``{table}``, keyed by ``{key}``.
_COLLECTION = """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision,
       (SELECT coalesce(jsonb_agg(page.document ORDER BY page.id), '[]'::jsonb) FROM (
          SELECT e.{key} AS id, jsonb_build_object(
                   'id', e.{key}, 'published_revision', e.published_revision,
                   'publication_revision', e.publication_revision, 'fields', e.fields, {document}) AS document
            FROM {table} e
           WHERE e.tenant_id = %(tenant)s AND e.catalog_id = %(catalog)s AND e.generation = p.generation
             AND (%(after)s::text IS NULL OR e.{key} > %(after)s::text)
             AND (%(id)s::text IS NULL OR e.{key} = %(id)s::text)
           ORDER BY e.{key} LIMIT %(limit)s) AS page) AS entries
  FROM pointer p"""

_MERCHANT_DOCUMENT = """'sources', coalesce((SELECT jsonb_agg(s.source_id ORDER BY s.source_id)
                                  FROM product.public_merchant_source s
                                 WHERE s.tenant_id = e.tenant_id AND s.catalog_id = e.catalog_id
                                   AND s.generation = e.generation AND s.merchant_id = e.merchant_id), '[]'::jsonb),
           'shipping_policy', (SELECT sp.fields FROM product.public_shipping_policy sp
                                WHERE sp.tenant_id = e.tenant_id AND sp.catalog_id = e.catalog_id
                                  AND sp.generation = e.generation AND sp.merchant_id = e.merchant_id)"""

# The released members only: an item the class names is counted once a release published it.
_CLASS_DOCUMENT = """'item_count', (SELECT count(*) FROM product.public_item i
                           WHERE i.tenant_id = e.tenant_id AND i.catalog_id = e.catalog_id
                             AND i.generation = e.generation
                             AND i.item_id IN (SELECT jsonb_array_elements_text(e.fields->'members')))"""


def _collection(table: LiteralString, key: LiteralString, document: LiteralString) -> sql.Composed:
    return sql.SQL(_COLLECTION).format(
        scope=_SCOPE, table=sql.SQL(table), key=sql.SQL(key), document=sql.SQL(document)
    )


def _read(
    tenant_id: str,
    catalog_id: str,
    statement: Query,
    of_row: Callable[[dict[str, Any]], R],
    empty: R,
    **params: Any,
) -> OneRead[R]:
    return OneRead(
        tenant_id,
        catalog_id,
        statement,
        {"tenant": tenant_id, "catalog": catalog_id, **params},
        of_row,
        empty,
    )


def release_read(tenant_id: str, catalog_id: str) -> OneRead[Release]:
    """The release served now (an ETag check: ``If-None-Match`` costs this one statement)."""
    return _read(tenant_id, catalog_id, _RELEASE, release_of, NO_RELEASE)


def item_detail_read(tenant_id: str, catalog_id: str, item_id: str) -> OneRead[Detail[PublicItem]]:
    """A released item with the listings it publicly owns (INV-01) and its released pictures; for an item merged
    away, the public item it moved to (``Detail.moved_to``)."""
    return _read(tenant_id, catalog_id, _ITEM_DETAIL, _item_detail_of, Detail(NO_RELEASE, None), item=item_id)


def _item_detail_of(row: dict[str, Any]) -> Detail[PublicItem]:
    if row["item_id"] is None:
        return Detail(release_of(row), None, _text_or_none(row["moved_to"]))
    listings = tuple(listing_of(entry) for entry in list_of(row["listings"]))
    item = PublicItem(
        str(row["item_id"]),
        int_of(row["published_revision"]),
        int_of(row["publication_revision"]),
        dict_of(row["fields"]),
        listings,
        pictures_of(row["pictures"]),
    )
    return Detail(release_of(row), item)


def _text_or_none(value: object) -> str | None:
    return None if value is None else str(value)


def page_read(
    tenant_id: str, catalog_id: str, search: ItemSearch, *, after: str | None, limit: int
) -> OneRead[ItemPage]:
    """Released items matching ``search``, by item id, the first ``limit`` after item id ``after`` (no cursor:
    the caller makes it), with facet counts over every match (not only the page)."""
    params: dict[str, Any] = {"tenant": tenant_id, "catalog": catalog_id, "after": after, "limit": limit}
    statement = _page_statement(search_params(search, params))
    return OneRead(tenant_id, catalog_id, statement, params, _page_of, ItemPage((), None, None))


def _page_of(row: dict[str, Any]) -> ItemPage:
    items = tuple(
        PublicItem(
            str(e["item_id"]),
            int(e["published_revision"]),
            int(e["publication_revision"]),
            e["fields"],
            pictures=pictures_of(e.get("pictures")),
        )
        for e in list_of(row["items"])
    )
    facets = tuple(
        FacetCount(f["key"], f["value"], f["unit"], int(f["count"])) for f in list_of(row["facets"])
    )
    release = release_of(row)
    return ItemPage(items, None, release.publication_revision, facets, release.generation)


def source_read(tenant_id: str, catalog_id: str, source_id: str) -> OneRead[SourceSummary]:
    """What the release served publishes of a source: its public listings and the items that own them."""

    def of_row(row: dict[str, Any]) -> SourceSummary:
        observed = row["last_observed_at"]
        listings, items = int_of(row["listings"]), int_of(row["items"])
        return SourceSummary(
            release_of(row), source_id, listings, items, None if observed is None else str(observed)
        )

    empty = SourceSummary(NO_RELEASE, source_id, 0, 0, None)
    return _read(tenant_id, catalog_id, _SOURCE, of_row, empty, source=source_id)


def item_listings_read(tenant_id: str, catalog_id: str, item_id: str) -> OneRead[ItemListings]:
    """A released item's public listings, each with its public merchant and latest released inventory; for an item
    merged away, the public item it moved to (``ItemListings.moved_to``)."""

    def of_row(row: dict[str, Any]) -> ItemListings:
        if row["item_id"] is None:
            return ItemListings(release_of(row), None, (), _text_or_none(row["moved_to"]))
        item = PublicItem(
            str(row["item_id"]), int_of(row["published_revision"]), int_of(row["publication_revision"]), {}
        )
        listings = tuple(merchant_listing_of(entry) for entry in list_of(row["listings"]))
        return ItemListings(release_of(row), item, listings)

    return _read(
        tenant_id, catalog_id, _ITEM_LISTINGS, of_row, ItemListings(NO_RELEASE, None, ()), item=item_id
    )


def basket_read(tenant_id: str, catalog_id: str, listing_ids: list[str]) -> OneRead[Basket]:
    """The public listings among ``listing_ids`` with their merchants and policies."""

    def of_row(row: dict[str, Any]) -> Basket:
        return Basket(
            release_of(row), tuple(merchant_listing_of(entry) for entry in list_of(row["listings"]))
        )

    return _read(tenant_id, catalog_id, _BASKET, of_row, Basket(NO_RELEASE, ()), listings=listing_ids)


@dataclass(frozen=True, slots=True)
class Collection(Generic[T]):
    """A released collection read by id: a page after an id, or one entry. ``name`` is its cursor fingerprint, so
    a cursor of one collection (or of the items) is not one of another."""

    name: str
    statement: sql.Composed
    entry_of: Callable[[dict[str, Any]], T]
    key: Callable[[T], str]

    def read(
        self,
        tenant_id: str,
        catalog_id: str,
        *,
        limit: int,
        after: str | None = None,
        entry_id: str | None = None,
    ) -> OneRead[Page[T]]:
        """The first ``limit`` entries after id ``after`` (or the one ``entry_id``); no cursor: the caller makes it."""

        def of_row(row: dict[str, Any]) -> Page[T]:
            return Page(
                tuple(self.entry_of(entry) for entry in list_of(row["entries"])), None, release_of(row)
            )

        empty: Page[T] = Page((), None, NO_RELEASE)
        return _read(
            tenant_id, catalog_id, self.statement, of_row, empty, after=after, limit=limit, id=entry_id
        )

    def detail_read(self, tenant_id: str, catalog_id: str, entry_id: str) -> OneRead[Detail[T]]:
        return self.read(tenant_id, catalog_id, limit=1, entry_id=entry_id).then(
            lambda page: Detail(page.release, page.entries[0] if page.entries else None)
        )


#: Released merchants, each with its public sources and released shipping policy.
MERCHANTS: Final[Collection[PublicMerchant]] = Collection(
    "merchants",
    _collection("product.public_merchant", "merchant_id", _MERCHANT_DOCUMENT),
    merchant_of,
    lambda merchant: merchant.merchant_id,
)
#: Released product classes (seed 004), each with the number of its released member items.
CLASSES: Final[Collection[PublicClass]] = Collection(
    "classes",
    _collection("product.public_class", "class_id", _CLASS_DOCUMENT),
    class_of,
    lambda product_class: product_class.class_id,
)

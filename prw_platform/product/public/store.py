"""The released public snapshot: ``public_item``, ``public_listing``, ``release_pointer``, the merchant tables and
the pictures' ``public_item_pictures`` and ``public_class`` (this module owns them).

Two callers, one set of tables: ``releases`` writes a release's snapshot when the consumer applies it, and
``queries`` reads it for the public API. Every read and write is of one generation, the scope's serving one; the
caller reads the scope (``scopes.find_scope``) in the same transaction. Nothing here reads the internal projection
(if_product_query: "No public serializer reads live internal mappings").
"""

from __future__ import annotations

import functools
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from prw_platform.db.database import Connection, Query
from prw_platform.product.errors import CatalogPaused
from prw_platform.product.public.filters import SearchShape, conditions_of, search_params
from prw_platform.product.public.rows import (
    BasketRows,
    ClassRows,
    FacetCount,
    ItemDetailRow,
    ItemListingsRow,
    ItemRows,
    ItemSearch,
    MerchantRows,
    PublicItem,
    PublicListing,
    PublicMerchant,
    SourceRow,
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
from prw_platform.product.scopes import SERVING_GENERATION_SUBQUERY, ProjectedScope, paused_reason

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


def drop_generation(
    conn: Connection, scope: ProjectedScope, generation: int, limit: int | None = None
) -> int:
    """Remove a generation's public snapshot (a replaced one after a rebuild's cutover, or a failed rebuild's).
    Never the serving generation: the caller checks it under the scope lock. At most ``limit`` rows per table
    (None: all), so the cleanup drops a generation in bounded transactions; the number removed."""
    key = (scope.tenant_id, scope.catalog_id, generation, limit)
    removed = 0
    for statement in (
        """DELETE FROM product.public_listing WHERE ctid = ANY (ARRAY(SELECT ctid FROM product.public_listing
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))""",
        """DELETE FROM product.public_item WHERE ctid = ANY (ARRAY(SELECT ctid FROM product.public_item
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))""",
        """DELETE FROM product.release_pointer WHERE ctid = ANY (ARRAY(SELECT ctid FROM product.release_pointer
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))""",
        """DELETE FROM product.public_merchant_source WHERE ctid = ANY (ARRAY(SELECT ctid FROM product.public_merchant_source
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))""",
        """DELETE FROM product.public_shipping_policy WHERE ctid = ANY (ARRAY(SELECT ctid FROM product.public_shipping_policy
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))""",
        """DELETE FROM product.public_merchant WHERE ctid = ANY (ARRAY(SELECT ctid FROM product.public_merchant
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))""",
        """DELETE FROM product.public_item_pictures WHERE ctid = ANY (ARRAY(SELECT ctid FROM product.public_item_pictures
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))""",
        """DELETE FROM product.public_class WHERE ctid = ANY (ARRAY(SELECT ctid FROM product.public_class
           WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))""",
    ):
        removed += conn.execute(statement, key).rowcount
    return removed


# --- reads: the public API ------------------------------------------------------------------------------------
#
# Every public read is one statement (a consistent snapshot without a multi-statement transaction, and one round
# trip): the scope's serving generation comes from scopes.SERVING_GENERATION_SUBQUERY, the release pointer, the
# items and listings from the tables this module owns. A page's item documents and a detail's listings are
# aggregated as ``json``, not ``jsonb``: the aggregate is sent as text, and building it in binary only to print it
# again cost 0.2 - 0.35 ms more per page of 21 items (EXPLAIN ANALYZE of the aggregate printed, issue 9 item 5).


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

_ITEM_DETAIL = sql.SQL(
    """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision, i.item_id, i.published_revision,
       i.publication_revision, i.fields, CASE WHEN i.item_id IS NULL THEN NULL ELSE {listings} END AS listings,
       {pictures} AS pictures
  FROM pointer p
  LEFT JOIN product.public_item i
    ON i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s AND i.generation = p.generation
   AND i.item_id = %(item)s"""
).format(
    scope=_SCOPE,
    listings=sql.SQL(_LISTINGS_OF),
    pictures=sql.SQL(_PICTURES_OF).format(generation=sql.SQL("p.generation")),
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


def not_served(conn: Connection, tenant_id: str, catalog_id: str) -> None:
    """A read found no serving generation: nothing when the catalog is not projected here (the caller answers
    None); ``CatalogPaused`` (503
    UNAVAILABLE at the edge) while its history epoch is being fenced (``prw epoch fence``), so a consumer never
    mistakes the pause for an empty catalog. Asked only when the one-statement read found nothing."""
    reason = paused_reason(conn, tenant_id, catalog_id)
    if reason is not None:
        raise CatalogPaused(reason)


def release_read(tenant_id: str, catalog_id: str) -> tuple[Query, dict[str, Any]]:
    """The one statement reading the serving generation's release (no row: the catalog is not served)."""
    return _RELEASE, {"tenant": tenant_id, "catalog": catalog_id}


def item_detail_read(tenant_id: str, catalog_id: str, item_id: str) -> tuple[Query, dict[str, Any]]:
    """The one statement of an item detail and its parameters (``Database.read_row`` runs it in one round trip;
    ``item_detail_of`` reads its row)."""
    return _ITEM_DETAIL, {"tenant": tenant_id, "catalog": catalog_id, "item": item_id}


def item_detail_of(row: dict[str, Any]) -> ItemDetailRow:
    """The row of ``item_detail_read``'s statement (which answers no row when the catalog is not served)."""
    if row["item_id"] is None:
        return ItemDetailRow(release_of(row), None)
    listings = tuple(listing_of(entry) for entry in list_of(row["listings"]))
    item = PublicItem(
        str(row["item_id"]),
        int_of(row["published_revision"]),
        int_of(row["publication_revision"]),
        dict_of(row["fields"]),
        listings,
        pictures_of(row["pictures"]),
    )
    return ItemDetailRow(release_of(row), item)


def page_read(
    tenant_id: str, catalog_id: str, search: ItemSearch, *, after: str | None, limit: int
) -> tuple[Query, dict[str, Any]]:
    """The one statement of a list page and its parameters: released items matching ``search``, by item id, the
    first ``limit`` after item id ``after``, with facet counts over every match (not only the page)."""
    params: dict[str, Any] = {"tenant": tenant_id, "catalog": catalog_id, "after": after, "limit": limit}
    return _page_statement(search_params(search, params)), params


def page_of(row: dict[str, Any]) -> ItemRows:
    """The row of ``page_read``'s statement (which answers no row when the catalog is not served)."""
    items = [
        PublicItem(
            str(e["item_id"]),
            int(e["published_revision"]),
            int(e["publication_revision"]),
            e["fields"],
            pictures=pictures_of(e.get("pictures")),
        )
        for e in list_of(row["items"])
    ]
    facets = [FacetCount(f["key"], f["value"], f["unit"], int(f["count"])) for f in list_of(row["facets"])]
    return ItemRows(release_of(row), items, facets)


def find_source(conn: Connection, tenant_id: str, catalog_id: str, source_id: str) -> SourceRow | None:
    """What the current release publishes of a source: its public listings and the items that own them."""
    row = conn.execute(_SOURCE, {"tenant": tenant_id, "catalog": catalog_id, "source": source_id}).fetchone()
    if row is None:
        not_served(conn, tenant_id, catalog_id)
        return None
    observed = row["last_observed_at"]
    return SourceRow(
        release_of(row),
        source_id,
        int_of(row["listings"]),
        int_of(row["items"]),
        None if observed is None else str(observed),
    )


# --- merchants, listings with their merchants, baskets (issue 9 item 2) ----------------------------------------

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
                    AND l.item_id = i.item_id), '[]'::jsonb) AS listings
  FROM pointer p
  LEFT JOIN product.public_item i
    ON i.tenant_id = %(tenant)s AND i.catalog_id = %(catalog)s AND i.generation = p.generation
   AND i.item_id = %(item)s"""
).format(scope=_SCOPE, listing=sql.SQL(_LISTING_DOCUMENT).format(merchant=sql.SQL(_LISTING_MERCHANT)))

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

_MERCHANTS = sql.SQL(
    """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision,
       (SELECT coalesce(jsonb_agg(page.document ORDER BY page.merchant_id), '[]'::jsonb) FROM (
          SELECT m.merchant_id, jsonb_build_object(
                   'merchant_id', m.merchant_id, 'published_revision', m.published_revision,
                   'publication_revision', m.publication_revision, 'fields', m.fields,
                   'sources', coalesce((SELECT jsonb_agg(s.source_id ORDER BY s.source_id)
                                          FROM product.public_merchant_source s
                                         WHERE s.tenant_id = m.tenant_id AND s.catalog_id = m.catalog_id
                                           AND s.generation = m.generation AND s.merchant_id = m.merchant_id),
                                       '[]'::jsonb),
                   'shipping_policy', (SELECT sp.fields FROM product.public_shipping_policy sp
                                        WHERE sp.tenant_id = m.tenant_id AND sp.catalog_id = m.catalog_id
                                          AND sp.generation = m.generation AND sp.merchant_id = m.merchant_id)
                 ) AS document
            FROM product.public_merchant m
           WHERE m.tenant_id = %(tenant)s AND m.catalog_id = %(catalog)s AND m.generation = p.generation
             AND (%(after)s::text IS NULL OR m.merchant_id > %(after)s::text)
             AND (%(merchant)s::text IS NULL OR m.merchant_id = %(merchant)s::text)
           ORDER BY m.merchant_id LIMIT %(limit)s) AS page) AS merchants
  FROM pointer p"""
).format(scope=_SCOPE)


def find_merchants(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    *,
    after: str | None = None,
    limit: int,
    merchant_id: str | None = None,
) -> MerchantRows | None:
    """Released merchants by id (the first ``limit`` after ``after``, or the one ``merchant_id``), each with its
    public sources and released shipping policy; None when the catalog is not projected here."""
    params = {
        "tenant": tenant_id,
        "catalog": catalog_id,
        "after": after,
        "limit": limit,
        "merchant": merchant_id,
    }
    row = conn.execute(_MERCHANTS, params).fetchone()
    if row is None:
        not_served(conn, tenant_id, catalog_id)
        return None
    return MerchantRows(release_of(row), [merchant_of(entry) for entry in list_of(row["merchants"])])


def find_item_listings(
    conn: Connection, tenant_id: str, catalog_id: str, item_id: str
) -> ItemListingsRow | None:
    """A released item's public listings, each with its public merchant; None when not projected here."""
    row = conn.execute(
        _ITEM_LISTINGS, {"tenant": tenant_id, "catalog": catalog_id, "item": item_id}
    ).fetchone()
    if row is None:
        not_served(conn, tenant_id, catalog_id)
        return None
    if row["item_id"] is None:
        return ItemListingsRow(release_of(row), None, ())
    item = PublicItem(
        str(row["item_id"]), int_of(row["published_revision"]), int_of(row["publication_revision"]), {}
    )
    listings = tuple(merchant_listing_of(entry) for entry in list_of(row["listings"]))
    return ItemListingsRow(release_of(row), item, listings)


def find_basket(
    conn: Connection, tenant_id: str, catalog_id: str, listing_ids: list[str]
) -> BasketRows | None:
    """The public listings among ``listing_ids`` with their merchants and policies; None when not projected."""
    params = {"tenant": tenant_id, "catalog": catalog_id, "listings": listing_ids}
    row = conn.execute(_BASKET, params).fetchone()
    if row is None:
        not_served(conn, tenant_id, catalog_id)
        return None
    return BasketRows(
        release_of(row), tuple(merchant_listing_of(entry) for entry in list_of(row["listings"]))
    )


# --- product classes (seed 004, issue 13 item 5) ---------------------------------------------------------------

_CLASSES = sql.SQL(
    """WITH {scope}
SELECT p.generation, p.publication_revision AS current_revision,
       (SELECT coalesce(jsonb_agg(page.document ORDER BY page.class_id), '[]'::jsonb) FROM (
          SELECT c.class_id, jsonb_build_object(
                   'class_id', c.class_id, 'published_revision', c.published_revision,
                   'publication_revision', c.publication_revision, 'fields', c.fields,
                   -- The released members only: an item the class names is counted once a release published it.
                   'item_count', (SELECT count(*) FROM product.public_item i
                                   WHERE i.tenant_id = c.tenant_id AND i.catalog_id = c.catalog_id
                                     AND i.generation = c.generation
                                     AND i.item_id IN (SELECT jsonb_array_elements_text(c.fields->'members')))
                 ) AS document
            FROM product.public_class c
           WHERE c.tenant_id = %(tenant)s AND c.catalog_id = %(catalog)s AND c.generation = p.generation
             AND (%(after)s::text IS NULL OR c.class_id > %(after)s::text)
             AND (%(class)s::text IS NULL OR c.class_id = %(class)s::text)
           ORDER BY c.class_id LIMIT %(limit)s) AS page) AS classes
  FROM pointer p"""
).format(scope=_SCOPE)


def find_classes(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    *,
    after: str | None = None,
    limit: int,
    class_id: str | None = None,
) -> ClassRows | None:
    """Released product classes by id (the first ``limit`` after ``after``, or the one ``class_id``), each with the
    number of its released member items; None when the catalog is not projected here."""
    params = {
        "tenant": tenant_id,
        "catalog": catalog_id,
        "after": after,
        "limit": limit,
        "class": class_id,
    }
    row = conn.execute(_CLASSES, params).fetchone()
    if row is None:
        not_served(conn, tenant_id, catalog_id)
        return None
    return ClassRows(release_of(row), [class_of(entry) for entry in list_of(row["classes"])])

"""The internal projection: applied revisions and the full state of items, listings and mappings (AW-04 "Apply
projection": upsert by aggregate, set applied rev). Internal state is never served publicly; releases are.

Every write is set-based: one statement per table for a whole batch of deliveries (``unnest`` of arrays), so the
cost of a product transaction grows with its rows, not with round trips. A batch hands each aggregate's last
applied state once (a later revision of the same aggregate in the batch replaced the earlier one in memory).

This module owns ``applied_revision``, ``item_projection``, ``listing_projection`` and
``listing_mapping_projection``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from psycopg.rows import class_row

from prw_platform.contracts import ItemPayload, ListingPayload, MappingPayload
from prw_platform.db.arrays import int_array, json_array, text_array
from prw_platform.db.database import Connection
from prw_platform.product.events import AggregateKey, ProductEvent
from prw_platform.product.scopes import ProjectedScope


@dataclass(frozen=True, slots=True)
class AppliedRow:
    aggregate: AggregateKey
    revision: int
    position: int


@dataclass(frozen=True, slots=True)
class _Revision:
    aggregate_type: str
    aggregate_id: str
    revision: int


def applied_revisions(
    conn: Connection, scope: ProjectedScope, aggregates: Iterable[AggregateKey]
) -> dict[AggregateKey, int]:
    """The applied revision of each aggregate; 0 for those none is applied for yet."""
    keys = sorted({(a.type, a.id) for a in aggregates})
    found: dict[AggregateKey, int] = {AggregateKey(t, i): 0 for t, i in keys}
    if not keys:
        return found
    # One primary-key lookup per aggregate (a LATERAL join on unnest; its LIMIT keeps the planner from
    # flattening it into a plain join), whatever the statistics say: a plain join with unnest() was planned as
    # a hash join over the catalog's rows, and ``= ANY`` on the key columns as a scan of the catalog's prefix
    # with a filter while the table grew faster than it was analyzed.
    rows = (
        conn.cursor(row_factory=class_row(_Revision))
        .execute(
            """SELECT r.aggregate_type, r.aggregate_id, r.revision
               FROM unnest(%s::text[], %s::text[]) AS probe(aggregate_type, aggregate_id)
               CROSS JOIN LATERAL (
                   SELECT aggregate_type, aggregate_id, revision FROM product.applied_revision
                   WHERE tenant_id = %s AND catalog_id = %s AND generation = %s
                     AND aggregate_type = probe.aggregate_type AND aggregate_id = probe.aggregate_id
                   LIMIT 1) AS r""",
            (
                text_array(t for t, _ in keys),
                text_array(i for _, i in keys),
                scope.tenant_id,
                scope.catalog_id,
                scope.serving_generation,
            ),
        )
        .fetchall()
    )
    for row in rows:
        key = AggregateKey(row.aggregate_type, row.aggregate_id)
        if key in found:
            found[key] = row.revision
    return found


def upsert_applied_revisions(conn: Connection, scope: ProjectedScope, rows: Sequence[AppliedRow]) -> None:
    if not rows:
        return
    conn.execute(
        """INSERT INTO product.applied_revision (tenant_id, catalog_id, generation, aggregate_type, aggregate_id,
               revision, position)
           SELECT %s, %s, %s, t, i, r, p
             FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::bigint[]) AS u(t, i, r, p)
           ON CONFLICT (tenant_id, catalog_id, generation, aggregate_type, aggregate_id) DO UPDATE
              SET revision = excluded.revision, position = excluded.position, applied_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            text_array(r.aggregate.type for r in rows),
            text_array(r.aggregate.id for r in rows),
            int_array(r.revision for r in rows),
            int_array(r.position for r in rows),
        ),
    )


def upsert_items(
    conn: Connection, scope: ProjectedScope, items: Sequence[tuple[ProductEvent, ItemPayload]]
) -> None:
    if not items:
        return
    conn.execute(
        """INSERT INTO product.item_projection (tenant_id, catalog_id, generation, item_id, revision, status,
               fields, position)
           SELECT %s, %s, %s, i, r, s, f::jsonb, p
             FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::bigint[]) AS u(i, r, s, f, p)
           ON CONFLICT (tenant_id, catalog_id, generation, item_id) DO UPDATE
              SET revision = excluded.revision, status = excluded.status, fields = excluded.fields,
                  position = excluded.position, updated_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            text_array(item.item for _, item in items),
            int_array(event.revision for event, _ in items),
            text_array(item.status for _, item in items),
            json_array(event.change.payload for event, _ in items),
            int_array(event.position for event, _ in items),
        ),
    )


def upsert_listings(
    conn: Connection, scope: ProjectedScope, listings: Sequence[tuple[ProductEvent, ListingPayload]]
) -> None:
    if not listings:
        return
    conn.execute(
        """INSERT INTO product.listing_projection (tenant_id, catalog_id, generation, listing_id, revision, fields,
               position)
           SELECT %s, %s, %s, l, r, f::jsonb, p
             FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::bigint[]) AS u(l, r, f, p)
           ON CONFLICT (tenant_id, catalog_id, generation, listing_id) DO UPDATE
              SET revision = excluded.revision, fields = excluded.fields, position = excluded.position,
                  updated_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            text_array(listing.listing for _, listing in listings),
            int_array(event.revision for event, _ in listings),
            json_array(event.change.payload for event, _ in listings),
            int_array(event.position for event, _ in listings),
        ),
    )


def upsert_mappings(
    conn: Connection, scope: ProjectedScope, mappings: Sequence[tuple[ProductEvent, MappingPayload]]
) -> None:
    if not mappings:
        return
    # INV-01: one row per listing, so a listing has at most one current item mapping.
    conn.execute(
        """INSERT INTO product.listing_mapping_projection (tenant_id, catalog_id, generation, listing_id, item_id,
               revision, fields, position)
           SELECT %s, %s, %s, l, i, r, f::jsonb, p
             FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::text[], %s::bigint[]) AS u(l, i, r, f, p)
           ON CONFLICT (tenant_id, catalog_id, generation, listing_id) DO UPDATE
              SET item_id = excluded.item_id, revision = excluded.revision, fields = excluded.fields,
                  position = excluded.position, updated_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            text_array(mapping.listing for _, mapping in mappings),
            text_array(mapping.item for _, mapping in mappings),
            int_array(event.revision for event, _ in mappings),
            json_array(event.change.payload for event, _ in mappings),
            int_array(event.position for event, _ in mappings),
        ),
    )


#: The tables keyed by generation (``rebuild.cleanup.drop_generation`` deletes a dropped generation's rows).
GENERATION_TABLES: Final = (
    "product.applied_revision",
    "product.item_projection",
    "product.listing_projection",
    "product.listing_mapping_projection",
)

"""The internal projection: applied revisions and the full state of items, listings and mappings (AW-04 "Apply
projection": upsert by aggregate, set applied rev). Internal state is never served publicly; releases are.

This module owns ``applied_revision``, ``item_projection``, ``listing_projection`` and
``listing_mapping_projection``.
"""

from __future__ import annotations

from psycopg.rows import scalar_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import ItemPayload, ListingPayload, MappingPayload
from prw_platform.db.database import Connection
from prw_platform.product.events import AggregateKey, ProductEvent
from prw_platform.product.scopes import ProjectedScope


def applied_revision(conn: Connection, scope: ProjectedScope, aggregate: AggregateKey) -> int:
    """The applied revision of an aggregate; 0 when none is applied yet."""
    with conn.cursor(row_factory=scalar_row) as cur:
        revision: int | None = cur.execute(
            """SELECT revision FROM product.applied_revision
               WHERE tenant_id = %s AND catalog_id = %s AND aggregate_type = %s AND aggregate_id = %s""",
            (scope.tenant_id, scope.catalog_id, aggregate.type, aggregate.id),
        ).fetchone()
    return revision or 0


def set_applied_revision(conn: Connection, scope: ProjectedScope, event: ProductEvent) -> None:
    conn.execute(
        """INSERT INTO product.applied_revision (tenant_id, catalog_id, aggregate_type, aggregate_id, revision,
               position)
           VALUES (%s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, aggregate_type, aggregate_id) DO UPDATE
              SET revision = excluded.revision, position = excluded.position, applied_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            event.aggregate.type,
            event.aggregate.id,
            event.revision,
            event.position,
        ),
    )


def upsert_item(conn: Connection, scope: ProjectedScope, event: ProductEvent, item: ItemPayload) -> None:
    conn.execute(
        """INSERT INTO product.item_projection (tenant_id, catalog_id, generation, item_id, revision, status,
               fields, position)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, item_id) DO UPDATE
              SET revision = excluded.revision, status = excluded.status, fields = excluded.fields,
                  position = excluded.position, updated_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            item.item,
            event.revision,
            item.status,
            Jsonb(event.change.payload),
            event.position,
        ),
    )


def upsert_listing(
    conn: Connection, scope: ProjectedScope, event: ProductEvent, listing: ListingPayload
) -> None:
    conn.execute(
        """INSERT INTO product.listing_projection (tenant_id, catalog_id, generation, listing_id, revision, fields,
               position)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, listing_id) DO UPDATE
              SET revision = excluded.revision, fields = excluded.fields, position = excluded.position,
                  updated_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            listing.listing,
            event.revision,
            Jsonb(event.change.payload),
            event.position,
        ),
    )


def upsert_mapping(
    conn: Connection, scope: ProjectedScope, event: ProductEvent, mapping: MappingPayload
) -> None:
    # INV-01: one row per listing, so a listing has at most one current item mapping.
    conn.execute(
        """INSERT INTO product.listing_mapping_projection (tenant_id, catalog_id, generation, listing_id, item_id,
               revision, fields, position)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id, generation, listing_id) DO UPDATE
              SET item_id = excluded.item_id, revision = excluded.revision, fields = excluded.fields,
                  position = excluded.position, updated_at = now()""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            mapping.listing,
            mapping.item,
            event.revision,
            Jsonb(event.change.payload),
            event.position,
        ),
    )

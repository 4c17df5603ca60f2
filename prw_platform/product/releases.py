"""Apply a ``release.authorized`` event: the public snapshot and the release pointer, in one transaction.

if_product_query: "Release authorization snapshots public fields and accepted listing mappings. Application waits
for item and mapping dependencies, then changes the release pointer and affected public listing assignments in one
product transaction. [...] a later internal remap remains private until an applied release." The public rows are
copied from the release's snapshot, never from the live projection, so an item revision applied after the release
was authorized stays private. This module owns ``release_pointer``, ``public_item`` and ``public_listing``.
"""

from __future__ import annotations

from psycopg.types.json import Jsonb

from prw_platform.db.database import Connection
from prw_platform.product.events import ProductEvent, ReleasePayload
from prw_platform.product.public_fields import public_item_fields, public_listing_fields
from prw_platform.product.scopes import ProjectedScope


def apply_release(
    conn: Connection, scope: ProjectedScope, event: ProductEvent, release: ReleasePayload
) -> None:
    """Called by the consumer once the release's dependencies (and the previous release) are applied."""
    generation = scope.serving_generation
    for item in release.items:
        fields = public_item_fields({**item.fields, "item": item.item})
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
                generation,
                item.item,
                item.revision,
                release.publication_revision,
                Jsonb(fields),
            ),
        )
    for listing in release.listings:
        fields = public_listing_fields({**listing.fields, "listing": listing.listing})
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
                generation,
                listing.listing,
                listing.item,
                listing.mapping_revision,
                listing.listing_revision,
                release.publication_revision,
                Jsonb(fields),
            ),
        )
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
            generation,
            release.release,
            release.publication_revision,
            event.event_id,
            event.position,
        ),
    )

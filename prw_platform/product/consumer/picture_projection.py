"""The internal projection of item pictures and product classes (seed 004): the full state of each
``item_pictures`` and ``product_class`` aggregate at its applied revision, per generation, like ``projection.py``
for items. Never served publicly: the public API serves what a release copied into ``public_item_pictures`` and
``public_class`` (``public_store``).

Writes are set-based, one statement per table for a batch. This module owns ``item_pictures_projection`` and
``product_class_projection``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from psycopg import sql

from prw_platform.contracts import ITEM_PICTURES, PRODUCT_CLASS
from prw_platform.db.database import Connection
from prw_platform.product.events import ProductEvent
from prw_platform.product.scopes import ProjectedScope

#: aggregate type -> (the statement's head naming its projection table, the table's key column).
_TABLES: Final = {
    ITEM_PICTURES: ("INSERT INTO product.item_pictures_projection", "item_id"),
    PRODUCT_CLASS: ("INSERT INTO product.product_class_projection", "class_id"),
}
PICTURE_FACTS: Final = frozenset(_TABLES)

_UPSERT_TAIL = """ (tenant_id, catalog_id, generation, {key}, revision, deleted, fields, position)
           SELECT %s, %s, %s, k, r, d, f::jsonb, p
             FROM unnest(%s::text[], %s::bigint[], %s::boolean[], %s::text[], %s::bigint[]) AS u(k, r, d, f, p)
           ON CONFLICT (tenant_id, catalog_id, generation, {key}) DO UPDATE
              SET revision = excluded.revision, deleted = excluded.deleted, fields = excluded.fields,
                  position = excluded.position, updated_at = now()"""


def upsert_picture_facts(
    conn: Connection, scope: ProjectedScope, aggregate_type: str, events: Sequence[ProductEvent]
) -> None:
    """AW-04 "Upsert projection rows": the last applied state of each item's pictures or class of the batch; a
    ``product_class.deleted`` revision keeps the row, marked deleted (a later revision may create it again)."""
    if not events:
        return
    head, key = _TABLES[aggregate_type]
    conn.execute(
        sql.SQL(head + _UPSERT_TAIL).format(key=sql.Identifier(key)),
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            [event.aggregate.id for event in events],
            [event.revision for event in events],
            [event.change.type == "product_class.deleted" for event in events],
            [json.dumps(event.change.payload) for event in events],
            [event.position for event in events],
        ),
    )


#: The tables keyed by generation (``rebuild.cleanup.drop_generation`` deletes a dropped generation's rows).
GENERATION_TABLES: Final = ("product.item_pictures_projection", "product.product_class_projection")

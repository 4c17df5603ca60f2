"""The internal projection of merchants, source → merchant bindings and shipping policies (full state per revision,
like ``projection.py`` for items), and the inventory observation history.

``inventory_observation`` keeps one row per listing revision observed (price, currency, availability,
observed_at): its aggregate is the observation itself, (listing, listing revision), immutable once recorded. An
observation is therefore recorded whenever its ``listing.observed`` event is new to the inbox, also when the
listing's state has moved past it (the event is a stale revision of the *listing*, not of the observation): the
history equals the serial application of the stream whatever the delivery order (INV-08), and a duplicate
delivery is never recorded twice (inbox dedupe, then ``ON CONFLICT DO NOTHING``).

Writes are set-based, one statement per table for a batch. This module owns ``merchant_projection``,
``merchant_source_projection``, ``shipping_policy_projection`` and ``inventory_observation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from psycopg import sql

from prw_platform.contracts import MERCHANT, MERCHANT_SOURCE, SHIPPING_POLICY, ListingPayload
from prw_platform.db.arrays import int_array, json_array, text_array
from prw_platform.db.database import Connection
from prw_platform.product.events import ProductEvent
from prw_platform.product.scopes import ProjectedScope


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One exported observation (a line of a snapshot export's ``inventory_history`` object)."""

    listing: str
    listing_revision: int
    price: str | None
    currency: str | None
    availability: str | None
    observed_at: str


#: aggregate type -> (the statement's head naming its projection table, the table's key column).
_FACT_TABLES: Final = {
    MERCHANT: ("INSERT INTO product.merchant_projection", "merchant_id"),
    MERCHANT_SOURCE: ("INSERT INTO product.merchant_source_projection", "source_id"),
    SHIPPING_POLICY: ("INSERT INTO product.shipping_policy_projection", "merchant_id"),
}
MERCHANT_FACTS: Final = frozenset(_FACT_TABLES)

_UPSERT_FACT_TAIL = """ (tenant_id, catalog_id, generation, {key}, revision, fields, position)
           SELECT %s, %s, %s, k, r, f::jsonb, p
             FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::bigint[]) AS u(k, r, f, p)
           ON CONFLICT (tenant_id, catalog_id, generation, {key}) DO UPDATE
              SET revision = excluded.revision, fields = excluded.fields, position = excluded.position,
                  updated_at = now()"""


def _fact_statement(aggregate_type: str) -> sql.Composed:
    head, key = _FACT_TABLES[aggregate_type]
    return sql.SQL(head + _UPSERT_FACT_TAIL).format(key=sql.Identifier(key))


def upsert_merchant_facts(
    conn: Connection, scope: ProjectedScope, aggregate_type: str, events: Sequence[ProductEvent]
) -> None:
    """AW-04 "Upsert projection rows": the last applied state of each merchant, binding or policy of the batch."""
    if not events:
        return
    conn.execute(
        _fact_statement(aggregate_type),
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            text_array(event.aggregate.id for event in events),
            int_array(event.revision for event in events),
            json_array(event.change.payload for event in events),
            int_array(event.position for event in events),
        ),
    )


def record_observations(
    conn: Connection, scope: ProjectedScope, observations: Sequence[tuple[ProductEvent, ListingPayload]]
) -> None:
    """One history row per (listing, listing revision); an observation already recorded is kept as it is."""
    if not observations:
        return
    conn.execute(
        """INSERT INTO product.inventory_observation (tenant_id, catalog_id, generation, listing_id,
               listing_revision, price, currency, availability, observed_at, position)
           SELECT %s, %s, %s, l, r, pr::numeric, c, a, o::timestamptz, p
             FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::bigint[])
                  AS u(l, r, pr, c, a, o, p)
           ON CONFLICT (tenant_id, catalog_id, generation, listing_id, listing_revision) DO NOTHING""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            text_array(listing.listing for _, listing in observations),
            int_array(event.revision for event, _ in observations),
            text_array(listing.price for _, listing in observations),
            text_array(listing.currency for _, listing in observations),
            text_array(listing.availability for _, listing in observations),
            text_array(listing.observed_at for _, listing in observations),
            int_array(event.position for event, _ in observations),
        ),
    )


def record_history(
    conn: Connection, scope: ProjectedScope, history: Sequence[HistoryRow], position: int
) -> None:
    """A rebuild's load of the exported inventory history (its ``inventory_history`` object): the same rows the
    live consumer recorded from each ``listing.observed``, at the snapshot's position W."""
    if not history:
        return
    conn.execute(
        """INSERT INTO product.inventory_observation (tenant_id, catalog_id, generation, listing_id,
               listing_revision, price, currency, availability, observed_at, position)
           SELECT %s, %s, %s, l, r, pr::numeric, c, a, o::timestamptz, %s
             FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[])
                  AS u(l, r, pr, c, a, o)
           ON CONFLICT (tenant_id, catalog_id, generation, listing_id, listing_revision) DO NOTHING""",
        (
            scope.tenant_id,
            scope.catalog_id,
            scope.serving_generation,
            position,
            text_array(row.listing for row in history),
            int_array(row.listing_revision for row in history),
            text_array(row.price for row in history),
            text_array(row.currency for row in history),
            text_array(row.availability for row in history),
            text_array(row.observed_at for row in history),
        ),
    )


#: The tables keyed by generation (``rebuild.cleanup.drop_generation`` deletes a dropped generation's rows).
GENERATION_TABLES: Final = (
    "product.merchant_projection",
    "product.merchant_source_projection",
    "product.shipping_policy_projection",
    "product.inventory_observation",
)

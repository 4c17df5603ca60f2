"""Accepted facts: catalog items, listings and listing mappings, each an aggregate with a revision (AW-01).

Reads and writes run inside the decision transaction, after the stream cursor is locked; a write names the
revision it replaces (``WHERE revision = previous``), so an unexpected concurrent writer fails loudly instead of
being overwritten. The payloads are the contract models of ``prw_platform.contracts`` (full state per revision).

Each listing revision's inventory (price, currency, availability, observed_at) is also appended to
``resolver.inventory_observation`` in the same transaction (migration 0021; append-only: ``resolver_app`` may
insert and read it, never update or delete): the listing row keeps only the current state, the history keeps every
accepted observation, so a snapshot export can carry the inventory history before W (``inventory_history``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from psycopg import Cursor
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import (
    Identifiers,
    ItemAttribute,
    ItemFields,
    ItemMergedPayload,
    ItemPayload,
    ListingPayload,
    decimal_string,
    utc_timestamp,
)
from prw_platform.db.database import Connection, returned_rows
from prw_platform.plugins.types import NormalizedAttribute
from prw_platform.resolver.decisions.commands import ItemFacts, ListingObservation

ACTIVE = "active"
RETIRED = "retired"


@dataclass(frozen=True, slots=True)
class ItemState:
    item_id: str
    catalog_id: str
    revision: int
    status: str
    profile: str
    title: str | None
    brand: str | None
    identifiers: dict[str, str | None]
    attributes: dict[str, dict[str, Any]]
    #: The item a reviewer merged this one into (a retired item only; INV-07 keeps mappings away from both).
    merged_into: str | None = None

    def payload(self) -> ItemPayload:
        """The catalog_item payload (docs/events.md, ``prw_platform.contracts``): ``ItemMergedPayload`` for a
        merged item."""
        if self.merged_into is not None:
            return ItemMergedPayload(
                item=self.item_id,
                profile=self.profile,
                status="retired",
                title=self.title,
                brand=self.brand,
                identifiers=self._identifiers(),
                attributes=self._attributes(),
                merged_into=self.merged_into,
            )
        return ItemPayload(
            item=self.item_id,
            profile=self.profile,
            status=self.status,
            title=self.title,
            brand=self.brand,
            identifiers=self._identifiers(),
            attributes=self._attributes(),
        )

    def public_fields(self) -> ItemFields:
        """The public item fields a release snapshots: the payload without ``status``."""
        return ItemFields(
            item=self.item_id,
            profile=self.profile,
            title=self.title,
            brand=self.brand,
            identifiers=self._identifiers(),
            attributes=self._attributes(),
        )

    def _identifiers(self) -> Identifiers:
        return Identifiers.model_validate(self.identifiers)

    def _attributes(self) -> dict[str, ItemAttribute]:
        # Stored as attribute_document() wrote them (value, unit, definition_version).
        return {key: ItemAttribute.model_validate(document) for key, document in self.attributes.items()}


@dataclass(frozen=True, slots=True)
class ListingState:
    listing_id: str
    catalog_id: str
    source_id: str
    natural_key: str
    native_record_id: str | None
    revision: int
    url: str | None
    title: str | None
    price: Decimal | None
    currency: str | None
    availability: str | None
    observed_at: datetime
    capture_id: str | None

    def payload(self) -> ListingPayload:
        """The listing payload (docs/events.md), which is also the public listing fields of a release."""
        return ListingPayload(
            listing=self.listing_id,
            source_id=self.source_id,
            url=self.url,
            title=self.title,
            price=None if self.price is None else decimal_string(self.price),
            currency=self.currency,
            availability=self.availability,
            observed_at=utc_timestamp(self.observed_at),
        )


@dataclass(frozen=True, slots=True)
class MappingState:
    listing_id: str
    catalog_id: str
    item_id: str
    revision: int
    decision_id: str


def listing_id_for(source_id: str, natural_key: str) -> str:
    """Stable across replays and rebuilds: the same (source, natural key) is always the same listing."""
    digest = hashlib.sha256(f"{source_id}\x1f{natural_key}".encode()).hexdigest()[:24]
    return f"lst_{digest}"


def attribute_document(attribute: NormalizedAttribute) -> dict[str, Any]:
    # INV-02: the value travels with its unit and the definition version it conforms to. Decimals stay exact.
    value = str(attribute.value) if isinstance(attribute.value, Decimal) else attribute.value
    return {"value": value, "unit": attribute.unit, "definition_version": attribute.definition_version}


def new_item(item_id: str, catalog_id: str, facts: ItemFacts) -> ItemState:
    return ItemState(
        item_id=item_id,
        catalog_id=catalog_id,
        revision=1,
        status=ACTIVE,
        profile=facts.profile,
        title=facts.title,
        brand=facts.brand,
        identifiers={"gtin": facts.gtin, "mpn": facts.mpn},
        attributes={a.key: attribute_document(a) for a in facts.attributes},
    )


def observe_listing(
    current: ListingState | None, catalog_id: str, obs: ListingObservation
) -> ListingState | None:
    """The listing's next revision after ``obs``, or None when the observation changes nothing: identical
    fields, or an observation older than the one already accepted (a replay never rolls a listing back)."""
    if current is not None and obs.observed_at < current.observed_at:
        return None
    observed = ListingState(
        listing_id=current.listing_id if current else listing_id_for(obs.source_id, obs.natural_key),
        catalog_id=catalog_id,
        source_id=obs.source_id,
        natural_key=obs.natural_key,
        native_record_id=obs.native_record_id,
        revision=current.revision + 1 if current else 1,
        url=obs.url,
        title=obs.title,
        price=obs.price,
        currency=obs.currency,
        availability=obs.availability,
        observed_at=obs.observed_at,
        capture_id=obs.capture_id,
    )
    if current is not None and observed.payload() == current.payload():
        return None
    return observed


def get_item(conn: Connection, tenant_id: str, item_id: str) -> ItemState | None:
    return send_get_item(conn, tenant_id, item_id)()


def send_get_item(conn: Connection, tenant_id: str, item_id: str) -> Callable[[], ItemState | None]:
    """``get_item`` in two steps: the query is sent now and its row read when the returned function is called
    (in pipeline mode, together with every statement sent in between)."""
    cur = conn.cursor(row_factory=class_row(ItemState))
    cur.execute(
        """SELECT item_id, catalog_id, revision, status, profile, title, brand, identifiers, attributes,
                  merged_into
           FROM resolver.catalog_item WHERE tenant_id = %s AND item_id = %s""",
        (tenant_id, item_id),
    )
    return _fetch_one(cur)


def write_retirement(conn: Connection, tenant_id: str, item: ItemState, now: datetime) -> None:
    """The item at the revision that retired it; replaces exactly the previous revision (the cursor lock)."""
    updated = conn.execute(
        """UPDATE resolver.catalog_item SET revision = %s, status = %s, updated_at = %s
           WHERE tenant_id = %s AND item_id = %s AND revision = %s""",
        (item.revision, RETIRED, now, tenant_id, item.item_id, item.revision - 1),
    ).rowcount
    if updated != 1:
        raise RuntimeError(f"{item.item_id} changed outside the stream cursor lock")


def write_merge(conn: Connection, tenant_id: str, item: ItemState, now: datetime) -> None:
    """The item at the revision that merged it into ``item.merged_into``: retired, naming its survivor; replaces
    exactly the previous revision (the cursor lock)."""
    updated = conn.execute(
        """UPDATE resolver.catalog_item SET revision = %s, status = %s, merged_into = %s, updated_at = %s
           WHERE tenant_id = %s AND item_id = %s AND revision = %s""",
        (item.revision, RETIRED, item.merged_into, now, tenant_id, item.item_id, item.revision - 1),
    ).rowcount
    if updated != 1:
        raise RuntimeError(f"{item.item_id} changed outside the stream cursor lock")


def insert_item(conn: Connection, tenant_id: str, item: ItemState, now: datetime) -> None:
    conn.execute(
        """INSERT INTO resolver.catalog_item (tenant_id, catalog_id, item_id, revision, status, profile, title,
               brand, identifiers, attributes, created_at, updated_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            tenant_id,
            item.catalog_id,
            item.item_id,
            item.revision,
            item.status,
            item.profile,
            item.title,
            item.brand,
            Jsonb(item.identifiers),
            Jsonb(item.attributes),
            now,
            now,
        ),
    )


def get_listing(conn: Connection, tenant_id: str, listing_id: str) -> ListingState | None:
    return send_get_listing(conn, tenant_id, listing_id)()


def send_get_listing(conn: Connection, tenant_id: str, listing_id: str) -> Callable[[], ListingState | None]:
    """``get_listing`` in two steps: the query is sent now and its row read when the returned function is called
    (in pipeline mode, together with every statement sent in between)."""
    cur = conn.cursor(row_factory=class_row(ListingState))
    cur.execute(
        """SELECT listing_id, catalog_id, source_id, natural_key, native_record_id, revision, url, title, price,
                  currency, availability, observed_at, capture_id
           FROM resolver.listing WHERE tenant_id = %s AND listing_id = %s""",
        (tenant_id, listing_id),
    )
    return _fetch_one(cur)


def find_listing(conn: Connection, tenant_id: str, source_id: str, natural_key: str) -> ListingState | None:
    return send_find_listing(conn, tenant_id, source_id, natural_key)()


def send_find_listing(
    conn: Connection, tenant_id: str, source_id: str, natural_key: str
) -> Callable[[], ListingState | None]:
    """``find_listing`` in two steps: the query is sent now and its row read when the returned function is
    called (in pipeline mode, together with every statement sent in between)."""
    cur = conn.cursor(row_factory=class_row(ListingState))
    cur.execute(
        """SELECT listing_id, catalog_id, source_id, natural_key, native_record_id, revision, url, title, price,
                  currency, availability, observed_at, capture_id
           FROM resolver.listing WHERE tenant_id = %s AND source_id = %s AND natural_key = %s""",
        (tenant_id, source_id, natural_key),
    )
    return _fetch_one(cur)


@dataclass(frozen=True, slots=True)
class InventoryObservation:
    """One accepted observation of a listing: the inventory its revision carried."""

    listing_id: str
    listing_revision: int
    price: Decimal | None
    currency: str | None
    availability: str | None
    observed_at: datetime

    def export_line(self) -> dict[str, Any]:
        """The snapshot export's ``inventory_history`` line, in the listing payload's formats."""
        return {
            "listing": self.listing_id,
            "listing_revision": self.listing_revision,
            "price": None if self.price is None else decimal_string(self.price),
            "currency": self.currency,
            "availability": self.availability,
            "observed_at": utc_timestamp(self.observed_at),
        }


def inventory_history(conn: Connection, tenant_id: str, catalog_id: str) -> list[InventoryObservation]:
    """Every accepted observation of the catalog's listings, by listing and revision."""
    with conn.cursor(row_factory=class_row(InventoryObservation)) as cur:
        return cur.execute(
            """SELECT listing_id, listing_revision, price, currency, availability, observed_at
               FROM resolver.inventory_observation WHERE tenant_id = %s AND catalog_id = %s
               ORDER BY listing_id, listing_revision""",
            (tenant_id, catalog_id),
        ).fetchall()


def _record_observation(conn: Connection, tenant_id: str, listing: ListingState) -> None:
    conn.execute(
        """INSERT INTO resolver.inventory_observation (tenant_id, catalog_id, listing_id, listing_revision, price,
               currency, availability, observed_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            tenant_id,
            listing.catalog_id,
            listing.listing_id,
            listing.revision,
            listing.price,
            listing.currency,
            listing.availability,
            listing.observed_at,
        ),
    )


def write_listing(conn: Connection, tenant_id: str, listing: ListingState, now: datetime) -> None:
    """Write the listing's new revision, and append the inventory it carries to the history."""
    _record_observation(conn, tenant_id, listing)
    values = (
        listing.url,
        listing.title,
        listing.price,
        listing.currency,
        listing.availability,
        listing.observed_at,
        listing.capture_id,
        now,
    )
    if listing.revision == 1:
        conn.execute(
            """INSERT INTO resolver.listing (tenant_id, catalog_id, listing_id, source_id, natural_key,
                   native_record_id, revision, url, title, price, currency, availability, observed_at, capture_id,
                   updated_at)
               VALUES (%s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s, %s, %s, %s, %s)""",
            (
                tenant_id,
                listing.catalog_id,
                listing.listing_id,
                listing.source_id,
                listing.natural_key,
                listing.native_record_id,
                *values,
            ),
        )
        return
    _expect_one(
        returned_rows(
            conn,
            """UPDATE resolver.listing SET revision = %s, url = %s, title = %s, price = %s, currency = %s,
                   availability = %s, observed_at = %s, capture_id = %s, updated_at = %s
               WHERE tenant_id = %s AND listing_id = %s AND revision = %s
               RETURNING revision""",
            (listing.revision, *values, tenant_id, listing.listing_id, listing.revision - 1),
        ),
        f"listing {listing.listing_id}",
    )


def get_mapping(conn: Connection, tenant_id: str, listing_id: str) -> MappingState | None:
    return send_get_mapping(conn, tenant_id, listing_id)()


def send_get_mapping(conn: Connection, tenant_id: str, listing_id: str) -> Callable[[], MappingState | None]:
    """``get_mapping`` in two steps: the query is sent now and its row read when the returned function is called
    (in pipeline mode, together with every statement sent in between)."""
    cur = conn.cursor(row_factory=class_row(MappingState))
    cur.execute(
        """SELECT listing_id, catalog_id, item_id, revision, decision_id
           FROM resolver.listing_mapping WHERE tenant_id = %s AND listing_id = %s""",
        (tenant_id, listing_id),
    )
    return _fetch_one(cur)


def send_find_mapping(
    conn: Connection, tenant_id: str, source_id: str, natural_key: str
) -> Callable[[], MappingState | None]:
    """The current mapping of the listing ``find_listing`` finds (None when there is no such listing or it is
    unmapped), in two steps like ``send_find_listing``, so both travel in one round trip."""
    cur = conn.cursor(row_factory=class_row(MappingState))
    cur.execute(
        """SELECT m.listing_id, m.catalog_id, m.item_id, m.revision, m.decision_id
           FROM resolver.listing l
           JOIN resolver.listing_mapping m ON m.tenant_id = l.tenant_id AND m.listing_id = l.listing_id
           WHERE l.tenant_id = %s AND l.source_id = %s AND l.natural_key = %s""",
        (tenant_id, source_id, natural_key),
    )
    return _fetch_one(cur)


_Row = TypeVar("_Row")


def _fetch_one(cur: Cursor[_Row]) -> Callable[[], _Row | None]:
    def fetched() -> _Row | None:
        with cur:
            return cur.fetchone()

    return fetched


def next_mapping(
    current: MappingState | None, listing: ListingState, item_id: str, decision_id: str
) -> MappingState:
    return MappingState(
        listing_id=listing.listing_id,
        catalog_id=listing.catalog_id,
        item_id=item_id,
        revision=current.revision + 1 if current else 1,
        decision_id=decision_id,
    )


def write_mapping(conn: Connection, tenant_id: str, mapping: MappingState, now: datetime) -> None:
    """INV-01: the primary key is the listing, so this replaces the one current mapping or creates it."""
    if mapping.revision == 1:
        conn.execute(
            """INSERT INTO resolver.listing_mapping (tenant_id, catalog_id, listing_id, item_id, revision,
                   decision_id, updated_at)
               VALUES (%s, %s, %s, %s, 1, %s, %s)""",
            (tenant_id, mapping.catalog_id, mapping.listing_id, mapping.item_id, mapping.decision_id, now),
        )
        return
    _expect_one(
        returned_rows(
            conn,
            """UPDATE resolver.listing_mapping SET item_id = %s, revision = %s, decision_id = %s, updated_at = %s
               WHERE tenant_id = %s AND listing_id = %s AND revision = %s
               RETURNING revision""",
            (
                mapping.item_id,
                mapping.revision,
                mapping.decision_id,
                now,
                tenant_id,
                mapping.listing_id,
                mapping.revision - 1,
            ),
        ),
        f"mapping of {mapping.listing_id}",
    )


def _expect_one(rowcount: int, what: str) -> None:
    if rowcount != 1:
        raise RuntimeError(f"{what} changed outside the stream cursor lock")


@dataclass(frozen=True, slots=True)
class ItemVersion:
    item_id: str
    revision: int
    status: str


def item_versions(conn: Connection, tenant_id: str, item_ids: list[str]) -> dict[str, ItemVersion]:
    """The current revision and status of each item (identity matches report them; INV-07 needs the status)."""
    with conn.cursor(row_factory=class_row(ItemVersion)) as cur:
        rows = cur.execute(
            "SELECT item_id, revision, status FROM resolver.catalog_item WHERE tenant_id = %s AND item_id = ANY(%s)",
            (tenant_id, item_ids),
        ).fetchall()
    return {row.item_id: row for row in rows}


@dataclass(frozen=True, slots=True)
class ItemSummary:
    item_id: str
    title: str | None
    brand: str | None


def trigram_available(conn: Connection) -> bool:
    """Whether migration 0014_trgm found ``pg_trgm`` on this server (the embedded build does not ship it)."""
    row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'").fetchone()
    return row is not None


def active_items_near_title(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    title_key: str,
    model_tokens: list[str],
    *,
    limit: int,
) -> list[ItemSummary]:
    """Active items (INV-07) nearest to ``title_key`` by trigram distance (an ordered scan of the GiST index of
    0014_trgm: ordering by the distance alone, a second sort key would make it read and sort the whole catalog),
    plus the active items whose normalized title contains one of ``model_tokens`` (by item id; the GIN trigram
    index of 0030_model_token_index serves the substring match where few titles hold the token); at most
    ``limit`` of each. Needs ``pg_trgm`` (``trigram_available``)."""
    patterns = [f"%{token}%" for token in model_tokens]
    with conn.cursor(row_factory=class_row(ItemSummary)) as cur:
        return cur.execute(
            """(SELECT item_id, title, brand FROM resolver.catalog_item
                WHERE tenant_id = %(t)s AND catalog_id = %(c)s AND status = 'active'
                ORDER BY title_key OPERATOR(public.<->) %(key)s LIMIT %(n)s)
               UNION
               (SELECT item_id, title, brand FROM resolver.catalog_item
                WHERE tenant_id = %(t)s AND catalog_id = %(c)s AND status = 'active'
                  AND title_key LIKE ANY(%(patterns)s)
                ORDER BY item_id LIMIT %(n)s)""",
            {"t": tenant_id, "c": catalog_id, "key": title_key, "patterns": patterns, "n": limit},
        ).fetchall()


def active_item_summaries(
    conn: Connection, tenant_id: str, catalog_id: str, *, limit: int
) -> list[ItemSummary]:
    """Active items (INV-07) by item id, at most ``limit``: the candidate scan where ``pg_trgm`` is missing."""
    with conn.cursor(row_factory=class_row(ItemSummary)) as cur:
        return cur.execute(
            """SELECT item_id, title, brand FROM resolver.catalog_item
               WHERE tenant_id = %s AND catalog_id = %s AND status = 'active'
               ORDER BY item_id LIMIT %s""",
            (tenant_id, catalog_id, limit),
        ).fetchall()


def active_items(conn: Connection, tenant_id: str, catalog_id: str) -> list[ItemState]:
    """Every active item of the catalog at its current revision (an operator release)."""
    return items_with_status(conn, tenant_id, catalog_id, "active")


def items_with_status(conn: Connection, tenant_id: str, catalog_id: str, status: str) -> list[ItemState]:
    """Every item of the catalog with ``status`` (active, retired) at its current revision, by item id."""
    with conn.cursor(row_factory=class_row(ItemState)) as cur:
        return cur.execute(
            """SELECT item_id, catalog_id, revision, status, profile, title, brand, identifiers, attributes,
                      merged_into
               FROM resolver.catalog_item WHERE tenant_id = %s AND catalog_id = %s AND status = %s
               ORDER BY item_id""",
            (tenant_id, catalog_id, status),
        ).fetchall()


def listings_of_item(
    conn: Connection, tenant_id: str, item_id: str
) -> list[tuple[ListingState, MappingState]]:
    """Every listing currently mapped to ``item_id``, with that mapping, by listing id (a merge or split moves
    them; index ``listing_mapping_item``)."""
    with conn.cursor(row_factory=class_row(MappingState)) as cur:
        mappings = cur.execute(
            """SELECT listing_id, catalog_id, item_id, revision, decision_id FROM resolver.listing_mapping
               WHERE tenant_id = %s AND item_id = %s ORDER BY listing_id""",
            (tenant_id, item_id),
        ).fetchall()
    return _with_listings(conn, tenant_id, mappings)


def mapped_listings(
    conn: Connection, tenant_id: str, catalog_id: str
) -> list[tuple[ListingState, MappingState]]:
    """Every listing of the catalog with its current mapping (INV-01: at most one), by listing id."""
    with conn.cursor(row_factory=class_row(MappingState)) as cur:
        mappings = cur.execute(
            """SELECT listing_id, catalog_id, item_id, revision, decision_id FROM resolver.listing_mapping
               WHERE tenant_id = %s AND catalog_id = %s ORDER BY listing_id""",
            (tenant_id, catalog_id),
        ).fetchall()
    return _with_listings(conn, tenant_id, mappings)


def _with_listings(
    conn: Connection, tenant_id: str, mappings: list[MappingState]
) -> list[tuple[ListingState, MappingState]]:
    with conn.cursor(row_factory=class_row(ListingState)) as cur:
        listings = {
            listing.listing_id: listing
            for listing in cur.execute(
                """SELECT listing_id, catalog_id, source_id, natural_key, native_record_id, revision, url, title,
                          price, currency, availability, observed_at, capture_id
                   FROM resolver.listing WHERE tenant_id = %s AND listing_id = ANY(%s)""",
                (tenant_id, [m.listing_id for m in mappings]),
            )
        }
    return [(listings[m.listing_id], m) for m in mappings]


@dataclass(frozen=True, slots=True)
class ItemCard:
    """What a reviewer needs to recognise a candidate item."""

    item_id: str
    status: str
    title: str | None
    brand: str
    identifiers: dict[str, Any]


def item_cards(conn: Connection, tenant_id: str, item_ids: list[str]) -> dict[str, ItemCard]:
    with conn.cursor(row_factory=class_row(ItemCard)) as cur:
        rows = cur.execute(
            """SELECT item_id, status, title, brand, identifiers FROM resolver.catalog_item
               WHERE tenant_id = %s AND item_id = ANY(%s)""",
            (tenant_id, item_ids),
        ).fetchall()
    return {row.item_id: row for row in rows}

"""A reviewer's corrections of the catalog's identity (AW-01): merge a duplicate item into another, or split
listings off an item into a new one. Each is one decision through ``DecisionWriter``; an Idempotency-Key returns
the first result, as for every operator decision.

- **Merge** ``item_id`` into ``into``: every listing mapped to ``item_id`` is remapped to ``into``
  (``listing_mapping.corrected``), then ``item_id`` is retired naming its survivor (``catalog_item.merged``), and
  the strong identifiers that named it name the survivor from now on. The next release (in the same transaction on
  a catalog that publishes automatically) removes the merged item and redirects its public id to the survivor.
  Refused, with nothing written, in this order: an item the tenant does not have (NOT_FOUND), an item of
  another catalog (CROSS_CATALOG), the same item twice (MERGE_INTO_SELF), a retired or merged item on either side
  (ITEM_RETIRED).
- **Split** ``listing_ids`` off ``item_id``: a new item is created (``catalog_item.created``; the split item's
  profile, the title, brand and identifiers the reviewer gives, attributes checked against the profile, INV-02)
  and each listing is remapped to it. Splitting every listing away is allowed: the split item stays active, with
  no listing, until a reviewer merges or retires it. Refused, with nothing written: no listing
  (NOTHING_TO_SPLIT), a listing not currently on the item (LISTING_NOT_ON_ITEM), an unknown or foreign item
  (NOT_FOUND, CROSS_CATALOG), a retired item (ITEM_RETIRED), a new item id already taken (ITEM_EXISTS), a strong
  identifier of another item (IDENTIFIER_CONFLICT).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from prw_platform.clock import Clock
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection
from prw_platform.plugins.types import AttributeDefinition, NormalizedAttribute
from prw_platform.resolver.decisions import facts, identity, invariants, releases
from prw_platform.resolver.decisions.catalog_decisions import current_policy, replayed_decision
from prw_platform.resolver.decisions.commands import EventRef, ItemFacts
from prw_platform.resolver.decisions.errors import (
    CrossCatalogItems,
    ItemAlreadyRetired,
    ItemExists,
    ItemNotFound,
    ListingNotOnItem,
    MergeIntoItself,
    NothingToSplit,
)
from prw_platform.resolver.decisions.events import EventBatch
from prw_platform.resolver.decisions.facts import ItemState, ListingState, MappingState
from prw_platform.resolver.decisions.records import DecisionRecord, request_fingerprint
from prw_platform.resolver.decisions.writer import DecisionWriter

MERGE_ITEMS = "merge_items"
SPLIT_ITEM = "split_item"

#: profile pin -> its attribute definitions (INV-02); the decision service's installed profiles.
ProfileDefinitions = Callable[[str], Mapping[str, AttributeDefinition]]


@dataclass(frozen=True, slots=True)
class MergeItems:
    """Merge ``item_id`` (a duplicate) into ``into``, which survives (``POST /v1/items/{item_id}/merge``)."""

    catalog_id: str
    item_id: str
    into: str
    actor: str
    rationale: str
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class SplitItem:
    """Move ``listing_ids`` off ``item_id`` to a new item (``POST /v1/items/{item_id}/split``). ``brand`` None
    keeps the split item's brand; ``new_item_id`` None lets the resolver name the new item."""

    catalog_id: str
    item_id: str
    listing_ids: tuple[str, ...]
    title: str
    actor: str
    rationale: str
    brand: str | None = None
    gtin: str | None = None
    mpn: str | None = None
    attributes: tuple[NormalizedAttribute, ...] = ()
    new_item_id: str | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class ItemsMerged:
    decision_id: str
    catalog_id: str
    item_id: str
    into: str
    #: The merged item's revision that retired it.
    revision: int
    #: The listings remapped to the survivor, by listing id.
    listings: tuple[str, ...]
    #: ``listing_mapping.corrected`` per listing, ``catalog_item.merged``, then ``release.authorized`` when the
    #: catalog publishes automatically.
    events: tuple[EventRef, ...]
    created_at: datetime
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class ItemSplit:
    decision_id: str
    catalog_id: str
    item_id: str
    new_item_id: str
    #: The listings moved to the new item, by listing id.
    listings: tuple[str, ...]
    #: ``catalog_item.created``, ``listing_mapping.corrected`` per listing, then ``release.authorized`` when the
    #: catalog publishes automatically.
    events: tuple[EventRef, ...]
    created_at: datetime
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class _Move:
    """One listing remapped by the decision: its current mapping and the one that replaces it."""

    listing: ListingState
    previous: MappingState
    mapping: MappingState


def merge_items(conn: Connection, cmd: MergeItems, stream: StreamKey, clock: Clock) -> ItemsMerged:
    """AW-01 for a merge, inside the caller's transaction (``app.tenant_id`` = the stream's tenant)."""
    writer = DecisionWriter.lock(conn, stream, clock)
    fingerprint = request_fingerprint(cmd)
    replayed = replayed_decision(conn, stream.tenant_id, cmd.idempotency_key, fingerprint)
    if replayed is not None:
        return _merged_of(replayed, replayed=True)
    merged = _catalog_item(conn, stream, cmd.item_id)
    if cmd.item_id == cmd.into:
        raise MergeIntoItself(f"item {cmd.item_id} cannot be merged into itself")
    survivor = _catalog_item(conn, stream, cmd.into)
    _require_active(merged, "merged")
    _require_active(survivor, "merged into")
    tenant = stream.tenant_id
    moves = _moves(writer, merged, survivor, facts.listings_of_item(conn, tenant, merged.item_id))
    retired = replace(
        merged, revision=merged.revision + 1, status=facts.RETIRED, merged_into=survivor.item_id
    )
    release = None
    if writer.publishes_automatically(current_policy(conn, tenant, stream.catalog_id)):
        items, listings = releases.unreleased(
            conn, tenant, [survivor], [releases.ReleasedListing(m.listing, m.mapping) for m in moves]
        )
        release = writer.release(items=items, listings=listings, merged_items=(retired,))

    def events(batch: EventBatch) -> None:
        for move in moves:
            batch.mapping_changed(move.mapping, merged.item_id, survivor, move.listing)
        batch.item_merged(retired, survivor)

    def write_facts() -> None:
        for move in moves:
            facts.write_mapping(conn, tenant, move.mapping, writer.now)
        facts.write_merge(conn, tenant, retired, writer.now)
        identity.reassign_identifiers(conn, tenant, stream.catalog_id, merged.item_id, survivor.item_id)

    record = writer.write(
        MERGE_ITEMS,
        cmd.actor,
        cmd.rationale,
        {
            "item_id": merged.item_id,
            "into": survivor.item_id,
            "revision": retired.revision,
            "listings": [move.listing.listing_id for move in moves],
        },
        events=events,
        facts=write_facts,
        release=release,
        prior_decisions=tuple(dict.fromkeys(move.previous.decision_id for move in moves)),
        item_id=merged.item_id,
        idempotency_key=cmd.idempotency_key,
        request_sha256=fingerprint,
    )
    return _merged_of(record, replayed=False)


def split_item(
    conn: Connection,
    cmd: SplitItem,
    stream: StreamKey,
    clock: Clock,
    definitions: ProfileDefinitions | None = None,
) -> ItemSplit:
    """AW-01 for a split, inside the caller's transaction. ``definitions`` checks the new item's attributes
    against the split item's profile (INV-02); without it only their shape is checked."""
    writer = DecisionWriter.lock(conn, stream, clock)
    fingerprint = request_fingerprint(cmd)
    replayed = replayed_decision(conn, stream.tenant_id, cmd.idempotency_key, fingerprint)
    if replayed is not None:
        return _split_of(replayed, replayed=True)
    wanted = tuple(dict.fromkeys(cmd.listing_ids))
    if not wanted:
        raise NothingToSplit(f"a split of {cmd.item_id} names no listing")
    source = _catalog_item(conn, stream, cmd.item_id)
    _require_active(source, "split")
    tenant = stream.tenant_id
    on_item = {
        listing.listing_id: (listing, mapping)
        for listing, mapping in facts.listings_of_item(conn, tenant, source.item_id)
    }
    if missing := [listing_id for listing_id in wanted if listing_id not in on_item]:
        raise ListingNotOnItem(
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not on item {source.item_id}"
        )
    new_item = _new_item(conn, cmd, stream, source, definitions)
    moves = _moves(writer, source, new_item, [on_item[listing_id] for listing_id in wanted])
    keys = identity.identifier_keys(cmd.gtin, new_item.brand, cmd.mpn)
    if keys:
        identity.ensure_identifiers_free(conn, tenant, stream.catalog_id, keys)
    release = None
    if writer.publishes_automatically(current_policy(conn, tenant, stream.catalog_id)):
        release = writer.release(
            items=(new_item,), listings=tuple(releases.ReleasedListing(m.listing, m.mapping) for m in moves)
        )

    def events(batch: EventBatch) -> None:
        batch.item_created(new_item)
        for move in moves:
            batch.mapping_changed(move.mapping, source.item_id, new_item, move.listing)

    def write_facts() -> None:
        facts.insert_item(conn, tenant, new_item, writer.now)
        identity.insert_identifiers(conn, tenant, stream.catalog_id, new_item.item_id, keys)
        for move in moves:
            facts.write_mapping(conn, tenant, move.mapping, writer.now)

    record = writer.write(
        SPLIT_ITEM,
        cmd.actor,
        cmd.rationale,
        {
            "item_id": source.item_id,
            "new_item_id": new_item.item_id,
            "listings": [move.listing.listing_id for move in moves],
        },
        events=events,
        facts=write_facts,
        release=release,
        prior_decisions=tuple(dict.fromkeys(move.previous.decision_id for move in moves)),
        item_id=new_item.item_id,
        idempotency_key=cmd.idempotency_key,
        request_sha256=fingerprint,
    )
    return _split_of(record, replayed=False)


def _catalog_item(conn: Connection, stream: StreamKey, item_id: str) -> ItemState:
    item = facts.get_item(conn, stream.tenant_id, item_id)
    if item is None:
        raise ItemNotFound(f"no item {item_id} in tenant {stream.tenant_id}")
    if item.catalog_id != stream.catalog_id:
        raise CrossCatalogItems(
            f"item {item_id} belongs to catalog {item.catalog_id}, not {stream.catalog_id}"
        )
    return item


def _require_active(item: ItemState, role: str) -> None:
    if item.merged_into is not None:
        raise ItemAlreadyRetired(
            f"item {item.item_id} was merged into {item.merged_into}: it cannot be {role}"
        )
    if item.status != facts.ACTIVE:
        raise ItemAlreadyRetired(f"item {item.item_id} is {item.status}: it cannot be {role}")


def _new_item(
    conn: Connection,
    cmd: SplitItem,
    stream: StreamKey,
    source: ItemState,
    definitions: ProfileDefinitions | None,
) -> ItemState:
    """The split's new item: the split item's profile, the reviewer's facts (INV-02 on its attributes)."""
    if cmd.attributes:
        invariants.check_attributes(cmd.attributes, definitions(source.profile) if definitions else None)
    item_id = cmd.new_item_id or f"itm_{uuid.uuid4().hex[:24]}"
    if facts.get_item(conn, stream.tenant_id, item_id) is not None:
        raise ItemExists(f"item {item_id} already exists")
    brand = source.brand if cmd.brand is None else cmd.brand
    item_facts = ItemFacts(source.profile, cmd.title, brand, cmd.gtin, cmd.mpn, cmd.attributes)
    return facts.new_item(item_id, stream.catalog_id, item_facts)


def _moves(
    writer: DecisionWriter,
    origin: ItemState,
    target: ItemState,
    pairs: list[tuple[ListingState, MappingState]],
) -> list[_Move]:
    """Each listing's next mapping, from ``origin`` to ``target`` (INV-07: exists, active, the listing's
    catalog)."""
    moves = []
    for listing, previous in pairs:
        invariants.check_mapping_target(target, target.item_id, listing)
        moves.append(
            _Move(
                listing, previous, facts.next_mapping(previous, listing, target.item_id, writer.decision_id)
            )
        )
    return moves


def _merged_of(record: DecisionRecord, *, replayed: bool) -> ItemsMerged:
    details = record.details
    return ItemsMerged(
        decision_id=record.decision_id,
        catalog_id=record.stream.catalog_id,
        item_id=str(details["item_id"]),
        into=str(details["into"]),
        revision=int(details["revision"]),
        listings=tuple(str(listing) for listing in details["listings"]),
        events=record.events,
        created_at=record.created_at,
        replayed=replayed,
    )


def _split_of(record: DecisionRecord, *, replayed: bool) -> ItemSplit:
    details = record.details
    return ItemSplit(
        decision_id=record.decision_id,
        catalog_id=record.stream.catalog_id,
        item_id=str(details["item_id"]),
        new_item_id=str(details["new_item_id"]),
        listings=tuple(str(listing) for listing in details["listings"]),
        events=record.events,
        created_at=record.created_at,
        replayed=replayed,
    )

"""Load a snapshot export into a rebuild's shadow generation (if_projection_bootstrap "Load shadow"): its
aggregate revisions, and W as its starting contiguous applied position.

Each object is JSON Lines, one ``{"aggregate": {type, id, revision}, "payload": {...}}`` per aggregate, validated
with the same event vocabulary the consumer uses (``contracts.VOCABULARY``): a line that does not parse fails the
load (nothing is swapped). Rows go through the owner modules' set-based upserts, a chunk per statement, so a load is
idempotent (the product upserts by aggregate revision) and costs one round trip per chunk and table.

The ``release`` object holds the revisions the catalog's current public release publishes, each with the fields
it published (``resolver.released_*.fields``, migration 0020); their public snapshot is rebuilt from those fields
through the release path itself (``releases.apply_release``), so the shadow's public tables are what the consumer
would have written, however far a manual catalog's accepted state has moved since its last release. A row released
before migration 0020 has no stored fields: it is rebuilt from the exported state of that revision, and if the
aggregate changed since (manual release policy) the load fails clearly with ``RELEASE_SNAPSHOT_UNAVAILABLE``
(release the catalog, then rebuild).

The ``inventory_history`` object holds every accepted observation of each listing up to W (price, currency,
availability, observed_at, the listing revision that carried it; the resolver keeps them since migration 0021):
it is loaded into the shadow's inventory history as the live consumer recorded it from each ``listing.observed``,
so a rebuilt generation's history equals the live one; the tail adds the observations after W. (An export without
the object, of a resolver before 0021, starts the history with each listing's revision at W.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from prw_platform.contracts import (
    VOCABULARY,
    AcceptedChange,
    ItemPayload,
    ListingPayload,
    MappingPayload,
    ReleasePayload,
    SchemaViolation,
)
from prw_platform.contracts.messages import AggregateRevision
from prw_platform.db.database import Connection, Database
from prw_platform.product.consumer.merchant_projection import (
    MERCHANT_FACTS,
    HistoryRow,
    record_history,
    record_observations,
    upsert_merchant_facts,
)
from prw_platform.product.consumer.picture_projection import PICTURE_FACTS, upsert_picture_facts
from prw_platform.product.consumer.projection import (
    AppliedRow,
    upsert_applied_revisions,
    upsert_items,
    upsert_listings,
    upsert_mappings,
)
from prw_platform.product.events import AggregateKey, ProductEvent
from prw_platform.product.releases import apply_release
from prw_platform.product.scopes import ProjectedScope

#: Rows per statement.
CHUNK: Final = 5_000

#: aggregate type -> (event type for revision 1, event type for later revisions)
_EVENT_TYPES: Final = {
    "catalog_item": ("catalog_item.created", "catalog_item.updated"),
    "listing": ("listing.observed", "listing.observed"),
    "listing_mapping": ("listing_mapping.created", "listing_mapping.corrected"),
    "merchant": ("merchant.created", "merchant.updated"),
    "merchant_source": ("merchant.source_bound", "merchant.source_bound"),
    "shipping_policy": ("shipping_policy.accepted", "shipping_policy.accepted"),
    "item_pictures": ("item_pictures.saved", "item_pictures.saved"),
    # A deleted class is exported as its deletion (``_event_type``).
    "product_class": ("product_class.saved", "product_class.saved"),
}


class SnapshotInvalid(Exception):
    """An export object that cannot be loaded: nothing is swapped."""

    def __init__(self, message: str, *, code: str = "SNAPSHOT_INVALID") -> None:
        super().__init__(message)
        self.code = code


@dataclass
class LoadedState:
    """What the load keeps in memory for the release snapshot: the exported payload of each aggregate."""

    items: dict[str, tuple[int, ItemPayload]]
    listings: dict[str, tuple[int, ListingPayload]]
    merchant_facts: dict[tuple[str, str], ProductEvent]
    #: Seed 004: item pictures and product classes, by (aggregate type, id).
    picture_facts: dict[tuple[str, str], ProductEvent] = field(default_factory=dict)
    rows: int = 0


def snapshot_events(
    aggregate: str, data: bytes, *, scope: ProjectedScope, position: int, export_id: str
) -> Iterator[ProductEvent]:
    """The object's lines as events at position W (their state is the state after W)."""
    if aggregate not in _EVENT_TYPES:
        raise SnapshotInvalid(f"unknown export object {aggregate!r}")
    first, later = _EVENT_TYPES[aggregate]
    accepted_at = datetime.now(UTC)
    for number, line in enumerate(data.decode().splitlines(), start=1):
        try:
            entry = json.loads(line)
            agg = entry["aggregate"]
            revision = int(agg["revision"])
            key = AggregateRevision(type=agg["type"], id=agg["id"], revision=revision)
            event_type = VOCABULARY[
                _event_type(aggregate, entry["payload"], first if revision == 1 else later)
            ]
            payload = event_type.parse(key, entry["payload"])
        except (ValueError, KeyError, TypeError, SchemaViolation) as exc:
            raise SnapshotInvalid(f"{aggregate} line {number}: {exc}") from exc
        change = AcceptedChange.model_construct(
            event_id=f"snapshot_{export_id}_{aggregate}_{number}",
            tenant_id=scope.tenant_id,
            catalog_id=scope.catalog_id,
            history_epoch=scope.history_epoch,
            sequence=position,
            type=event_type.name,
            aggregate=key,
            dependencies=(),
            accepted_at=accepted_at,
            payload=entry["payload"],
        )
        yield ProductEvent(change=change, payload=payload)


def _event_type(aggregate: str, payload: dict[str, Any], default: str) -> str:
    """A product class exported as its deletion carries only its id (``product_class.deleted``); a merged item
    names its survivor (``catalog_item.merged``)."""
    if aggregate == "product_class" and "name" not in payload:
        return "product_class.deleted"
    if aggregate == "catalog_item" and "merged_into" in payload:
        return "catalog_item.merged"
    return default


def load_object(
    db: Database,
    scope: ProjectedScope,
    aggregate: str,
    events: Iterable[ProductEvent],
    state: LoadedState,
    *,
    on_chunk: Callable[[int], None] | None = None,
) -> None:
    """Write one object's events into ``scope.serving_generation`` (the shadow), a chunk per transaction."""
    chunk: list[ProductEvent] = []
    for event in events:
        chunk.append(event)
        if len(chunk) >= CHUNK:
            _write(db, scope, chunk, state)
            if on_chunk is not None:
                on_chunk(len(chunk))
            chunk = []
    if chunk:
        _write(db, scope, chunk, state)
        if on_chunk is not None:
            on_chunk(len(chunk))


def _write(db: Database, scope: ProjectedScope, events: list[ProductEvent], state: LoadedState) -> None:
    items: list[tuple[ProductEvent, ItemPayload]] = []
    listings: list[tuple[ProductEvent, ListingPayload]] = []
    mappings: list[tuple[ProductEvent, MappingPayload]] = []
    facts: dict[str, list[ProductEvent]] = {}
    pictures: dict[str, list[ProductEvent]] = {}
    for event in events:
        payload = event.payload
        if isinstance(payload, ItemPayload):
            items.append((event, payload))
            state.items[payload.item] = (event.revision, payload)
        elif isinstance(payload, ListingPayload):
            listings.append((event, payload))
            state.listings[payload.listing] = (event.revision, payload)
        elif isinstance(payload, MappingPayload):
            mappings.append((event, payload))
        elif event.aggregate.type in MERCHANT_FACTS:
            facts.setdefault(event.aggregate.type, []).append(event)
            state.merchant_facts[(event.aggregate.type, event.aggregate.id)] = event
        elif event.aggregate.type in PICTURE_FACTS:
            pictures.setdefault(event.aggregate.type, []).append(event)
            state.picture_facts[(event.aggregate.type, event.aggregate.id)] = event
    applied = [AppliedRow(e.aggregate, e.revision, e.position) for e in events]

    def work(conn: Connection) -> None:
        with conn.pipeline():
            upsert_applied_revisions(conn, scope, applied)
            upsert_items(conn, scope, items)
            upsert_listings(conn, scope, listings)
            upsert_mappings(conn, scope, mappings)
            for aggregate_type, latest in facts.items():
                upsert_merchant_facts(conn, scope, aggregate_type, latest)
            for aggregate_type, latest in pictures.items():
                upsert_picture_facts(conn, scope, aggregate_type, latest)
            record_observations(conn, scope, listings)

    db.run(work, tenant_id=scope.tenant_id)
    state.rows += len(events)


#: The object of the inventory history (not an aggregate: one line per observation).
INVENTORY_HISTORY: Final = "inventory_history"


def load_inventory_history(
    db: Database,
    scope: ProjectedScope,
    data: bytes,
    *,
    position: int,
    on_chunk: Callable[[int], None] | None = None,
) -> int:
    """Load the ``inventory_history`` object into the shadow, a chunk per transaction; the observations loaded."""
    rows: list[HistoryRow] = []
    for number, line in enumerate(data.decode().splitlines(), start=1):
        try:
            entry = json.loads(line)
            row = HistoryRow(
                listing=str(entry["listing"]),
                listing_revision=int(entry["listing_revision"]),
                price=_optional_text(entry.get("price")),
                currency=_optional_text(entry.get("currency")),
                availability=_optional_text(entry.get("availability")),
                observed_at=datetime.fromisoformat(entry["observed_at"]).isoformat(),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SnapshotInvalid(f"inventory_history line {number}: {exc}") from exc
        if row.listing_revision < 1:
            raise SnapshotInvalid(f"inventory_history line {number}: listing_revision must be positive")
        rows.append(row)
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]

        def work(conn: Connection, chunk: list[HistoryRow] = chunk) -> None:
            record_history(conn, scope, chunk, position)

        db.run(work, tenant_id=scope.tenant_id)
        if on_chunk is not None:
            on_chunk(len(chunk))
    return len(rows)


def _optional_text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"expected a string or null, got {type(value).__name__}")


def load_release(
    db: Database,
    scope: ProjectedScope,
    data: bytes,
    state: LoadedState,
    *,
    position: int,
    export_id: str,
) -> int:
    """Rebuild the current public release in the shadow generation; its publication revision (0: none yet)."""
    lines = data.decode().splitlines()
    if not lines:
        return 0
    try:
        release = json.loads(lines[0])
    except ValueError as exc:
        raise SnapshotInvalid(f"release object: {exc}") from exc
    publication = release.get("publication_revision")
    if not publication:
        return 0
    # Each public row keeps the publication revision of the release that last published it (the release object
    # holds it per row): one release payload per publication revision, applied in order, the current one last
    # (it sets the release pointer).
    current = int(publication)
    by_publication = _release_payloads(release, state, current)

    def work(conn: Connection) -> None:
        with conn.pipeline():
            for revision, payload in sorted(by_publication.items()):
                key = AggregateRevision(type="release", id=payload.release, revision=revision)
                change = AcceptedChange.model_construct(
                    event_id=f"snapshot_{export_id}_release_{revision}",
                    tenant_id=scope.tenant_id,
                    catalog_id=scope.catalog_id,
                    history_epoch=scope.history_epoch,
                    sequence=position,
                    type="release.authorized",
                    aggregate=key,
                    dependencies=(),
                    accepted_at=datetime.now(UTC),
                    payload={},
                )
                apply_release(conn, scope, ProductEvent(change=change, payload=payload), payload)
            # The next release of the tail (revision n + 1) waits for this one: record it as applied.
            release_key = AggregateKey("release", str(release["release"]))
            upsert_applied_revisions(conn, scope, [AppliedRow(release_key, current, position)])

    db.run(work, tenant_id=scope.tenant_id)
    return int(publication)


def _release_payloads(release: dict[str, Any], state: LoadedState, current: int) -> dict[int, ReleasePayload]:
    """The release object as ``release.authorized`` payloads, one per publication revision its rows carry (the
    current one always present), from the exported state of the released revisions."""

    def unavailable(kind: str, key: str, revision: int, exported: int | None) -> SnapshotInvalid:
        return SnapshotInvalid(
            f"the release publishes {kind} {key} at revision {revision}, the export holds "
            f"{'none' if exported is None else f'revision {exported}'}: release the catalog, then rebuild",
            code="RELEASE_SNAPSHOT_UNAVAILABLE",
        )

    groups: dict[int, dict[str, list[dict[str, Any]]]] = {}

    def group(entry: dict[str, Any], kind: str) -> list[dict[str, Any]]:
        revision = int(entry.get("publication_revision") or current)
        return groups.setdefault(revision, {}).setdefault(kind, [])

    groups[current] = {}
    for entry in release.get("items", []):
        if entry.get("merged_into") is not None:  # removed by a merge: its id redirects (migration 0026)
            group(entry, "merged_items").append(
                {"item": entry["item_id"], "revision": entry["revision"], "into": entry["merged_into"]}
            )
            continue
        if entry.get("fields") is not None:  # what the release published (migration 0020)
            group(entry, "items").append(
                {"item": entry["item_id"], "revision": entry["revision"], "fields": entry["fields"]}
            )
            continue
        exported = state.items.get(entry["item_id"])
        if exported is None or exported[0] != entry["revision"]:
            raise unavailable("item", entry["item_id"], entry["revision"], exported and exported[0])
        revision, item = exported
        if item.status == "retired":
            continue  # withdrawn: not in the public catalog
        fields = item.model_dump(mode="json", by_alias=True)
        fields.pop("status", None)
        group(entry, "items").append({"item": item.item, "revision": revision, "fields": fields})
    for entry in release.get("listings", []):
        if entry.get("fields") is not None:
            group(entry, "listings").append(
                {
                    "listing": entry["listing_id"],
                    "item": entry["item_id"],
                    "mapping_revision": entry["mapping_revision"],
                    "listing_revision": entry["listing_revision"],
                    "fields": entry["fields"],
                }
            )
            continue
        listing = state.listings.get(entry["listing_id"])
        if listing is None or listing[0] != entry["listing_revision"]:
            raise unavailable(
                "listing", entry["listing_id"], entry["listing_revision"], listing and listing[0]
            )
        group(entry, "listings").append(
            {
                "listing": entry["listing_id"],
                "item": entry["item_id"],
                "mapping_revision": entry["mapping_revision"],
                "listing_revision": entry["listing_revision"],
                "fields": listing[1].model_dump(mode="json", by_alias=True),
            }
        )

    def published(kind: str, key: str, entry: dict[str, Any]) -> dict[str, Any] | None:
        """The fields the release published (migration 0020), else the exported state at that revision; None for
        a class whose published revision is its deletion (not public)."""
        stored: dict[str, Any] | None = entry.get("fields")
        if stored is not None:
            return stored
        fact = _fact(state, kind, key, entry["revision"], unavailable)
        return None if fact.change.type == "product_class.deleted" else fact.change.payload

    for entry in release.get("merchants", []):
        shown = published("merchant", entry["merchant_id"], entry)
        group(entry, "merchants").append(
            {"merchant": entry["merchant_id"], "revision": entry["revision"], "fields": shown}
        )
    for entry in release.get("merchant_sources", []):
        shown = published("merchant_source", entry["source_id"], entry)
        assert shown is not None
        group(entry, "merchant_sources").append(
            {"source_id": entry["source_id"], "merchant": shown["merchant"], "revision": entry["revision"]}
        )
    for entry in release.get("shipping_policies", []):
        shown = published("shipping_policy", entry["merchant_id"], entry)
        group(entry, "shipping_policies").append(
            {"merchant": entry["merchant_id"], "revision": entry["revision"], "fields": shown}
        )
    for entry in release.get("item_pictures", []):
        shown = published("item_pictures", entry["item_id"], entry)
        group(entry, "item_pictures").append(
            {"item": entry["item_id"], "revision": entry["revision"], "fields": shown}
        )
    for entry in release.get("classes", []):
        shown = published("product_class", entry["class_id"], entry)
        if shown is None:
            continue  # the release that published this revision removed the class from the public catalog
        group(entry, "classes").append(
            {"class": entry["class_id"], "revision": entry["revision"], "fields": shown}
        )
    try:
        return {
            revision: ReleasePayload.model_validate(
                {
                    "release": release["release"],
                    "publication_revision": revision,
                    "items": rows.get("items", []),
                    "listings": rows.get("listings", []),
                    "merchants": rows.get("merchants", []),
                    "merchant_sources": rows.get("merchant_sources", []),
                    "shipping_policies": rows.get("shipping_policies", []),
                    "item_pictures": rows.get("item_pictures", []),
                    "classes": rows.get("classes", []),
                    "merged_items": rows.get("merged_items", []),
                }
            )
            for revision, rows in groups.items()
        }
    except ValueError as exc:
        raise SnapshotInvalid(f"release object: {exc}") from exc


def _fact(
    state: LoadedState,
    kind: str,
    key: str,
    revision: int,
    unavailable: Callable[[str, str, int, int | None], SnapshotInvalid],
) -> ProductEvent:
    fact = (state.picture_facts if kind in PICTURE_FACTS else state.merchant_facts).get((kind, key))
    if fact is None or fact.revision != revision:
        raise unavailable(kind, key, revision, None if fact is None else fact.revision)
    return fact

"""The accepted-change vocabulary as the product side reads it (docs/events.md), parsed before any transaction.

``parse_delivery`` validates the message against product.accepted-change.v1 and the payload against its event
type, and returns a ``ProductEvent``: the envelope, the typed full state, and the aggregate revisions that must
be applied first. Pure: no database, so every rule here has a unit test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prw_platform.contracts import AcceptedChange, SchemaViolation
from prw_platform.product.errors import SchemaInvalid, UnsupportedEventType

CATALOG_ITEM: Final = "catalog_item"
LISTING: Final = "listing"
LISTING_MAPPING: Final = "listing_mapping"
RELEASE: Final = "release"


class _Payload(BaseModel):
    # Full state per revision (docs/events.md); keys added later by the resolver are kept in the internal
    # projection and never reach a public serializer, which whitelists.
    model_config = ConfigDict(frozen=True, extra="allow")


class ItemPayload(_Payload):
    item: str = Field(min_length=1)
    profile: str = Field(min_length=1)
    status: Literal["active", "retired"]
    title: str | None = None
    brand: str | None = None
    identifiers: dict[str, str | None] = Field(default_factory=dict)
    attributes: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ListingPayload(_Payload):
    listing: str = Field(min_length=1)
    source_id: str = Field(min_length=1)
    url: str | None = None
    title: str | None = None
    price: str | None = None
    currency: str | None = None
    availability: str | None = None
    observed_at: str | None = None


class MappingPayload(_Payload):
    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    listing: str = Field(min_length=1)
    item: str = Field(min_length=1)
    previous_item: str | None = Field(default=None, alias="from")


class ReleasedItem(_Payload):
    item: str = Field(min_length=1)
    revision: int = Field(ge=1)
    fields: dict[str, Any]


class ReleasedListing(_Payload):
    listing: str = Field(min_length=1)
    item: str = Field(min_length=1)
    mapping_revision: int = Field(ge=1)
    listing_revision: int = Field(ge=1)
    fields: dict[str, Any]


class ReleasePayload(_Payload):
    release: str = Field(min_length=1)
    publication_revision: int = Field(ge=1)
    items: tuple[ReleasedItem, ...] = ()
    listings: tuple[ReleasedListing, ...] = ()


Payload = ItemPayload | ListingPayload | MappingPayload | ReleasePayload

#: docs/events.md: event type → (aggregate type, payload model, payload key that must equal aggregate.id).
VOCABULARY: Final[Mapping[str, tuple[str, type[Payload], str]]] = {
    "catalog_item.created": (CATALOG_ITEM, ItemPayload, "item"),
    "catalog_item.updated": (CATALOG_ITEM, ItemPayload, "item"),
    "listing.observed": (LISTING, ListingPayload, "listing"),
    "listing_mapping.created": (LISTING_MAPPING, MappingPayload, "listing"),
    "listing_mapping.corrected": (LISTING_MAPPING, MappingPayload, "listing"),
    "release.authorized": (RELEASE, ReleasePayload, "release"),
}


@dataclass(frozen=True, slots=True)
class AggregateKey:
    type: str
    id: str


@dataclass(frozen=True, slots=True)
class Requirement:
    """An aggregate that must be applied at ``revision`` or later before the event may apply (AW-04)."""

    aggregate: AggregateKey
    revision: int


@dataclass(frozen=True)
class ProductEvent:
    change: AcceptedChange
    payload: Payload

    @property
    def event_id(self) -> str:
        return self.change.event_id

    @property
    def position(self) -> int:
        return self.change.sequence

    @property
    def aggregate(self) -> AggregateKey:
        return AggregateKey(self.change.aggregate.type, self.change.aggregate.id)

    @property
    def revision(self) -> int:
        return self.change.aggregate.revision

    def requirements(self) -> tuple[Requirement, ...]:
        """The event's dependencies, plus, for a release, the previous release of the catalog.

        A release snapshot lists only the items and listings it publishes; the ones earlier releases published
        stay public. Applying release n before n - 1 would then lose n - 1's items when n - 1 arrives as a
        stale revision, so INV-08 requires releases to apply in revision order: n waits (parks) for n - 1."""
        explicit = tuple(
            Requirement(AggregateKey(dep.type, dep.id), dep.revision) for dep in self.change.dependencies
        )
        if self.aggregate.type == RELEASE and self.revision > 1:
            return (*explicit, Requirement(self.aggregate, self.revision - 1))
        return explicit


def parse_delivery(message: Mapping[str, Any]) -> ProductEvent:
    """Validate one queue message. Raises ``SchemaInvalid`` (DLQ SCHEMA_INVALID) or ``UnsupportedEventType``."""
    event_id = message.get("event_id") if isinstance(message, Mapping) else None
    try:
        change = AcceptedChange.from_message(dict(message))
    except (SchemaViolation, ValidationError) as exc:
        raise SchemaInvalid(str(exc), event_id=_text_or_none(event_id)) from exc
    return event_from_change(change)


def event_from_change(change: AcceptedChange) -> ProductEvent:
    entry = VOCABULARY.get(change.type)
    if entry is None:
        raise UnsupportedEventType(f"unknown event type {change.type!r}", event_id=change.event_id)
    aggregate_type, model, id_key = entry
    if change.aggregate.type != aggregate_type:
        raise SchemaInvalid(
            f"{change.type} must change a {aggregate_type}, not a {change.aggregate.type}",
            event_id=change.event_id,
        )
    try:
        payload = model.model_validate(change.payload)
    except ValidationError as exc:
        raise SchemaInvalid(f"{change.type} payload: {exc}", event_id=change.event_id) from exc
    if change.payload.get(id_key) != change.aggregate.id:
        raise SchemaInvalid(
            f"payload {id_key} {change.payload.get(id_key)!r} is not the aggregate {change.aggregate.id!r}",
            event_id=change.event_id,
        )
    if isinstance(payload, ReleasePayload) and payload.publication_revision != change.aggregate.revision:
        raise SchemaInvalid(
            "a release's publication_revision is its aggregate revision (docs/events.md)",
            event_id=change.event_id,
        )
    return ProductEvent(change=change, payload=payload)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None

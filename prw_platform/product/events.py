"""The accepted-change vocabulary as the product side reads it (docs/events.md), parsed before any transaction.

``parse_delivery`` validates the message against product.accepted-change.v1 and the payload against its event
type (the models and ``VOCABULARY`` of ``prw_platform.contracts``, the ones the resolver builds), and returns a
``ProductEvent``: the envelope, the typed full state, and the aggregate revisions that must be applied first.
Pure: no database, so every rule here has a unit test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from pydantic import ValidationError

from prw_platform.contracts import VOCABULARY, AcceptedChange, EventPayload, EventType, SchemaViolation
from prw_platform.product.errors import SchemaInvalid, UnsupportedEventType


class AggregateKey(NamedTuple):
    """A NamedTuple, not a dataclass: a batch hashes keys in every revision and parking lookup, and a tuple's hash
    and equality run in C."""

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
    payload: EventPayload

    @property
    def event_id(self) -> str:
        return self.change.event_id

    @property
    def position(self) -> int:
        return self.change.sequence

    @cached_property
    def aggregate(self) -> AggregateKey:
        # Cached: a batch asks for it several times per event (frozen: cached_property writes __dict__ directly).
        return AggregateKey(self.change.aggregate.type, self.change.aggregate.id)

    @property
    def revision(self) -> int:
        return self.change.aggregate.revision

    @property
    def event_type(self) -> EventType:
        return VOCABULARY[self.change.type]

    def requirements(self) -> tuple[Requirement, ...]:
        """The event's dependencies, plus, for a serial type (a release), the previous revision of the aggregate.

        A release snapshot lists only the items and listings it publishes; the ones earlier releases published
        stay public. Applying release n before n - 1 would then lose n - 1's items when n - 1 arrives as a
        stale revision, so INV-08 requires releases to apply in revision order: n waits (parks) for n - 1."""
        return self._requirements

    @cached_property
    def _requirements(self) -> tuple[Requirement, ...]:
        explicit = tuple(
            Requirement(AggregateKey(dep.type, dep.id), dep.revision) for dep in self.change.dependencies
        )
        if self.event_type.serial and self.revision > 1:
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
    event_type = VOCABULARY.get(change.type)
    if event_type is None:
        raise UnsupportedEventType(f"unknown event type {change.type!r}", event_id=change.event_id)
    try:
        # The rules docs/events.md gives every type: aggregate type, revisions, payload model, payload id key ==
        # aggregate.id, and a release's publication_revision == its aggregate revision.
        payload = event_type.parse(change.aggregate, change.payload)
    except SchemaViolation as exc:
        raise SchemaInvalid(f"{change.type}: {exc}", event_id=change.event_id) from exc
    return ProductEvent(change=change, payload=payload)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None

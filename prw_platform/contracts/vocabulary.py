"""The accepted-change vocabulary (docs/events.md): every event type, in one place.

An ``EventType`` names the aggregate type it changes, its payload model, the payload key that must equal
``aggregate.id``, which revisions it may carry and what it depends on. Both sides use the same rules: the resolver
through ``EventType.document`` (strict: it is the producer), the product service through ``EventType.parse``
(a violation is SCHEMA_INVALID). The vocabulary table of docs/events.md and the ``type`` → ``payload`` union of
``schemas/product.accepted-change.v1.json`` are generated from ``VOCABULARY`` (``python -m
prw_platform.contracts.generate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import to_json

from prw_platform.contracts.payloads import (
    EventPayload,
    ItemMergedPayload,
    ItemPayload,
    ItemPicturesPayload,
    ListingPayload,
    MappingPayload,
    MerchantPayload,
    MerchantSourcePayload,
    ProductClassDeletedPayload,
    ProductClassPayload,
    ReleasePayload,
    ShippingPolicyPayload,
)
from prw_platform.contracts.schemas import ACCEPTED_CHANGE_SCHEMA, SchemaViolation

CATALOG_ITEM: Final = "catalog_item"
LISTING: Final = "listing"
LISTING_MAPPING: Final = "listing_mapping"
RELEASE: Final = "release"
MERCHANT: Final = "merchant"
MERCHANT_SOURCE: Final = "merchant_source"
SHIPPING_POLICY: Final = "shipping_policy"
ITEM_PICTURES: Final = "item_pictures"
PRODUCT_CLASS: Final = "product_class"


class Revisions(StrEnum):
    """Which aggregate revisions an event type may carry (docs/events.md: "created (rev 1), updated (rev > 1)")."""

    FIRST = "1"
    LATER = "> 1"
    ANY = "≥ 1"

    def allows(self, revision: int) -> bool:
        # By value: a member lookup on the enum class costs more than the check (asked once per applied event).
        value = self._value_
        if value == "1":
            return revision == 1
        if value == "> 1":
            return revision > 1
        return revision >= 1


class AggregateRevision(BaseModel):
    """The aggregate an event changes, at one revision (a message's ``aggregate`` and ``dependencies``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: str
    id: str
    revision: int = Field(ge=1)


@dataclass(frozen=True, slots=True)
class EventType:
    name: str
    aggregate_type: str
    payload: type[EventPayload]
    #: The payload key (wire name) whose value is ``aggregate.id``.
    id_key: str
    revisions: Revisions
    #: The aggregate types ``dependencies`` may name, and the rule in words (docs/events.md).
    depends_on: tuple[str, ...]
    dependency_rule: str
    summary: str
    #: A payload key whose value is ``aggregate.revision``, if any.
    revision_key: str | None = None
    #: Revision n applies only after revision n - 1 of the same aggregate (a dependency the consumer adds).
    serial: bool = False

    def parse(self, aggregate: AggregateRevision, document: Mapping[str, Any]) -> EventPayload:
        """The product side: validate ``document`` as this type's payload for ``aggregate``.
        Raises ``SchemaViolation`` (SCHEMA_INVALID) naming every problem found."""
        errors = self._envelope_errors(aggregate)
        try:
            # Strict JSON semantics, as the schema has them: "1" is not an integer, 1 is not a string or a boolean.
            payload = self.payload.model_validate_json(to_json(document), strict=True)
        except ValidationError as exc:
            raise SchemaViolation(ACCEPTED_CHANGE_SCHEMA, [*errors, *_pydantic_errors(exc)]) from exc
        errors += self._payload_errors(aggregate, payload)
        if errors:
            raise SchemaViolation(ACCEPTED_CHANGE_SCHEMA, errors)
        return payload

    def document(
        self,
        aggregate: AggregateRevision,
        payload: EventPayload,
        dependencies: Iterable[AggregateRevision] = (),
    ) -> dict[str, Any]:
        """The resolver side: the wire form of ``payload``, after the checks ``parse`` makes and stricter ones: the
        payload is this type's model, declares every key it carries, and the dependencies name only aggregate
        types this event type depends on. Raises ``SchemaViolation``: the decision rolls back."""
        errors = self._envelope_errors(aggregate)
        if not isinstance(payload, self.payload):
            errors.append(f"{self.name} carries {self.payload.__name__}, not {type(payload).__name__}")
        else:
            errors += undeclared_keys(payload) + self._payload_errors(aggregate, payload)
        errors += [
            f"{self.name} does not depend on a {dependency.type}"
            for dependency in dependencies
            if dependency.type not in self.depends_on
        ]
        if errors:
            raise SchemaViolation(ACCEPTED_CHANGE_SCHEMA, errors)
        return payload.model_dump(mode="json", by_alias=True)

    def _envelope_errors(self, aggregate: AggregateRevision) -> list[str]:
        errors = []
        if aggregate.type != self.aggregate_type:
            errors.append(f"{self.name} must change a {self.aggregate_type}, not a {aggregate.type}")
        if not self.revisions.allows(aggregate.revision):
            errors.append(f"{self.name} carries revision {self.revisions.value}, not {aggregate.revision}")
        return errors

    def _payload_errors(self, aggregate: AggregateRevision, payload: EventPayload) -> list[str]:
        errors = []
        identity = field_value(payload, self.id_key)
        if identity != aggregate.id:
            errors.append(f"payload {self.id_key} {identity!r} is not the aggregate {aggregate.id!r}")
        if self.revision_key is not None:
            revision = field_value(payload, self.revision_key)
            if revision != aggregate.revision:
                errors.append(
                    f"payload {self.revision_key} {revision!r} is not the aggregate revision {aggregate.revision}"
                )
        return errors


_MAPPING_DEPENDENCIES = (
    "`catalog_item` at the target item's current revision; `listing` at its current revision"
)

#: if_accepted_change / docs/events.md: event type → its contract. Adding a type: add it here (and its payload
#: model in payloads.py), teach the resolver to build it and the product to apply it, then run the generator.
VOCABULARY: Final[Mapping[str, EventType]] = {
    entry.name: entry
    for entry in (
        EventType(
            name="catalog_item.created",
            aggregate_type=CATALOG_ITEM,
            payload=ItemPayload,
            id_key="item",
            revisions=Revisions.FIRST,
            depends_on=(),
            dependency_rule="none",
            summary="A new catalog item.",
        ),
        EventType(
            name="catalog_item.updated",
            aggregate_type=CATALOG_ITEM,
            payload=ItemPayload,
            id_key="item",
            revisions=Revisions.LATER,
            depends_on=(),
            dependency_rule="none",
            summary="A later revision of a catalog item (its full state, not a diff).",
        ),
        EventType(
            name="catalog_item.merged",
            aggregate_type=CATALOG_ITEM,
            payload=ItemMergedPayload,
            id_key="item",
            revisions=Revisions.LATER,
            depends_on=(CATALOG_ITEM,),
            dependency_rule="`catalog_item` at the surviving item's current revision",
            summary="A reviewer merged the item into another item of the catalog (a duplicate): the item is "
            "retired, its listings were remapped to the survivor by `listing_mapping.corrected` events of the "
            "same decision, and the next release redirects its public id to the survivor.",
        ),
        EventType(
            name="listing.observed",
            aggregate_type=LISTING,
            payload=ListingPayload,
            id_key="listing",
            revisions=Revisions.ANY,
            depends_on=(),
            dependency_rule="none",
            summary="A listing was observed with changed fields (an older observation never rolls it back).",
        ),
        EventType(
            name="listing_mapping.created",
            aggregate_type=LISTING_MAPPING,
            payload=MappingPayload,
            id_key="listing",
            revisions=Revisions.FIRST,
            depends_on=(CATALOG_ITEM, LISTING),
            dependency_rule=_MAPPING_DEPENDENCIES,
            summary="A listing is mapped to an item for the first time (the aggregate id is the listing id).",
        ),
        EventType(
            name="listing_mapping.corrected",
            aggregate_type=LISTING_MAPPING,
            payload=MappingPayload,
            id_key="listing",
            revisions=Revisions.LATER,
            depends_on=(CATALOG_ITEM, LISTING),
            dependency_rule=_MAPPING_DEPENDENCIES,
            summary="A listing is remapped to another item (INV-01: it keeps one current mapping).",
        ),
        EventType(
            name="merchant.created",
            aggregate_type=MERCHANT,
            payload=MerchantPayload,
            id_key="merchant",
            revisions=Revisions.FIRST,
            depends_on=(),
            dependency_rule="none",
            summary="An operator provisioned a merchant.",
        ),
        EventType(
            name="merchant.updated",
            aggregate_type=MERCHANT,
            payload=MerchantPayload,
            id_key="merchant",
            revisions=Revisions.LATER,
            depends_on=(),
            dependency_rule="none",
            summary="A later revision of a merchant (its full state, not a diff).",
        ),
        EventType(
            name="merchant.source_bound",
            aggregate_type=MERCHANT_SOURCE,
            payload=MerchantSourcePayload,
            id_key="source_id",
            revisions=Revisions.ANY,
            depends_on=(MERCHANT,),
            dependency_rule="`merchant` at its current revision",
            summary="An operator bound a source to a merchant (the aggregate id is the source id; a later "
            "revision moves the source to another merchant).",
        ),
        EventType(
            name="shipping_policy.accepted",
            aggregate_type=SHIPPING_POLICY,
            payload=ShippingPolicyPayload,
            id_key="merchant",
            revisions=Revisions.ANY,
            depends_on=(MERCHANT,),
            dependency_rule="`merchant` at its current revision",
            summary="A merchant's shipping policy was accepted by a decision (the aggregate id is the "
            "merchant id; each revision replaces the policy).",
        ),
        EventType(
            name="item_pictures.saved",
            aggregate_type=ITEM_PICTURES,
            payload=ItemPicturesPayload,
            id_key="item",
            revisions=Revisions.ANY,
            depends_on=(),
            dependency_rule="none",
            summary="An operator saved an item's pictures (the aggregate id is the item id; each revision is the "
            "whole set: main picture and gallery). Private until a release publishes it (seed 004).",
        ),
        EventType(
            name="product_class.saved",
            aggregate_type=PRODUCT_CLASS,
            payload=ProductClassPayload,
            id_key="class",
            revisions=Revisions.ANY,
            depends_on=(),
            dependency_rule="none",
            summary="An operator created or changed a product class: name, picture and member items (its full "
            "state). A class created again after a deletion continues the revisions.",
        ),
        EventType(
            name="product_class.deleted",
            aggregate_type=PRODUCT_CLASS,
            payload=ProductClassDeletedPayload,
            id_key="class",
            revisions=Revisions.LATER,
            depends_on=(),
            dependency_rule="none",
            summary="An operator deleted a product class with its memberships; the next release removes it.",
        ),
        EventType(
            name="release.authorized",
            aggregate_type=RELEASE,
            payload=ReleasePayload,
            id_key="release",
            revisions=Revisions.ANY,
            depends_on=(
                CATALOG_ITEM,
                LISTING_MAPPING,
                MERCHANT,
                MERCHANT_SOURCE,
                SHIPPING_POLICY,
                ITEM_PICTURES,
                PRODUCT_CLASS,
            ),
            dependency_rule="`catalog_item` at every item revision it publishes; `listing_mapping` at every "
            "mapping revision it publishes; `merchant`, `merchant_source` and `shipping_policy` at every "
            "revision it publishes; `catalog_item` at the revision that retired or merged each item it removes; "
            "`item_pictures` and `product_class` at every revision it publishes or removes",
            summary="A publication of the catalog: one release aggregate per catalog (`rel_<catalog_id>`), whose "
            "revision is the publication revision.",
            revision_key="publication_revision",
            # A release lists only what it adds; applied before n - 1, release n would lose n - 1's items when
            # n - 1 then arrives as a stale revision, so INV-08 needs releases applied in revision order.
            serial=True,
        ),
    )
}


def payload_models() -> tuple[type[EventPayload], ...]:
    """The payload models of the vocabulary, each once, in vocabulary order."""
    return tuple(dict.fromkeys(entry.payload for entry in VOCABULARY.values()))


def field_value(payload: BaseModel, key: str) -> object:
    """The value of the field whose wire name is ``key`` (an alias such as ``from``, or the field name)."""
    return getattr(payload, _field_name(type(payload), key))


@cache
def _field_name(model: type[BaseModel], key: str) -> str:
    # Cached per (model, wire name): the apply path asks twice per event (AW-04 envelope/payload checks).
    for name, info in model.model_fields.items():
        if (info.alias or name) == key:
            return name
    raise KeyError(f"{model.__name__} has no field {key!r}")


def undeclared_keys(model: BaseModel, path: str = "payload") -> list[str]:
    """Every key of ``model`` and the models nested in it that its class does not declare."""
    found = [f"{path}/{key}: not declared by {type(model).__name__}" for key in model.model_extra or {}]
    for name in type(model).model_fields:
        found += _undeclared_in(getattr(model, name), f"{path}/{name}")
    return found


def _undeclared_in(value: object, path: str) -> list[str]:
    if isinstance(value, BaseModel):
        return undeclared_keys(value, path)
    if isinstance(value, Mapping):
        return [error for key, item in value.items() for error in _undeclared_in(item, f"{path}/{key}")]
    if isinstance(value, list | tuple):
        return [
            error for index, item in enumerate(value) for error in _undeclared_in(item, f"{path}/{index}")
        ]
    return []


def _pydantic_errors(exc: ValidationError) -> list[str]:
    return [
        f"{'/'.join(['payload', *map(str, error['loc'])])}: {error['msg']}"
        for error in exc.errors(include_url=False)
    ]

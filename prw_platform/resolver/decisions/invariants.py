"""Invariant checks of the decision path (INV-01, INV-02, INV-07 in docs/spec.md). Each raises
``InvariantViolation`` inside the decision transaction, so a violating decision commits nothing and consumes
no stream position.

INV-01 (one current mapping per listing) is structural: ``listing_mapping`` is keyed by listing and every write
names the revision it replaces (``facts.write_mapping``).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from prw_platform.plugins.types import AttributeDefinition, NormalizedAttribute
from prw_platform.resolver.decisions.errors import InvariantViolation
from prw_platform.resolver.decisions.facts import ACTIVE, ItemState, ListingState


def check_mapping_target(item: ItemState | None, item_id: str, listing: ListingState) -> ItemState:
    """INV-07: a mapping targets an existing, non-retired item of the listing's catalog."""
    if item is None:
        raise InvariantViolation("INV-07", f"item {item_id} does not exist")
    if item.catalog_id != listing.catalog_id:
        raise InvariantViolation(
            "INV-07",
            f"item {item_id} belongs to catalog {item.catalog_id}, the listing to {listing.catalog_id}",
        )
    if item.status != ACTIVE:
        raise InvariantViolation("INV-07", f"item {item_id} is {item.status}")
    return item


def check_attributes(
    attributes: tuple[NormalizedAttribute, ...], definitions: Mapping[str, AttributeDefinition] | None
) -> None:
    """INV-02 hook: values arrive normalized by a profile and name their definition version. With the profile's
    ``definitions`` at hand, each value must also conform to its definition (type, unit, allowed values)."""
    seen: set[str] = set()
    for attribute in attributes:
        if attribute.key in seen:
            raise InvariantViolation("INV-02", f"{attribute.key} is given twice")
        seen.add(attribute.key)
        if attribute.definition_version < 1:
            raise InvariantViolation("INV-02", f"{attribute.key} names no definition version")
        if definitions is None:
            continue
        definition = definitions.get(attribute.key)
        if definition is None:
            raise InvariantViolation("INV-02", f"{attribute.key} has no definition in the profile")
        problem = _nonconformance(attribute, definition)
        if problem:
            raise InvariantViolation("INV-02", f"{attribute.key}: {problem}")


def _nonconformance(attribute: NormalizedAttribute, definition: AttributeDefinition) -> str | None:
    if attribute.definition_version != definition.version:
        return f"pinned to definition version {attribute.definition_version}, the profile has {definition.version}"
    value = attribute.value
    kind = definition.value_type
    if kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind in ("decimal", "quantity"):
        ok = isinstance(value, Decimal | int) and not isinstance(value, bool)
    else:  # string, enum, identifier
        ok = isinstance(value, str)
    if not ok:
        return f"{value!r} is not a {kind}"
    if kind == "enum" and definition.allowed_values is not None and value not in definition.allowed_values:
        return f"{value!r} is not one of {', '.join(definition.allowed_values)}"
    if kind == "quantity" and attribute.unit != definition.unit:
        return f"unit {attribute.unit!r} is not the canonical {definition.unit!r}"
    return None

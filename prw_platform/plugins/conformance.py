"""INV-02: an attribute value conforms to its definition (type, unit, allowed values) at the pinned version.

The platform checks every normalized attribute with this before it is stored; ``ProfileContract`` runs it over
every case a profile author records.
"""

from __future__ import annotations

from decimal import Decimal

from prw_platform.plugins.types import AttributeDefinition, NormalizedAttribute


def conformance_problem(attribute: NormalizedAttribute, definition: AttributeDefinition) -> str | None:
    """Why ``attribute`` does not conform to ``definition``, or None when it does."""
    if attribute.key != definition.key:
        return f"{attribute.key} was checked against the definition of {definition.key}"
    if attribute.definition_version != definition.version:
        return (
            f"{attribute.key} claims definition version {attribute.definition_version}, "
            f"the profile defines version {definition.version}"
        )
    value = attribute.value
    match definition.value_type:
        case "string":
            ok = isinstance(value, str) and value.strip() != ""
        case "identifier":
            ok = isinstance(value, str) and value != "" and not any(ch.isspace() for ch in value)
        case "integer":
            ok = isinstance(value, int) and not isinstance(value, bool)
        case "decimal":
            ok = isinstance(value, Decimal) and value.is_finite()
        case "boolean":
            ok = isinstance(value, bool)
        case "enum":
            ok = isinstance(value, str) and value in (definition.allowed_values or ())
        case "quantity":
            ok = (isinstance(value, Decimal) and value.is_finite()) or (
                isinstance(value, int) and not isinstance(value, bool)
            )
            if ok and attribute.unit != definition.unit:
                return (
                    f"{attribute.key} is in {attribute.unit!r}, its definition's unit is {definition.unit!r}"
                )
    if not ok:
        return f"{attribute.key}={value!r} is not a valid {definition.value_type} at version {definition.version}"
    return None

"""INV-02 conformance of a normalized value to its definition, and the shared availability vocabulary."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prw_platform.plugins import (
    AttributeDefinition,
    AttributeValue,
    NormalizedAttribute,
    availability_from_text,
)
from prw_platform.plugins.conformance import conformance_problem

DEFINITIONS = {
    "string": AttributeDefinition("x:s", 1, "string", "s"),
    "identifier": AttributeDefinition("x:s", 1, "identifier", "i"),
    "integer": AttributeDefinition("x:s", 1, "integer", "n"),
    "decimal": AttributeDefinition("x:s", 1, "decimal", "d"),
    "boolean": AttributeDefinition("x:s", 1, "boolean", "b"),
    "enum": AttributeDefinition("x:s", 1, "enum", "e", allowed_values=("sata", "nvme")),
    "quantity": AttributeDefinition("x:s", 1, "quantity", "q", unit="GB"),
}


@pytest.mark.parametrize(
    ("value_type", "value", "unit"),
    [
        ("string", "Samsung", None),
        ("identifier", "00036000291452", None),
        ("integer", 3, None),
        ("decimal", Decimal("1.5"), None),
        ("boolean", False, None),
        ("enum", "nvme", None),
        ("quantity", Decimal(1000), "GB"),
        ("quantity", 512, "GB"),
    ],
)
def test_values_of_the_right_type_conform(value_type: str, value: AttributeValue, unit: str | None) -> None:
    attribute = NormalizedAttribute("x:s", value, 1, unit)
    assert conformance_problem(attribute, DEFINITIONS[value_type]) is None


@pytest.mark.parametrize(
    ("value_type", "value", "unit"),
    [
        ("string", "  ", None),
        ("identifier", "0003 6000", None),
        ("integer", True, None),
        ("integer", Decimal(3), None),
        ("decimal", Decimal("NaN"), None),
        ("decimal", 1, None),
        ("boolean", 1, None),
        ("enum", "usb", None),
        ("quantity", Decimal(1000), "TB"),
        ("quantity", Decimal("Infinity"), "GB"),
        ("quantity", "1000", "GB"),
    ],
)
def test_values_that_break_the_definition_do_not_conform(
    value_type: str, value: AttributeValue, unit: str | None
) -> None:
    attribute = NormalizedAttribute("x:s", value, 1, unit)
    assert conformance_problem(attribute, DEFINITIONS[value_type]) is not None


def test_a_value_made_at_another_definition_version_does_not_conform() -> None:
    problem = conformance_problem(NormalizedAttribute("x:s", "a", 2), DEFINITIONS["string"])
    assert problem == "x:s claims definition version 2, the profile defines version 1"


def test_a_value_checked_against_another_keys_definition_does_not_conform() -> None:
    assert conformance_problem(NormalizedAttribute("x:t", "a", 1), DEFINITIONS["string"]) is not None


@pytest.mark.parametrize(
    ("text", "availability"),
    [
        ("https://schema.org/InStock", "in_stock"),
        ("http://www.schema.org/OutOfStock", "out_of_stock"),
        ("schema.org/PreOrder", "preorder"),
        ("PreSale", "preorder"),
        ("InStoreOnly", "in_stock"),
        ("MadeToOrder", "backorder"),
        ("SoldOut", "out_of_stock"),
        ("Discontinued", "discontinued"),
        ("LimitedAvailability", "limited"),
        ("in_stock", "in_stock"),
        (" Out of stock ", "out_of_stock"),
        ("pre-order", "preorder"),
    ],
)
def test_availability_words_and_schema_org_values(text: str, availability: str) -> None:
    assert availability_from_text(text) == availability


@pytest.mark.parametrize("text", ["", "ask us", "https://example.com/InStock", "in stock soon-ish"])
def test_unknown_availability_is_none(text: str) -> None:
    assert availability_from_text(text) is None

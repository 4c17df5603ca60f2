"""Parsing a delivery against product.accepted-change.v1 and docs/events.md, before any transaction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from prw_platform.contracts import VOCABULARY, ItemPayload, MappingPayload, ReleasePayload, load_schema
from prw_platform.product.errors import SchemaInvalid, UnsupportedEventType
from prw_platform.product.events import AggregateKey, Requirement, parse_delivery
from tests.unit.product.stream import StreamBuilder

_FULL_SCHEMA = Draft202012Validator(
    load_schema("product.accepted-change.v1.json"), format_checker=FormatChecker()
)

SEED_EXAMPLE = (
    Path(__file__).parents[2] / "fixtures" / "seed_examples" / "product.accepted-change.v1.example0.json"
)


def test_the_seed_example_parses_as_a_mapping_correction_depending_on_its_item() -> None:
    event = parse_delivery(json.loads(SEED_EXAMPLE.read_text()))

    assert isinstance(event.payload, MappingPayload)
    assert (event.payload.item, event.payload.previous_item) == ("itm_ssd_p5_1t_hs", "itm_ssd_p5_1t")
    assert (event.aggregate, event.revision, event.position) == (
        AggregateKey("listing_mapping", "lst_lum_p5_1t_hs"),
        2,
        9,
    )
    assert event.requirements() == (Requirement(AggregateKey("catalog_item", "itm_ssd_p5_1t_hs"), 1),)


def test_every_builder_event_type_parses_to_its_payload() -> None:
    stream = StreamBuilder()
    item = parse_delivery(stream.item("itm_a"))
    stream.listing("lst_1")
    stream.mapping("lst_1", "itm_a")
    release = parse_delivery(stream.release())

    assert isinstance(item.payload, ItemPayload)
    assert isinstance(release.payload, ReleasePayload)
    assert [entry.item for entry in release.payload.items] == ["itm_a"]
    assert [entry.listing for entry in release.payload.listings] == ["lst_1"]


def test_a_release_after_the_first_also_waits_for_the_previous_release() -> None:
    stream = StreamBuilder()
    stream.item("itm_a")
    first = parse_delivery(stream.release())
    stream.item("itm_b")
    second = parse_delivery(stream.release())

    assert first.requirements() == (Requirement(AggregateKey("catalog_item", "itm_a"), 1),)
    assert second.requirements() == (
        Requirement(AggregateKey("catalog_item", "itm_b"), 1),
        Requirement(AggregateKey("release", "rel_cat_primary"), 1),
    )


def _item_message() -> dict[str, Any]:
    return StreamBuilder().item("itm_a")


def _break(path: str, value: object) -> dict[str, Any]:
    message = _item_message()
    target = message
    *parents, last = path.split(".")
    for key in parents:
        target = target[key]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return message


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("accepted_at", _DELETE),
        ("sequence", 0),
        ("tenant_id", "Not A Tenant"),
        ("schema_version", "accepted-change/2"),
        ("unexpected", "field"),
        ("aggregate.revision", 0),
        ("payload", []),
        ("payload.status", "archived"),
        ("payload.profile", _DELETE),
        ("payload.item", "itm_other"),
        ("aggregate.type", "listing"),
    ],
)
def test_a_message_breaking_the_schema_or_the_vocabulary_is_schema_invalid(path: str, value: object) -> None:
    message = _break(path, value)
    with pytest.raises(SchemaInvalid) as raised:
        parse_delivery(message)
    assert raised.value.code == "SCHEMA_INVALID"
    assert raised.value.event_id == message["event_id"]


def _stream_of_every_type() -> dict[str, dict[str, Any]]:
    """One message per vocabulary type, each the first of its type in a consistent stream."""
    stream = StreamBuilder()
    messages = {"catalog_item.created": stream.item("itm_a")}
    messages["catalog_item.updated"] = stream.item("itm_a", title="Lumen P5 1 TB SSD (2026)")
    messages["listing.observed"] = stream.listing("lst_1")
    stream.item("itm_b")
    messages["listing_mapping.created"] = stream.mapping("lst_1", "itm_a")
    messages["listing_mapping.corrected"] = stream.mapping("lst_1", "itm_b")
    stream.item("itm_c")
    messages["catalog_item.merged"] = stream.merge("itm_c", "itm_b")
    messages["merchant.created"] = stream.merchant("mer_lumen")
    messages["merchant.updated"] = stream.merchant("mer_lumen", name="Lumen Direct")
    messages["merchant.source_bound"] = stream.bind_source("src_shop_a", "mer_lumen")
    messages["shipping_policy.accepted"] = stream.shipping_policy("mer_lumen", {"DE": "4.90"})
    picture = {"file": "fil_1", "sha256": "a" * 64, "media_type": "image/png", "size_bytes": 12}
    messages["item_pictures.saved"] = stream.item_pictures("itm_a", picture, [dict(picture, file="fil_2")])
    messages["product_class.saved"] = stream.product_class("cls_tools", "Tools", picture, ["itm_a"])
    messages["product_class.deleted"] = stream.delete_class("cls_tools")
    messages["release.authorized"] = stream.release()
    return messages


# if_accepted_change / docs/events.md, per event type: a payload missing a required field, a field of the wrong
# type, and a payload whose id is not the aggregate's are SCHEMA_INVALID (DLQ). ``needle`` is what the error must
# name; ``in_schema`` says whether the JSON schema alone refuses it too (an id or publication_revision that differs
# from the envelope's is a rule JSON Schema cannot state: only the contract models check it).
_PAYLOAD_BREAKS = [
    ("catalog_item.created", "payload.title", _DELETE, "title", True),
    ("catalog_item.created", "payload.identifiers", "04006381333931", "identifiers", True),
    ("catalog_item.created", "payload.status", True, "status", True),
    ("catalog_item.created", "payload.item", "itm_other", "itm_other", False),
    ("catalog_item.updated", "payload.identifiers.gtin", _DELETE, "gtin", True),
    (
        "catalog_item.updated",
        "payload.attributes",
        {"storage:capacity": {"value": 1}},
        "definition_version",
        True,
    ),
    ("catalog_item.updated", "payload.item", "itm_b", "itm_b", False),
    ("catalog_item.updated", "aggregate.revision", 1, "revision", True),
    ("listing.observed", "payload.source_id", _DELETE, "source_id", True),
    ("listing.observed", "payload.price", 89.9, "price", True),
    ("listing.observed", "payload.price", "89,90", "price", True),
    ("listing.observed", "payload.observed_at", "2026-10-10T03:31:55", "observed_at", True),
    ("listing.observed", "payload.listing", "lst_2", "lst_2", False),
    ("listing_mapping.created", "payload.from", _DELETE, "from", True),
    ("listing_mapping.created", "payload.item", 5, "item", True),
    ("listing_mapping.created", "payload.listing", "lst_2", "lst_2", False),
    ("listing_mapping.created", "aggregate.revision", 2, "revision", True),
    ("listing_mapping.corrected", "payload.item", _DELETE, "item", True),
    ("listing_mapping.corrected", "payload.from", ["itm_a"], "from", True),
    ("listing_mapping.corrected", "payload.listing", "lst_2", "lst_2", False),
    ("release.authorized", "payload.items", _DELETE, "items", True),
    ("release.authorized", "payload.publication_revision", "1", "publication_revision", True),
    ("release.authorized", "payload.items.0.fields.profile", _DELETE, "profile", True),
    ("release.authorized", "payload.listings.0.fields.price", 89.9, "price", True),
    ("release.authorized", "payload.listings.0.mapping_revision", 0, "mapping_revision", True),
    ("release.authorized", "payload.release", "rel_cat_other", "rel_cat_other", False),
    # Seed 004: pictures and classes.
    ("item_pictures.saved", "payload.main.sha256", "not-a-digest", "sha256", True),
    ("item_pictures.saved", "payload.gallery", _DELETE, "gallery", True),
    ("item_pictures.saved", "payload.item", "itm_b", "itm_b", False),
    ("product_class.saved", "payload.name", "", "name", True),
    ("product_class.saved", "payload.members", "itm_a", "members", True),
    ("product_class.saved", "payload.class", "cls_other", "cls_other", False),
    ("product_class.deleted", "aggregate.revision", 1, "revision", True),
    ("product_class.deleted", "payload.class", _DELETE, "class", True),
    ("release.authorized", "payload.item_pictures.0.revision", 0, "revision", True),
    # Merges.
    ("catalog_item.merged", "payload.merged_into", _DELETE, "merged_into", True),
    ("catalog_item.merged", "payload.status", "active", "status", True),
    ("catalog_item.merged", "aggregate.revision", 1, "revision", True),
    ("release.authorized", "payload.merged_items.0.into", _DELETE, "into", True),
]


@pytest.mark.parametrize(
    ("event_type", "path", "value", "needle", "in_schema"),
    _PAYLOAD_BREAKS,
    ids=[f"{t}:{p}={'<missing>' if v is _DELETE else v}" for t, p, v, _, _ in _PAYLOAD_BREAKS],
)
def test_every_event_type_with_a_missing_mistyped_or_misidentified_payload_is_schema_invalid(
    event_type: str, path: str, value: object, needle: str, in_schema: bool
) -> None:
    message = _stream_of_every_type()[event_type]
    target: Any = message
    *parents, last = path.split(".")
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    with pytest.raises(SchemaInvalid) as raised:
        parse_delivery(message)
    assert raised.value.code == "SCHEMA_INVALID"
    assert raised.value.event_id == message["event_id"]
    assert needle in str(raised.value)
    # The consumer checks payloads with the models the schema's payload union is generated from: they agree.
    schema_errors = list(_FULL_SCHEMA.iter_errors(message))
    assert bool(schema_errors) is in_schema, schema_errors


def test_every_event_type_of_a_consistent_stream_parses() -> None:
    messages = _stream_of_every_type()
    assert set(messages) == set(VOCABULARY)
    for event_type, message in messages.items():
        assert isinstance(parse_delivery(message).payload, VOCABULARY[event_type].payload)


def test_a_release_whose_publication_revision_is_not_its_revision_is_schema_invalid() -> None:
    stream = StreamBuilder()
    stream.item("itm_a")
    message = stream.release()
    message["payload"]["publication_revision"] = 7
    with pytest.raises(SchemaInvalid, match="publication_revision"):
        parse_delivery(message)


def test_an_unknown_event_type_is_unsupported_not_silently_skipped() -> None:
    message = _item_message()
    message["type"] = "catalog_item.archived"
    with pytest.raises(UnsupportedEventType) as raised:
        parse_delivery(message)
    assert raised.value.code == "UNSUPPORTED_EVENT_TYPE"

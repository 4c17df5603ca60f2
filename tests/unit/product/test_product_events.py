"""Parsing a delivery against product.accepted-change.v1 and docs/events.md, before any transaction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prw_platform.contracts import ItemPayload, MappingPayload, ReleasePayload
from prw_platform.product.errors import SchemaInvalid, UnsupportedEventType
from prw_platform.product.events import AggregateKey, Requirement, parse_delivery
from tests.unit.product.stream import StreamBuilder

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


def test_a_release_whose_publication_revision_is_not_its_revision_is_schema_invalid() -> None:
    stream = StreamBuilder()
    stream.item("itm_a")
    message = stream.release()
    message["payload"]["publication_revision"] = 7
    with pytest.raises(SchemaInvalid, match="publication_revision"):
        parse_delivery(message)


def test_an_unknown_event_type_is_unsupported_not_silently_skipped() -> None:
    message = _item_message()
    message["type"] = "catalog_item.merged"
    with pytest.raises(UnsupportedEventType) as raised:
        parse_delivery(message)
    assert raised.value.code == "UNSUPPORTED_EVENT_TYPE"

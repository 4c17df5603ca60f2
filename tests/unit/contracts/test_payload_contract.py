"""The payload models and the vocabulary: strict for the producer (``EventType.document``), tolerant for the
consumer (``EventType.parse``), and the JSON Schema's type → payload union with readable errors."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from prw_platform.contracts import (
    VOCABULARY,
    AcceptedChange,
    AggregateRevision,
    Identifiers,
    ItemAttribute,
    ItemFields,
    ItemPayload,
    ListingPayload,
    MappingPayload,
    ReleasedItem,
    ReleasePayload,
    SchemaViolation,
    decimal_string,
    utc_timestamp,
    validate,
)
from tests.unit.product.stream import StreamBuilder

SCHEMA = "product.accepted-change.v1.json"
SEED_EXAMPLE = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "seed_examples"
    / "product.accepted-change.v1.example0.json"
)


def _rev(aggregate_type: str, aggregate_id: str, revision: int = 1) -> AggregateRevision:
    return AggregateRevision(type=aggregate_type, id=aggregate_id, revision=revision)


def _item(**overrides: Any) -> ItemPayload:
    fields: dict[str, Any] = {
        "item": "itm_a",
        "profile": "np_storage@1",
        "status": "active",
        "title": "Lumen P5",
        "brand": "Lumen",
        "identifiers": Identifiers(gtin="04006381333931", mpn=None),
        "attributes": {"storage:capacity": ItemAttribute(value="1000", unit="GB", definition_version=1)},
    }
    fields.update(overrides)
    return ItemPayload(**fields)


def _listing(**overrides: Any) -> ListingPayload:
    fields: dict[str, Any] = {
        "listing": "lst_1",
        "source_id": "src_shop_a",
        "url": "https://shop.example/lst_1",
        "title": "Lumen P5 SSD 1TB",
        "price": decimal_string(Decimal("89.90")),
        "currency": "EUR",
        "availability": "in_stock",
        "observed_at": utc_timestamp(datetime(2026, 10, 10, 5, 31, 55, tzinfo=timezone(timedelta(hours=2)))),
    }
    fields.update(overrides)
    return ListingPayload(**fields)


def test_the_wire_form_is_todays_dict_shape_in_todays_key_order() -> None:
    mapping = VOCABULARY["listing_mapping.corrected"].document(
        _rev("listing_mapping", "lst_1", 2),
        MappingPayload(listing="lst_1", previous_item="itm_a", item="itm_b"),
        (_rev("catalog_item", "itm_b"), _rev("listing", "lst_1")),
    )
    assert json.dumps(mapping) == '{"listing": "lst_1", "from": "itm_a", "item": "itm_b"}'
    item = VOCABULARY["catalog_item.created"].document(_rev("catalog_item", "itm_a"), _item())
    assert list(item) == ["item", "profile", "status", "title", "brand", "identifiers", "attributes"]
    assert item["attributes"] == {
        "storage:capacity": {"value": "1000", "unit": "GB", "definition_version": 1}
    }
    listing = VOCABULARY["listing.observed"].document(_rev("listing", "lst_1"), _listing())
    # Money stays a decimal string; a timestamp is ISO 8601 in UTC with its offset, as the resolver wrote it.
    assert (listing["price"], listing["observed_at"]) == ("89.90", "2026-10-10T03:31:55+00:00")


def test_decimal_strings_never_use_an_exponent_and_timestamps_need_a_timezone() -> None:
    assert decimal_string(Decimal("129.00")) == "129.00"
    assert decimal_string(Decimal("1E+2")) == "100"
    assert utc_timestamp(datetime(2026, 10, 10, tzinfo=UTC)) == "2026-10-10T00:00:00+00:00"
    with pytest.raises(ValueError, match="timezone-aware"):
        utc_timestamp(datetime(2026, 10, 10))


@pytest.mark.parametrize(
    ("event_type", "aggregate", "payload", "dependencies", "problem"),
    [
        pytest.param(
            "catalog_item.created",
            _rev("catalog_item", "itm_a"),
            _item(internal_note="x"),
            (),
            "payload/internal_note: not declared by ItemPayload",
            id="undeclared-key",
        ),
        pytest.param(
            "catalog_item.created",
            _rev("catalog_item", "itm_a"),
            _item(
                attributes={"storage:capacity": ItemAttribute(value=1, definition_version=1, evidence="cap")}
            ),
            (),
            "payload/attributes/storage:capacity/evidence: not declared by ItemAttribute",
            id="undeclared-nested-key",
        ),
        pytest.param(
            "catalog_item.created",
            _rev("catalog_item", "itm_a"),
            _listing(),
            (),
            "catalog_item.created carries ItemPayload, not ListingPayload",
            id="wrong-model",
        ),
        pytest.param(
            "catalog_item.created",
            _rev("catalog_item", "itm_b"),
            _item(),
            (),
            "payload item 'itm_a' is not the aggregate 'itm_b'",
            id="wrong-id",
        ),
        pytest.param(
            "catalog_item.created",
            _rev("catalog_item", "itm_a", 2),
            _item(),
            (),
            "catalog_item.created carries revision 1, not 2",
            id="created-at-revision-2",
        ),
        pytest.param(
            "listing.observed",
            _rev("catalog_item", "lst_1"),
            _listing(),
            (),
            "listing.observed must change a listing, not a catalog_item",
            id="wrong-aggregate-type",
        ),
        pytest.param(
            "listing.observed",
            _rev("listing", "lst_1"),
            _listing(),
            (_rev("catalog_item", "itm_a"),),
            "listing.observed does not depend on a catalog_item",
            id="undeclared-dependency-type",
        ),
        pytest.param(
            "release.authorized",
            _rev("release", "rel_cat_primary", 3),
            ReleasePayload(release="rel_cat_primary", publication_revision=2, items=(), listings=()),
            (),
            "payload publication_revision 2 is not the aggregate revision 3",
            id="publication-revision",
        ),
    ],
)
def test_the_producer_refuses_a_payload_its_event_type_does_not_declare(
    event_type: str,
    aggregate: AggregateRevision,
    payload: Any,
    dependencies: tuple[AggregateRevision, ...],
    problem: str,
) -> None:
    with pytest.raises(SchemaViolation) as raised:
        VOCABULARY[event_type].document(aggregate, payload, dependencies)
    assert problem in raised.value.errors
    assert raised.value.code == "SCHEMA_INVALID"


def test_the_consumer_keeps_keys_it_does_not_know_for_the_internal_projection() -> None:
    document = {**_item().model_dump(mode="json"), "decision_id": "dec_1"}
    document["identifiers"]["capture_id"] = "cap_1"

    payload = VOCABULARY["catalog_item.updated"].parse(_rev("catalog_item", "itm_a", 2), document)

    assert isinstance(payload, ItemPayload)
    assert payload.model_extra == {"decision_id": "dec_1"}
    assert payload.identifiers.model_extra == {"capture_id": "cap_1"}


def test_a_release_snapshot_round_trips_through_document_and_parse() -> None:
    fields = ItemFields(**{k: v for k, v in _item() if k != "status"})
    release = ReleasePayload(
        release="rel_cat_primary",
        publication_revision=1,
        items=(ReleasedItem(item="itm_a", revision=1, fields=fields),),
        listings=(),
    )
    entry = VOCABULARY["release.authorized"]
    aggregate = _rev("release", "rel_cat_primary")
    wire = entry.document(aggregate, release, (_rev("catalog_item", "itm_a"),))
    assert entry.parse(aggregate, wire) == release


def _message(event_type: str = "catalog_item.created") -> dict[str, Any]:
    stream = StreamBuilder()
    built = {"catalog_item.created": stream.item("itm_a"), "listing.observed": stream.listing("lst_1")}
    return copy.deepcopy(built[event_type])


def _schema_errors(message: dict[str, Any]) -> list[str]:
    with pytest.raises(SchemaViolation) as raised:
        validate(SCHEMA, message)
    return raised.value.errors


def test_schema_errors_name_the_payload_field_that_is_wrong() -> None:
    missing = _message()
    del missing["payload"]["profile"]
    wrong_type = _message()
    wrong_type["payload"]["title"] = 5
    money = _message("listing.observed")
    money["payload"]["price"] = 89.9
    wrong_aggregate = _message()
    wrong_aggregate["aggregate"]["type"] = "listing"

    assert _schema_errors(missing) == ["payload: 'profile' is a required property"]
    assert _schema_errors(wrong_type) == ["payload/title: 5 is not of type 'string', 'null'"]
    assert _schema_errors(money) == ["payload/price: 89.9 is not of type 'string', 'null'"]
    assert _schema_errors(wrong_aggregate) == ["aggregate/type: 'catalog_item' was expected"]


def test_the_schema_leaves_an_unknown_type_to_the_consumer_as_unsupported_not_malformed() -> None:
    message = _message()
    message["type"] = "catalog_item.archived"
    message["payload"] = {"anything": True}
    validate(SCHEMA, message)


def test_the_seed_example_parses_as_its_vocabulary_type() -> None:
    change = AcceptedChange.from_message(json.loads(SEED_EXAMPLE.read_text()))
    payload = VOCABULARY[change.type].parse(change.aggregate, change.payload)
    assert payload == MappingPayload(
        listing="lst_lum_p5_1t_hs", previous_item="itm_ssd_p5_1t", item="itm_ssd_p5_1t_hs"
    )


def test_to_message_checks_the_payload_of_a_vocabulary_type_with_its_model() -> None:
    message = _message()
    message["payload"]["status"] = "archived"
    change = AcceptedChange.model_validate(message)
    with pytest.raises(SchemaViolation, match="payload/status"):
        change.to_message()
    unknown = AcceptedChange.model_validate({**message, "type": "catalog_item.archived"})
    assert unknown.to_message()["payload"]["status"] == "archived"

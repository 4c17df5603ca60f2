"""One contract per event type (docs/events.md): every event type in the vocabulary, as the resolver's own code
builds it (decisions against a real database, relayed from the outbox), passes product.accepted-change.v1 and the
product service's parser, and carries exactly the payload model its type declares."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from prw_platform.contracts import VOCABULARY, validate
from prw_platform.contracts.vocabulary import undeclared_keys
from prw_platform.db.database import Database
from prw_platform.product.events import parse_delivery
from prw_platform.resolver.decisions import (
    DecisionService,
    MerchantService,
    MerchantSpec,
    MergeItems,
    ShippingPolicySpec,
)
from prw_platform.resolver.decisions.events import EventBatch
from prw_platform.resolver.decisions.facts import get_item
from prw_platform.resolver.files.service import CatalogFiles, FileSettings
from prw_platform.resolver.files.sources import UploadSource
from prw_platform.resolver.stream.relay import RelayMessage, relay_batch
from prw_platform.storage import FilesystemObjectStore
from tests.integration.resolver.decision_builders import T0, Catalog

SCHEMA = "product.accepted-change.v1.json"


def _relayed(relay_db: Database) -> list[dict[str, Any]]:
    published: list[RelayMessage] = []

    def collect(messages: Sequence[RelayMessage]) -> None:
        published.extend(messages)

    drained = False
    while not drained:
        drained = relay_batch(relay_db, collect, batch_size=50).drained
    return [message.body for message in published]


def _item_update(catalog: Catalog, item_id: str) -> dict[str, Any]:
    """``catalog_item.updated`` as EventBatch builds it from the stored item at its next revision. No decision
    updates an item yet (the decision service only creates items), so this is the one type built below the
    decision service: by the same EventBatch and ItemState.payload the decisions use."""
    with catalog.owner_db.transaction() as conn:
        stored = get_item(conn, catalog.tenant_id, item_id)
    assert stored is not None
    updated = dataclasses.replace(
        stored, revision=stored.revision + 1, title=f"{stored.title} (2026 edition)"
    )
    batch = EventBatch(
        catalog.stream,
        catalog.committed_position(),
        "dec_contract_update",
        T0 + timedelta(days=1),
        ("cap_contract",),
        None,
    )
    batch.item_created(updated)
    (event,) = batch.events
    return event.to_message()


def _merchant_decisions(catalog: Catalog) -> None:
    service = MerchantService(
        catalog.resolver_db, lambda tenant, catalog_id: catalog.stream, clock=catalog.clock
    )
    tenant, catalog_id, actor = catalog.tenant_id, catalog.stream.catalog_id, "operator:ops_contract"
    service.provision(tenant, catalog_id, MerchantSpec("mer_lumen", "Lumen"), actor=actor)
    service.provision(
        tenant, catalog_id, MerchantSpec("mer_lumen", "Lumen Store", "https://lumen.example"), actor=actor
    )
    service.bind_source(tenant, catalog_id, "src_lumen", "mer_lumen", actor=actor)
    policy = ShippingPolicySpec("mer_lumen", "EUR", {"DE": Decimal("4.90")}, Decimal("50.00"))
    service.accept_shipping_policy(tenant, catalog_id, policy, actor=actor)


def _picture_decisions(catalog: Catalog, item_id: str, objects: Path) -> None:
    """item_pictures.saved, product_class.saved and .deleted, as the managed file saves append them (seed 004)."""
    files = CatalogFiles(
        catalog.resolver_db,
        FilesystemObjectStore(objects),
        catalog.clock,
        FileSettings(),
        streams=lambda tenant, catalog_id: catalog.stream,
    )
    tenant, catalog_id, actor = catalog.tenant_id, catalog.stream.catalog_id, "operator:ops_contract"
    picture = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRcontract"
    files.save_item_pictures(
        tenant, item_id, UploadSource(picture), [UploadSource(picture + b"-2")], actor=actor
    )
    files.create_class(
        tenant,
        catalog_id,
        "cls_contract",
        "Contract",
        picture=UploadSource(picture),
        members=[item_id],
        actor=actor,
    )
    files.delete_class(tenant, "cls_contract", actor=actor)


def test_every_event_type_the_resolver_builds_passes_the_schema_and_the_product_parser(
    catalog: Catalog, relay_db: Database, tmp_path: Path
) -> None:
    first = catalog.decide(
        catalog.create(1)
    )  # catalog_item.created, listing.observed, mapping created, release
    second = catalog.decide(catalog.create(2))
    assert first.item_id
    assert second.item_id
    catalog.decide(catalog.map("rec_1", second.item_id))  # listing_mapping.corrected
    catalog.decide(catalog.map("rec_1", second.item_id, price="99.50", observed_at=T0 + timedelta(hours=1)))
    _merchant_decisions(
        catalog
    )  # merchant.created / .updated, merchant.source_bound, shipping_policy.accepted
    _picture_decisions(catalog, first.item_id, tmp_path / "objects")
    duplicate = catalog.decide(catalog.create(3))  # catalog_item.merged (and its listing's correction)
    assert duplicate.item_id
    reviews = DecisionService(catalog.resolver_db, lambda tenant, catalog_id: catalog.stream, lambda pin: {})
    merge = MergeItems(
        catalog.stream.catalog_id, duplicate.item_id, second.item_id, "reviewer:ops", "duplicate"
    )
    reviews.merge_items(merge, catalog.tenant_id)
    messages = [*_relayed(relay_db), _item_update(catalog, first.item_id)]

    for message in messages:
        validate(SCHEMA, message)
        event = parse_delivery(message)
        entry = VOCABULARY[message["type"]]
        assert type(event.payload) is entry.payload, message["type"]
        assert undeclared_keys(event.payload) == [], message["type"]
        assert {dep["type"] for dep in message["dependencies"]} <= set(entry.depends_on), message["type"]
        # What the product parses is what the resolver sent: the model writes the same document back.
        assert event.payload.model_dump(mode="json", by_alias=True) == message["payload"]

    built = {message["type"] for message in messages}
    assert built == set(VOCABULARY), f"not built by the resolver: {sorted(set(VOCABULARY) - built)}"

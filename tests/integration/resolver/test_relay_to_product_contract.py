"""The resolver's events, as the relay publishes them, are what the product consumer applies (docs/events.md):
delivered in reverse order and twice, they end in the resolver's released state (INV-08)."""

from __future__ import annotations

from collections.abc import Sequence

from prw_platform.db.database import Database
from prw_platform.product.consumer.apply import apply_delivery
from prw_platform.product.scopes import project_catalog
from prw_platform.resolver.stream.relay import RelayMessage, relay_batch
from tests.integration.resolver.decision_builders import Catalog


def _released(owner_db: Database) -> tuple[set[tuple[str, int]], set[tuple[str, str]]]:
    with owner_db.transaction() as conn:
        items = conn.execute("SELECT item_id, revision FROM resolver.released_item").fetchall()
        listings = conn.execute("SELECT listing_id, item_id FROM resolver.released_listing").fetchall()
    return (
        {(str(r["item_id"]), int(str(r["revision"]))) for r in items},
        {(str(r["listing_id"]), str(r["item_id"])) for r in listings},
    )


def _public(owner_db: Database) -> tuple[set[tuple[str, int]], set[tuple[str, str]]]:
    with owner_db.transaction() as conn:
        items = conn.execute("SELECT item_id, published_revision FROM product.public_item").fetchall()
        listings = conn.execute("SELECT listing_id, item_id FROM product.public_listing").fetchall()
    return (
        {(str(r["item_id"]), int(str(r["published_revision"]))) for r in items},
        {(str(r["listing_id"]), str(r["item_id"])) for r in listings},
    )


def test_relayed_events_applied_out_of_order_and_twice_end_in_the_released_state(
    catalog: Catalog, relay_db: Database, product_db: Database
) -> None:
    stream = catalog.stream
    project_catalog(product_db, stream.tenant_id, stream.catalog_id, stream.history_epoch)
    first = catalog.decide(catalog.create(1))
    second = catalog.decide(catalog.create(2))
    assert first.item_id
    assert second.item_id
    elsewhere = catalog.decide(catalog.map("rec_elsewhere", first.item_id, source_id="src_bazaar"))
    catalog.decide(catalog.map("rec_1", second.item_id))  # a correction: listing_mapping.corrected
    catalog.decide(catalog.review("rec_unknown"))

    published: list[RelayMessage] = []

    def collect(messages: Sequence[RelayMessage]) -> None:
        published.extend(messages)

    drained = False
    while not drained:
        drained = relay_batch(relay_db, collect, batch_size=4).drained

    deliveries = [m.body for m in reversed(published)] + [m.body for m in published]
    results = [apply_delivery(product_db, body) for body in deliveries]

    assert "ignored_duplicate" in {str(r.outcome) for r in results}
    assert results[-1].contiguous_position == catalog.committed_position()
    assert _public(catalog.owner_db) == _released(catalog.owner_db)
    assert _public(catalog.owner_db)[1] == {
        (first.listing_id, second.item_id),
        (second.listing_id, second.item_id),
        (elsewhere.listing_id, first.item_id),
    }

"""INV-08: the product projection equals the serial application of the committed stream, whatever the delivery
order. Hypothesis generates a valid stream (items, listings, mappings, merchants, source bindings, shipping
policies, incremental releases, with revisions and dependencies as docs/events.md defines them) and delivers it in
a random order with random duplicates. The inventory observation history and the public merchants are part of
the state compared.

The module's database, reset between the two deliveries of every example by TRUNCATE as the owner, keeps each
example cheap.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.product.consumer import Outcome, apply_delivery
from prw_platform.product.progress import stream_progress
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.items import NO_FILTERS, serialize_item
from prw_platform.product.public.merchants import serialize_merchant_page
from prw_platform.product.scopes import project_catalog
from tests.integration.product.conftest import PRODUCT_TABLES
from tests.unit.product.stream import CATALOG, EPOCH, TENANT, StreamBuilder

ITEMS = ("itm_a", "itm_b", "itm_c")
LISTINGS = ("lst_1", "lst_2", "lst_3")
MERCHANTS = ("mer_a", "mer_b", "mer_c")
SOURCES = ("src_shop_a", "src_shop_b")
#: Every product table but the projected scope: what one example's stream leaves behind.
STREAM_TABLES = tuple(table for table in PRODUCT_TABLES if table != "projected_scope")
# Everything but timestamps: the state a reader can observe.
SNAPSHOT_QUERIES = {
    "items": "SELECT item_id, revision, status, fields, position FROM product.item_projection ORDER BY 1",
    "listings": "SELECT listing_id, revision, fields, position FROM product.listing_projection ORDER BY 1",
    "mappings": "SELECT listing_id, item_id, revision, fields FROM product.listing_mapping_projection ORDER BY 1",
    "applied": "SELECT aggregate_type, aggregate_id, revision, position FROM product.applied_revision ORDER BY 1, 2",
    "pointer": "SELECT release_id, publication_revision, position FROM product.release_pointer",
    "public_items": """SELECT item_id, published_revision, publication_revision, fields
                         FROM product.public_item ORDER BY 1""",
    "public_listings": """SELECT listing_id, item_id, mapping_revision, listing_revision, publication_revision,
                                 fields FROM product.public_listing ORDER BY 1""",
    "progress": "SELECT history_epoch, contiguous_position FROM product.progress",
    "parked": "SELECT count(*) AS n FROM product.parked_event",
    "merchants": "SELECT merchant_id, revision, fields, position FROM product.merchant_projection ORDER BY 1",
    "bindings": "SELECT source_id, revision, fields, position FROM product.merchant_source_projection ORDER BY 1",
    "policies": "SELECT merchant_id, revision, fields, position FROM product.shipping_policy_projection ORDER BY 1",
    "inventory": """SELECT listing_id, listing_revision, price, currency, availability, observed_at, position
                      FROM product.inventory_observation ORDER BY 1, 2""",
    "public_merchants": """SELECT merchant_id, published_revision, publication_revision, fields
                             FROM product.public_merchant ORDER BY 1""",
    "public_bindings": """SELECT source_id, merchant_id, published_revision, publication_revision
                            FROM product.public_merchant_source ORDER BY 1""",
    "public_policies": """SELECT merchant_id, published_revision, publication_revision, fields
                            FROM product.public_shipping_policy ORDER BY 1""",
    # Seed 004: item pictures and product classes, internal and released.
    "pictures": """SELECT item_id, revision, fields, position FROM product.item_pictures_projection
                     ORDER BY 1""",
    "classes": """SELECT class_id, revision, deleted, fields, position FROM product.product_class_projection
                    ORDER BY 1""",
    "public_pictures": """SELECT item_id, published_revision, publication_revision, fields
                            FROM product.public_item_pictures ORDER BY 1""",
    "public_classes": """SELECT class_id, published_revision, publication_revision, fields
                           FROM product.public_class ORDER BY 1""",
}
CLASSES = ("cls_a", "cls_b", "cls_c")


@pytest.fixture(scope="module")
def stream_dbs(product_module_db_url: str) -> Iterator[tuple[Database, Database]]:
    owner = Database(product_module_db_url, role=None, max_size=2).open()
    product = Database(product_module_db_url, role=roles.PRODUCT_APP, max_size=2).open()
    project_catalog(product, TENANT, CATALOG, EPOCH)
    try:
        yield owner, product
    finally:
        product.close()
        owner.close()


Command = tuple[str, int, int]
commands = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "item",
                "item",
                "listing",
                "listing",
                "mapping",
                "mapping",
                "release",
                "merchant",
                "bind",
                "policy",
                "pictures",
                "class",
                "delete_class",
            ]
        ),
        st.integers(0, len(ITEMS) - 1),
        st.integers(0, len(LISTINGS) - 1),
    ),
    min_size=1,
    max_size=14,
)


def build_stream(script: list[Command]) -> list[dict[str, Any]]:
    """Play a script against the resolver stand-in, skipping commands that are not valid yet."""
    stream = StreamBuilder()
    messages: list[dict[str, Any]] = []
    for step, (kind, item_index, listing_index) in enumerate(script):
        item_id, listing_id = ITEMS[item_index], LISTINGS[listing_index]
        if kind == "item":
            messages.append(stream.item(item_id, title=f"{item_id} v{step}"))
        elif kind == "listing":
            messages.append(
                stream.listing(
                    listing_id, price=f"{10 + step}.00", source_id=SOURCES[listing_index % len(SOURCES)]
                )
            )
        elif kind == "mapping" and item_id in stream.items and listing_id in stream.listings:
            messages.append(stream.mapping(listing_id, item_id))
        elif kind == "release" and stream.has_unreleased():
            messages.append(stream.release())
        elif kind == "merchant":
            messages.append(stream.merchant(MERCHANTS[item_index], name=f"{MERCHANTS[item_index]} v{step}"))
        elif kind in {"bind", "policy"} and stream.revision("merchant", MERCHANTS[item_index]):
            merchant = MERCHANTS[item_index]
            messages.append(
                stream.bind_source(SOURCES[listing_index % len(SOURCES)], merchant)
                if kind == "bind"
                else stream.shipping_policy(merchant, {"DE": f"{step}.00"}, free_shipping_threshold="50")
            )
        elif kind == "pictures":
            messages.append(stream.item_pictures(item_id, _picture(step), [_picture(step + 100)]))
        elif kind == "class":
            messages.append(
                stream.product_class(CLASSES[listing_index], f"class v{step}", _picture(step), [item_id])
            )
        elif kind == "delete_class" and stream.picture_facts.get(("product_class", CLASSES[listing_index])):
            messages.append(stream.delete_class(CLASSES[listing_index]))
    return messages


def _picture(step: int) -> dict[str, Any]:
    return {
        "file": f"fil_{step}",
        "sha256": f"{step:064x}",
        "media_type": "image/png",
        "size_bytes": 10 + step,
    }


def reset(owner: Database) -> None:
    with owner.transaction() as conn:
        conn.execute("TRUNCATE " + ", ".join(f"product.{table}" for table in STREAM_TABLES))


def observe(owner: Database, product: Database) -> dict[str, Any]:
    with owner.transaction() as conn:
        state: dict[str, Any] = {
            name: conn.execute(query).fetchall() for name, query in SNAPSHOT_QUERIES.items()
        }
    public = PublicCatalog(product, TENANT, CATALOG)
    details = [public.item(item.item_id) for item in public.items(NO_FILTERS, limit=100).items]
    state["public_json"] = [serialize_item(item) for item in details if item is not None]
    state["public_merchants_json"] = serialize_merchant_page(public.merchants())
    return state


def deliver_all(product: Database, messages: list[dict[str, Any]]) -> list[Outcome]:
    return [apply_delivery(product, message).outcome for message in messages]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(script=commands, data=st.data())
def test_inv08_any_delivery_order_with_duplicates_ends_in_the_serial_state(
    stream_dbs: tuple[Database, Database], script: list[Command], data: st.DataObject
) -> None:
    owner, product = stream_dbs
    messages = build_stream(script)
    assume(messages)

    reset(owner)
    serial_outcomes = deliver_all(product, messages)
    serial = observe(owner, product)

    order = data.draw(st.permutations(messages), label="delivery order")
    duplicates = data.draw(st.lists(st.sampled_from(messages), max_size=4), label="duplicates")
    deliveries = list(order)
    for duplicate in duplicates:
        deliveries.insert(data.draw(st.integers(0, len(deliveries)), label="duplicate at"), duplicate)
    reset(owner)
    outcomes = deliver_all(product, deliveries)
    shuffled = observe(owner, product)

    # Serial application in position order never waits or ignores anything.
    assert set(serial_outcomes) == {Outcome.APPLIED}
    assert serial["progress"] == [{"history_epoch": EPOCH, "contiguous_position": len(messages)}]
    assert shuffled == serial
    assert outcomes.count(Outcome.IGNORED_DUPLICATE) == len(duplicates)
    (report,) = stream_progress(product, TENANT)
    assert (report.applied_position, report.parked_count) == (len(messages), 0)

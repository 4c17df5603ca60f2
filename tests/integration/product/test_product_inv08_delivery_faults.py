"""INV-08 under every delivery fault the queue and the consumer may produce, at least 2,000 examples.

Hypothesis generates a valid committed stream (items, listings, mappings, incremental releases; revisions and
dependencies as docs/events.md defines them: ``StreamBuilder``, the resolver outbox's stand-in) and a delivery
history for it: reordered and delayed (a permutation), duplicated, some deliveries dropped (never delivered),
some dead-lettered (they arrive broken: SCHEMA_INVALID), batches of random size applied one product transaction
per stream (``apply_batch``, the driver's path), and consumer crashes between a batch's commit and its acks (the
whole batch is delivered again later). Then the gap closer fetches the stream from an export source serving the
committed stream (``gaps.close_gap``, the function the ``gaps`` stage runs over HTTP; the HTTP path itself is
tests/e2e/product/test_gap_closure_http.py).

Checked: contiguous progress reaches the head, nothing stays parked, and the projection equals the serial state
computed in Python from the stream in position order (each aggregate at its last revision; the public release
at the stream's last release). Each example has a catalog and history epoch of its own on one module database,
so no reset is needed between examples.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prw_platform.contracts import StreamKey
from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.product.consumer import Outcome, apply_batch
from prw_platform.product.gaps import ExportedPage, close_gap
from prw_platform.product.scopes import project_catalog
from tests.unit.product.stream import TENANT, StreamBuilder

ITEMS = ("itm_a", "itm_b", "itm_c")
LISTINGS = ("lst_1", "lst_2", "lst_3")
MERCHANTS = ("mer_a", "mer_b", "mer_c")
SOURCES = ("src_shop_a", "src_shop_b")
MERCHANT_FACTS = ("merchant", "merchant_source", "shipping_policy")
EXAMPLES = itertools.count(1)


@pytest.fixture(scope="module")
def dbs(product_module_db_url: str) -> Iterator[tuple[Database, Database]]:
    owner = Database(product_module_db_url, role=None, max_size=2).open()
    product = Database(product_module_db_url, role=roles.PRODUCT_APP, max_size=2).open()
    try:
        yield owner, product
    finally:
        product.close()
        owner.close()


class CommittedStream:
    """The export source: the committed stream, served from any position (what GET /v1/exports/events serves)."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.fetches = 0

    def fetch(self, stream: StreamKey, after: int, limit: int) -> ExportedPage:
        self.fetches += 1
        return ExportedPage(head=len(self.messages), events=tuple(self.messages[after : after + limit]))


commands = st.lists(
    st.tuples(
        st.sampled_from(
            ["item", "item", "listing", "mapping", "mapping", "release", "merchant", "bind", "policy"]
        ),
        st.integers(0, len(ITEMS) - 1),
        st.integers(0, len(LISTINGS) - 1),
    ),
    min_size=1,
    max_size=12,
)


def build_stream(stream: StreamBuilder, script: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for step, (kind, item_index, listing_index) in enumerate(script):
        item_id, listing_id = ITEMS[item_index], LISTINGS[listing_index]
        if kind == "item":
            messages.append(stream.item(item_id, title=f"{item_id} v{step}"))
        elif kind == "listing":
            messages.append(stream.listing(listing_id, price=f"{10 + step}.00"))
        elif kind == "mapping" and item_id in stream.items and listing_id in stream.listings:
            messages.append(stream.mapping(listing_id, item_id))
        elif kind == "release" and stream.has_unreleased():
            messages.append(stream.release())
        elif kind == "merchant":
            messages.append(stream.merchant(MERCHANTS[item_index], name=f"merchant v{step}"))
        elif kind == "bind" and stream.revision("merchant", MERCHANTS[item_index]):
            messages.append(stream.bind_source(SOURCES[listing_index % len(SOURCES)], MERCHANTS[item_index]))
        elif kind == "policy" and stream.revision("merchant", MERCHANTS[item_index]):
            messages.append(stream.shipping_policy(MERCHANTS[item_index], {"DE": f"{step}.00"}))
    return messages


def broken(message: dict[str, Any]) -> dict[str, Any]:
    """The same delivery with its envelope damaged on the way: SCHEMA_INVALID, dead-lettered."""
    damaged = dict(message)
    del damaged["accepted_at"]
    return damaged


def serial_state(messages: list[dict[str, Any]], stream: StreamBuilder) -> dict[str, Any]:
    last: dict[tuple[str, str], dict[str, Any]] = {}
    for m in messages:
        last[(m["aggregate"]["type"], m["aggregate"]["id"])] = m
    state: dict[str, Any] = {"items": [], "listings": [], "mappings": [], "applied": [], "merchant_facts": []}
    for (kind, aggregate_id), m in sorted(last.items()):
        revision, position, payload = m["aggregate"]["revision"], m["sequence"], m["payload"]
        state["applied"].append((kind, aggregate_id, revision, position))
        if kind == "catalog_item":
            state["items"].append(
                (aggregate_id, revision, payload["status"], json.dumps(payload, sort_keys=True))
            )
        elif kind == "listing":
            state["listings"].append((aggregate_id, revision, json.dumps(payload, sort_keys=True)))
        elif kind == "listing_mapping":
            state["mappings"].append((aggregate_id, payload["item"], revision))
        elif kind in MERCHANT_FACTS:
            state["merchant_facts"].append(
                (kind, aggregate_id, revision, json.dumps(payload, sort_keys=True))
            )
    # Every observation of a listing, kept (the inventory history), whatever the delivery order.
    state["inventory"] = sorted(
        (m["aggregate"]["id"], m["aggregate"]["revision"], m["payload"]["price"])
        for m in messages
        if m["type"] == "listing.observed"
    )
    state["public_merchant_facts"] = sorted(
        (*key, revision) for key, revision in stream.released_merchant_facts.items()
    )
    releases = [m for m in messages if m["aggregate"]["type"] == "release"]
    state["pointer"] = [releases[-1]["aggregate"]["revision"]] if releases else []
    state["public_items"] = sorted(stream.released_items.items())
    state["public_listings"] = sorted((k, *v) for k, v in stream.released_listings.items())
    state["progress"] = len(messages)
    state["parked"] = 0
    return state


STATE_QUERIES = {
    "items": """SELECT item_id, revision, status, fields FROM product.item_projection
                 WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1""",
    "listings": """SELECT listing_id, revision, fields FROM product.listing_projection
                    WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1""",
    "mappings": """SELECT listing_id, item_id, revision FROM product.listing_mapping_projection
                    WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1""",
    "applied": """SELECT aggregate_type, aggregate_id, revision, position FROM product.applied_revision
                   WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1, 2""",
    "pointer": """SELECT publication_revision FROM product.release_pointer
                   WHERE tenant_id = %s AND catalog_id = %s""",
    "public_items": """SELECT item_id, published_revision FROM product.public_item
                        WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1""",
    "public_listings": """SELECT listing_id, item_id, mapping_revision, listing_revision FROM product.public_listing
                           WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1""",
    "progress": """SELECT coalesce(sum(contiguous_position), 0) FROM product.progress
                    WHERE tenant_id = %s AND catalog_id = %s""",
    "parked": "SELECT count(*) FROM product.parked_event WHERE tenant_id = %s AND catalog_id = %s",
    "merchant_facts": """SELECT * FROM (
            SELECT 'merchant' AS t, merchant_id AS id, revision, fields, tenant_id, catalog_id
              FROM product.merchant_projection
            UNION ALL SELECT 'merchant_source', source_id, revision, fields, tenant_id, catalog_id
              FROM product.merchant_source_projection
            UNION ALL SELECT 'shipping_policy', merchant_id, revision, fields, tenant_id, catalog_id
              FROM product.shipping_policy_projection) AS f
         WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1, 2""",
    "inventory": """SELECT listing_id, listing_revision, price::text FROM product.inventory_observation
                     WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1, 2""",
    "public_merchant_facts": """SELECT * FROM (
            SELECT 'merchant' AS t, merchant_id AS id, published_revision, tenant_id, catalog_id
              FROM product.public_merchant
            UNION ALL SELECT 'merchant_source', source_id, published_revision, tenant_id, catalog_id
              FROM product.public_merchant_source
            UNION ALL SELECT 'shipping_policy', merchant_id, published_revision, tenant_id, catalog_id
              FROM product.public_shipping_policy) AS p
         WHERE tenant_id = %s AND catalog_id = %s ORDER BY 1, 2""",
}


def observed_state(owner: Database, catalog_id: str) -> dict[str, Any]:
    with owner.transaction() as conn:
        state = {
            name: [tuple(r.values()) for r in conn.execute(query, (TENANT, catalog_id)).fetchall()]
            for name, query in STATE_QUERIES.items()
        }
    state["items"] = [(i, r, s, json.dumps(f, sort_keys=True)) for i, r, s, f in state["items"]]
    state["listings"] = [(i, r, json.dumps(f, sort_keys=True)) for i, r, f in state["listings"]]
    state["merchant_facts"] = [
        (t, i, r, json.dumps(f, sort_keys=True)) for t, i, r, f, _, _ in state["merchant_facts"]
    ]
    state["public_merchant_facts"] = [(t, i, r) for t, i, r, _, _ in state["public_merchant_facts"]]
    state["pointer"] = [r[0] for r in state["pointer"]]
    state["progress"] = state["progress"][0][0]
    state["parked"] = state["parked"][0][0]
    return state


def check_delivery_history(  # the property; four tests below run it
    dbs: tuple[Database, Database], script: list[tuple[str, int, int]], data: st.DataObject
) -> None:
    owner, product = dbs
    n = next(EXAMPLES)
    stream = StreamBuilder(catalog_id=f"cat_p{n:05d}", history_epoch=f"hep_p{n:05d}")
    messages = build_stream(stream, script)
    assume(messages)
    project_catalog(product, TENANT, stream.catalog_id, stream.history_epoch)

    # The delivery history: reordered and delayed, duplicated, dropped, dead-lettered.
    order = data.draw(st.permutations(messages), label="delivery order")
    fate = data.draw(
        st.lists(
            st.sampled_from(["deliver", "deliver", "deliver", "twice", "drop", "dead_letter"]),
            min_size=len(order),
            max_size=len(order),
        ),
        label="fate per event",
    )
    pending: list[dict[str, Any]] = []
    for message, what in zip(order, fate, strict=True):
        if what == "drop":
            continue
        pending.append(broken(message) if what == "dead_letter" else message)
        if what == "twice":
            pending.insert(data.draw(st.integers(0, len(pending)), label="duplicate at"), message)

    # Batches of random size, one transaction per stream; a crash between commit and ack delivers the whole
    # batch again later (AW-04: "crash before ack -> redelivery -> inbox dedupe").
    crashes = 0
    while pending:
        size = data.draw(st.integers(1, len(pending)), label="batch size")
        batch, pending = pending[:size], pending[size:]
        entries = apply_batch(product, batch)
        rejected = [e.rejection.code for e in entries if e.rejection is not None]
        assert set(rejected) <= {"SCHEMA_INVALID"}
        if crashes < 2 and data.draw(st.booleans(), label="crash before ack"):
            crashes += 1
            for message in batch:
                if "accepted_at" in message:  # a dead-lettered delivery was settled (moved to the DLQ) before
                    pending.insert(data.draw(st.integers(0, len(pending)), label="redelivered at"), message)

    # Gap closure: the lost and the dead-lettered positions come from the export stream.
    source = CommittedStream(messages)
    closure = close_gap(product, source, StreamKey(TENANT, stream.catalog_id, stream.history_epoch), page=50)

    assert closure.failed is None
    assert closure.reached_head  # contiguous progress reaches the head
    assert observed_state(owner, stream.catalog_id) == serial_state(messages, stream)


def test_a_batch_in_position_order_applies_every_event(dbs: tuple[Database, Database]) -> None:
    """The serial baseline the property compares with: position order never parks or ignores anything."""
    owner, product = dbs
    stream = StreamBuilder(catalog_id="cat_serial", history_epoch="hep_serial")
    messages = build_stream(stream, [("item", 0, 0), ("listing", 0, 0), ("mapping", 0, 0), ("release", 0, 0)])
    project_catalog(product, TENANT, stream.catalog_id, stream.history_epoch)

    entries = apply_batch(product, messages)

    assert [e.result.outcome for e in entries if e.result] == [Outcome.APPLIED] * 4
    assert observed_state(owner, stream.catalog_id) == serial_state(messages, stream)


# 4 x 500 = 2,000 examples in the suite, in four tests so that each stays within the suite's per-test timeout
# and the xdist workers run them side by side (an example costs Python time, not only the database's).
PART = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PART
@given(script=commands, data=st.data())
def test_inv08_delivery_faults_part_1(
    dbs: tuple[Database, Database], script: list[tuple[str, int, int]], data: st.DataObject
) -> None:
    check_delivery_history(dbs, script, data)


@PART
@given(script=commands, data=st.data())
def test_inv08_delivery_faults_part_2(
    dbs: tuple[Database, Database], script: list[tuple[str, int, int]], data: st.DataObject
) -> None:
    check_delivery_history(dbs, script, data)


@PART
@given(script=commands, data=st.data())
def test_inv08_delivery_faults_part_3(
    dbs: tuple[Database, Database], script: list[tuple[str, int, int]], data: st.DataObject
) -> None:
    check_delivery_history(dbs, script, data)


@PART
@given(script=commands, data=st.data())
def test_inv08_delivery_faults_part_4(
    dbs: tuple[Database, Database], script: list[tuple[str, int, int]], data: st.DataObject
) -> None:
    check_delivery_history(dbs, script, data)

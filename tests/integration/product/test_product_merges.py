"""Merges on the product side (AW-04, INV-08): ``catalog_item.merged`` is deduped, parked and ignored when stale like
every event, and a release that names a merge withdraws the merged item and records its redirect, which the public
read follows through chains. Whatever the delivery order and duplication of a stream with merges, the product ends
in the state of its serial application."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prw_platform.db.database import Database
from prw_platform.product.consumer import Outcome, apply_delivery
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.scopes import ProjectedScope
from tests.integration.product.tables import item_projection, parked_event_ids
from tests.integration.product.test_product_inv08 import deliver_all, observe, reset
from tests.integration.product.test_product_inv08 import stream_dbs as stream_dbs  # the module's fixture
from tests.unit.product.stream import CATALOG, EPOCH, TENANT, StreamBuilder


def _redirects(owner_db: Database) -> list[dict[str, Any]]:
    with owner_db.transaction() as conn:
        return conn.execute(
            "SELECT item_id, target_item_id, publication_revision FROM product.public_item_redirect ORDER BY 1"
        ).fetchall()


def _merge(stream: StreamBuilder, item_id: str, into: str) -> list[dict[str, Any]]:
    """What a merge decision writes: the merged item's listings remapped, then ``catalog_item.merged``."""
    moved = [listing for listing, owner in sorted(stream.mappings.items()) if owner == item_id]
    return [*(stream.mapping(listing, into) for listing in moved), stream.merge(item_id, into)]


def _published_pair(stream: StreamBuilder) -> list[dict[str, Any]]:
    """Items a and b, a listing each, released."""
    return [
        stream.item("itm_a"),
        stream.item("itm_b", title="Lumen P5 1 TB SSD (retail box)"),
        stream.listing("lst_1"),
        stream.listing("lst_2"),
        stream.mapping("lst_1", "itm_a"),
        stream.mapping("lst_2", "itm_b"),
        stream.release(),
    ]


def test_a_merge_waits_for_the_survivor_revision_it_depends_on(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    deliver_all(product_db, [stream.item("itm_a"), stream.item("itm_b")])
    survivor_update = stream.item("itm_b", title="Lumen P5 1 TB SSD (2026)")
    merged = stream.merge("itm_a", "itm_b")

    parked = apply_delivery(product_db, merged)

    assert parked.outcome is Outcome.PARKED
    assert parked_event_ids(owner_db) == [merged["event_id"]]
    row = item_projection(owner_db, "itm_a")
    assert row is not None
    assert row["status"] == "active"

    released = apply_delivery(product_db, survivor_update)

    assert released.outcome is Outcome.APPLIED
    assert merged["event_id"] in released.released
    assert parked_event_ids(owner_db) == []
    row = item_projection(owner_db, "itm_a")
    assert row is not None
    assert (row["revision"], row["status"], row["fields"]["merged_into"]) == (2, "retired", "itm_b")


def test_a_merge_delivered_twice_is_a_duplicate_and_an_older_revision_after_it_is_stale(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    created = stream.item("itm_a")
    deliver_all(product_db, [created, stream.item("itm_b")])
    merged = stream.merge("itm_a", "itm_b")
    assert apply_delivery(product_db, merged).outcome is Outcome.APPLIED

    assert apply_delivery(product_db, merged).outcome is Outcome.IGNORED_DUPLICATE
    older = {**created, "event_id": "evt_late_copy_of_revision_1", "sequence": 99}
    assert apply_delivery(product_db, older).outcome is Outcome.IGNORED_STALE_REVISION
    row = item_projection(owner_db, "itm_a")
    assert row is not None
    assert (row["revision"], row["status"]) == (2, "retired")


def test_a_release_naming_merges_withdraws_the_items_and_redirects_through_the_chain(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    public = PublicCatalog(product_db, TENANT, CATALOG)
    deliver_all(product_db, [*_published_pair(stream), stream.item("itm_c"), stream.release()])
    assert public.item("itm_a") is not None

    merges = [*_merge(stream, "itm_a", "itm_b"), *_merge(stream, "itm_b", "itm_c")]
    deliver_all(product_db, merges)
    # Applied internally, not released: the public catalog has not changed.
    assert public.item("itm_a") is not None
    assert public.item_detail("itm_a").moved_to is None

    deliver_all(product_db, [stream.release()])

    assert _redirects(owner_db) == [
        {"item_id": "itm_a", "target_item_id": "itm_b", "publication_revision": 3},
        {"item_id": "itm_b", "target_item_id": "itm_c", "publication_revision": 3},
    ]
    for merged in ("itm_a", "itm_b"):
        detail = public.item_detail(merged)
        assert (detail.entry, detail.moved_to) == (None, "itm_c")
        assert public.item_listings(merged).moved_to == "itm_c"
    survivor = public.item("itm_c")
    assert survivor is not None
    assert survivor.listings is not None
    assert sorted(listing.listing_id for listing in survivor.listings) == ["lst_1", "lst_2"]
    assert public.item_detail("itm_missing").moved_to is None


def test_a_redirect_to_an_item_no_longer_public_is_not_followed(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    public = PublicCatalog(product_db, TENANT, CATALOG)
    deliver_all(product_db, [*_published_pair(stream), *_merge(stream, "itm_a", "itm_b"), stream.release()])
    assert public.item_detail("itm_a").moved_to == "itm_b"
    # The survivor retired in turn (a release that names it in retired_items): the merged id leads nowhere public.
    retired = stream.item("itm_b", status="retired")
    release = stream.release()
    release["payload"]["retired_items"] = [{"item": "itm_b", "revision": retired["aggregate"]["revision"]}]
    release["dependencies"].append(retired["aggregate"])
    deliver_all(product_db, [retired, release])

    detail = public.item_detail("itm_a")
    assert (detail.entry, detail.moved_to) == (None, None)


_ITEMS = ("itm_a", "itm_b", "itm_c", "itm_d")
_script = st.lists(
    st.tuples(
        st.sampled_from(["item", "listing", "mapping", "merge", "merge", "release", "release"]),
        st.integers(0, len(_ITEMS) - 1),
        st.integers(0, len(_ITEMS) - 1),
    ),
    min_size=1,
    max_size=14,
)


def _stream_with_merges(script: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    """A consistent stream: items, listings, mappings to active items, merges of an active item into another
    (its listings remapped first, as the resolver writes them), releases; at least one merge, and a release at the
    end so that the merges are public."""
    stream = StreamBuilder()
    messages = [stream.item(item_id) for item_id in _ITEMS[:3]]
    messages += [stream.listing("lst_0"), stream.listing("lst_1")]
    messages += [stream.mapping("lst_0", "itm_a"), stream.mapping("lst_1", "itm_b")]
    for step, (kind, first, second) in enumerate(script):
        item_id, other = _ITEMS[first], _ITEMS[second]
        active = {i for i, payload in stream.items.items() if payload["status"] == "active"}
        listing_id = f"lst_{second}"
        if kind == "item" and (item_id in active or item_id not in stream.items):
            messages.append(stream.item(item_id, title=f"{item_id} v{step}"))
        elif kind == "listing":
            messages.append(stream.listing(listing_id, price=f"{10 + step}.00"))
        elif kind == "mapping" and item_id in active and listing_id in stream.listings:
            messages.append(stream.mapping(listing_id, item_id))
        elif kind == "merge" and item_id in active and other in active and item_id != other:
            messages += _merge(stream, item_id, other)
        elif kind == "release" and stream.has_unreleased():
            messages.append(stream.release())
    if not any(message["type"] == "catalog_item.merged" for message in messages):
        active = sorted(i for i, payload in stream.items.items() if payload["status"] == "active")
        messages += _merge(stream, active[0], active[1])
    if stream.has_unreleased():
        messages.append(stream.release())
    return messages


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=_script, data=st.data())
def test_inv08_a_stream_with_merges_ends_in_the_serial_state_whatever_the_delivery_order(
    stream_dbs: tuple[Database, Database], script: list[tuple[str, int, int]], data: st.DataObject
) -> None:
    owner, product = stream_dbs
    messages = _stream_with_merges(script)

    reset(owner)
    serial_outcomes = deliver_all(product, messages)
    serial = {**observe(owner, product), "redirects": _redirects(owner), "moved": _moved(product)}

    order = data.draw(st.permutations(messages), label="delivery order")
    duplicates = data.draw(st.lists(st.sampled_from(messages), max_size=3), label="duplicates")
    deliveries = list(order)
    for duplicate in duplicates:
        deliveries.insert(data.draw(st.integers(0, len(deliveries)), label="duplicate at"), duplicate)
    reset(owner)
    outcomes = deliver_all(product, deliveries)
    shuffled = {**observe(owner, product), "redirects": _redirects(owner), "moved": _moved(product)}

    assert set(serial_outcomes) == {Outcome.APPLIED}
    assert serial["progress"] == [{"history_epoch": EPOCH, "contiguous_position": len(messages)}]
    assert shuffled == serial
    assert outcomes.count(Outcome.IGNORED_DUPLICATE) == len(duplicates)


def _moved(product: Database) -> dict[str, str | None]:
    public = PublicCatalog(product, TENANT, CATALOG)
    return {item_id: public.item_detail(item_id).moved_to for item_id in _ITEMS}

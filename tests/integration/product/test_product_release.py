"""Releases and the public read model (if_product_query): only released data is public, through one serializer."""

from __future__ import annotations

import json
from typing import Any

from prw_platform.db.database import Database
from prw_platform.product.consumer import Outcome, apply_delivery
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.items import NO_FILTERS, ItemFilters, serialize_item, serialize_page
from prw_platform.product.scopes import ProjectedScope
from tests.unit.product.stream import CATALOG, TENANT, StreamBuilder

INTERNAL_MARKERS = ("capture", "cap_", "decision", "dec_", "evidence", "review", "status")


def _deliver(db: Database, *messages: dict[str, Any]) -> None:
    for message in messages:
        apply_delivery(db, message)


def _public_ids(db: Database) -> list[str]:
    return [item.item_id for item in PublicCatalog(db, TENANT, CATALOG).items(NO_FILTERS).items]


def test_applied_items_are_not_public_until_a_release_applies(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    _deliver(product_db, stream.item("itm_ssd_p5_1t"), stream.listing("lst_lum_p5"))
    _deliver(product_db, stream.mapping("lst_lum_p5", "itm_ssd_p5_1t"))

    assert _public_ids(product_db) == []
    assert PublicCatalog(product_db, TENANT, CATALOG).item("itm_ssd_p5_1t") is None
    assert PublicCatalog(product_db, TENANT, CATALOG).items(NO_FILTERS).publication_revision is None

    _deliver(product_db, stream.release())

    assert _public_ids(product_db) == ["itm_ssd_p5_1t"]
    detail = PublicCatalog(product_db, TENANT, CATALOG).item("itm_ssd_p5_1t")
    assert detail is not None
    assert [listing.listing_id for listing in detail.listings or ()] == ["lst_lum_p5"]


def test_item_identity_and_revisions_agree_between_collection_and_detail(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    _deliver(product_db, stream.item("itm_a"), stream.release(), stream.item("itm_b"), stream.release())

    page = serialize_page(PublicCatalog(product_db, TENANT, CATALOG).items(NO_FILTERS))

    assert page["publication_revision"] == 2
    for entry in page["items"]:
        found = PublicCatalog(product_db, TENANT, CATALOG).item(entry["item"])
        assert found is not None
        detail = serialize_item(found)
        assert detail.pop("listings") == []
        assert detail == entry
    assert [(e["item"], e["published_revision"], e["publication_revision"]) for e in page["items"]] == [
        ("itm_a", 1, 1),
        ("itm_b", 1, 2),
    ]


def test_a_later_internal_update_stays_private_until_the_next_release(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    _deliver(product_db, stream.item("itm_ssd_p5_1t", title="Lumen P5"), stream.release())
    update = stream.item("itm_ssd_p5_1t", title="Lumen P5 Plus")
    assert apply_delivery(product_db, update).outcome is Outcome.APPLIED

    public = PublicCatalog(product_db, TENANT, CATALOG).item("itm_ssd_p5_1t")
    assert public is not None
    assert (public.fields["title"], public.published_revision, public.publication_revision) == (
        "Lumen P5",
        1,
        1,
    )

    _deliver(product_db, stream.release())

    public = PublicCatalog(product_db, TENANT, CATALOG).item("itm_ssd_p5_1t")
    assert public is not None
    assert (public.fields["title"], public.published_revision, public.publication_revision) == (
        "Lumen P5 Plus",
        2,
        2,
    )


def test_a_release_publishes_its_snapshot_even_when_the_item_moved_on_internally(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    created = stream.item("itm_ssd_p5_1t", title="Lumen P5")
    release = stream.release()
    update = stream.item("itm_ssd_p5_1t", title="Lumen P5 Plus")
    # The update applies before the release that was authorized at revision 1.
    _deliver(product_db, created, update, release)

    public = PublicCatalog(product_db, TENANT, CATALOG).item("itm_ssd_p5_1t")
    assert public is not None
    assert (public.fields["title"], public.published_revision) == ("Lumen P5", 1)


def test_releases_apply_in_revision_order_so_an_earlier_release_is_never_lost(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    item_a = stream.item("itm_a")
    first = stream.release()
    item_b = stream.item("itm_b")
    second = stream.release()
    _deliver(product_db, item_a, item_b)

    assert apply_delivery(product_db, second).outcome is Outcome.PARKED
    assert _public_ids(product_db) == []
    result = apply_delivery(product_db, first)

    assert result.released == (second["event_id"],)
    assert _public_ids(product_db) == ["itm_a", "itm_b"]
    assert PublicCatalog(product_db, TENANT, CATALOG).items(NO_FILTERS).publication_revision == 2


def test_inv01_a_released_remap_moves_the_single_public_owner_of_a_listing(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    _deliver(product_db, stream.item("itm_a"), stream.item("itm_b"), stream.listing("lst_1"))
    _deliver(product_db, stream.mapping("lst_1", "itm_a"), stream.release())
    remap = stream.mapping("lst_1", "itm_b")
    _deliver(product_db, remap)

    # if_product_query: "a later internal remap remains private until an applied release".
    still = PublicCatalog(product_db, TENANT, CATALOG).item("itm_a")
    assert still is not None
    assert [listing.listing_id for listing in still.listings or ()] == ["lst_1"]

    _deliver(product_db, stream.release())

    old_owner = PublicCatalog(product_db, TENANT, CATALOG).item("itm_a")
    new_owner = PublicCatalog(product_db, TENANT, CATALOG).item("itm_b")
    assert old_owner is not None
    assert new_owner is not None
    assert old_owner.listings == ()
    assert [(listing.listing_id, listing.item_id) for listing in new_owner.listings or ()] == [
        ("lst_1", "itm_b")
    ]


def test_public_json_never_carries_capture_decision_review_or_evidence_references(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    _deliver(product_db, stream.item("itm_ssd_p5_1t", gtin="04006381333931"), stream.listing("lst_lum_p5"))
    _deliver(product_db, stream.mapping("lst_lum_p5", "itm_ssd_p5_1t"))
    release = stream.release()
    # A snapshot that leaks internal keys at every level must still serialize clean.
    item_fields = release["payload"]["items"][0]["fields"]
    item_fields.update({"evidence": ["cap_lum_0310"], "decision_id": "dec_0141", "review_case": "rc_1"})
    item_fields["identifiers"]["capture_id"] = "cap_lum_0310"
    item_fields["attributes"] = {
        "storage:capacity": {"value": 1, "unit": "TB", "definition_version": 4, "evidence": "cap_lum_0310"}
    }
    release["payload"]["listings"][0]["fields"].update({"capture_id": "cap_lum_0310", "decision": "dec_0141"})
    _deliver(product_db, release)

    detail = PublicCatalog(product_db, TENANT, CATALOG).item("itm_ssd_p5_1t")
    assert detail is not None
    documents = [
        serialize_item(detail),
        serialize_page(PublicCatalog(product_db, TENANT, CATALOG).items(NO_FILTERS)),
    ]
    text = json.dumps(documents)

    for marker in INTERNAL_MARKERS:
        assert marker not in text, marker
    item_json = documents[0]
    assert set(item_json) == {
        "item",
        "published_revision",
        "publication_revision",
        "profile",
        "title",
        "brand",
        "identifiers",
        "attributes",
        "listings",
    }
    assert item_json["attributes"] == {
        "storage:capacity": {"value": 1, "unit": "TB", "definition_version": 4}
    }
    assert set(item_json["listings"][0]) == {
        "listing",
        "item",
        "source_id",
        "url",
        "title",
        "price",
        "currency",
        "availability",
        "observed_at",
        "publication_revision",
    }
    assert item_json["listings"][0]["observed_at"] == "2026-10-10T03:31:55+00:00"


def test_public_items_filter_by_brand_identifier_text_and_attribute(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    capacity_1tb = {"storage:capacity": {"value": 1, "unit": "TB", "definition_version": 4}}
    capacity_2tb = {"storage:capacity": {"value": 2, "unit": "TB", "definition_version": 4}}
    _deliver(
        product_db,
        stream.item("itm_a", title="Lumen P5 1TB", brand="Lumen", gtin="111", attributes=capacity_1tb),
        stream.item("itm_b", title="Lumen P5 2TB", brand="Lumen", mpn="P5-2T", attributes=capacity_2tb),
        stream.item("itm_c", title="Orbit 100% fast", brand="Orbit"),
        stream.release(),
    )

    def ids(filters: ItemFilters) -> list[str]:
        return [item.item_id for item in PublicCatalog(product_db, TENANT, CATALOG).items(filters).items]

    assert ids(ItemFilters(brand="lumen")) == ["itm_a", "itm_b"]
    assert ids(ItemFilters(gtin="111")) == ["itm_a"]
    assert ids(ItemFilters(mpn="P5-2T")) == ["itm_b"]
    assert ids(ItemFilters(text="p5 2")) == ["itm_b"]
    assert ids(ItemFilters(text="100%")) == ["itm_c"]
    assert ids(ItemFilters(text="%")) == ["itm_c"]
    assert ids(ItemFilters(attributes=(("storage:capacity", "1 TB"),))) == ["itm_a"]
    assert ids(ItemFilters(attributes=(("storage:capacity", "2"),))) == ["itm_b"]
    assert ids(ItemFilters(brand="Lumen", attributes=(("storage:capacity", "3 TB"),))) == []
    assert ids(ItemFilters(profile="np_storage@1")) == ["itm_a", "itm_b", "itm_c"]


def test_public_items_paginate_by_cursor_without_gaps_or_repeats(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    _deliver(product_db, *[stream.item(f"itm_{n:02d}") for n in range(7)], stream.release())

    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = PublicCatalog(product_db, TENANT, CATALOG).items(NO_FILTERS, limit=3, cursor=cursor)
        seen.extend(item.item_id for item in page.items)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break

    assert seen == [f"itm_{n:02d}" for n in range(7)]
    assert pages == 3

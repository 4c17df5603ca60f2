"""The public whitelists and THE public serializer, without a database (if_product_query)."""

from __future__ import annotations

import json

import pytest

from prw_platform.db.database import Database
from prw_platform.inputs.countries import ISO_3166_ALPHA_2, is_country_code
from prw_platform.product.errors import InvalidQuery
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.fields import public_item_fields, public_listing_fields
from prw_platform.product.public.items import NO_FILTERS, ItemPage, PublicItem, PublicListing, serialize_page
from prw_platform.product.public.merchants import serialize_merchant
from prw_platform.product.public.rows import PublicMerchant

LEAKY_ITEM = {
    "item": "itm_a",
    "profile": "np_storage@1",
    "status": "active",
    "title": "Lumen P5",
    "brand": {"name": "Lumen", "evidence": "cap_1"},
    "identifiers": {"gtin": "04006381333931", "mpn": None, "capture_id": "cap_1"},
    "attributes": {
        "storage:capacity": {"value": 1, "unit": "TB", "definition_version": 4, "decision_id": "dec_1"},
        "storage:interfaces": {"value": ["NVMe", {"review": "rc_1"}]},
        "junk": "not an attribute",
    },
    "evidence": ["cap_1"],
    "decision_id": "dec_1",
}


def test_item_whitelist_keeps_public_fields_and_drops_everything_internal() -> None:
    assert public_item_fields(LEAKY_ITEM) == {
        "item": "itm_a",
        "profile": "np_storage@1",
        "title": "Lumen P5",
        "brand": None,
        "identifiers": {"gtin": "04006381333931", "mpn": None},
        "attributes": {
            "storage:capacity": {"value": 1, "unit": "TB", "definition_version": 4},
            "storage:interfaces": {"value": ["NVMe"]},
        },
    }


def test_listing_whitelist_keeps_the_original_url_and_observation_time() -> None:
    fields = public_listing_fields(
        {
            "listing": "lst_1",
            "source_id": "src_a",
            "url": "https://shop.example/p5",
            "observed_at": "2026-10-10T03:31:55Z",
            "capture_id": "cap_1",
            "price": {"amount": "1"},
        }
    )
    assert fields["url"] == "https://shop.example/p5"
    assert fields["observed_at"] == "2026-10-10T03:31:55Z"
    assert fields["price"] is None
    assert "capture_id" not in fields


def test_serializer_output_has_the_public_shape_only() -> None:
    listing = PublicListing("lst_1", "itm_a", 3, {"listing": "lst_1", "decision": "dec_1", "title": "P5"})
    item = PublicItem("itm_a", 2, 3, LEAKY_ITEM, (listing,))
    page = serialize_page(ItemPage((item,), next_cursor="abc", publication_revision=3))

    text = json.dumps(page)
    for marker in ("cap_", "dec_", "rc_", "evidence", "decision", "capture", "review", "status"):
        assert marker not in text
    assert page["items"][0]["listings"][0]["title"] == "P5"
    assert (page["next_cursor"], page["publication_revision"]) == ("abc", 3)


@pytest.mark.parametrize(("limit", "cursor"), [(0, None), (101, None), (10, "%%%"), (10, "_w")])
def test_a_malformed_limit_or_cursor_is_an_invalid_query(limit: int, cursor: str | None) -> None:
    never_opened = Database("postgresql:///unused", role=None)
    with pytest.raises(InvalidQuery) as raised:
        PublicCatalog(never_opened, "ten_synth_a", "cat_primary").items(
            NO_FILTERS, limit=limit, cursor=cursor
        )
    assert raised.value.code == "INVALID_QUERY"


def test_merchant_and_policy_fields_are_whitelisted_and_absent_values_left_out() -> None:
    merchant = PublicMerchant(
        "mer_a",
        1,
        2,
        {
            "merchant": "mer_a",
            "name": "Shop A",
            "url": None,
            "decision_id": "dec_1",
            "internal_tags": ["tag_x"],
        },
        ("src_a",),
        {
            "merchant": "mer_a",
            "currency": "EUR",
            "rates": [{"destination": "DE", "rate": "4.90", "evidence": ["cap_1"]}],
            "free_shipping_threshold": None,
            "review_case_id": "rc_1",
        },
    )

    document = serialize_merchant(merchant)

    assert document == {
        "merchant": "mer_a",
        "name": "Shop A",
        "sources": ["src_a"],
        "shipping_policy": {"currency": "EUR", "rates": [{"destination": "DE", "rate": "4.90"}]},
        "published_revision": 1,
        "publication_revision": 2,
    }


@pytest.mark.parametrize(
    ("code", "assigned"), [("DE", True), ("US", True), ("XK", False), ("ZZ", False), ("de", False)]
)
def test_only_assigned_iso_3166_alpha_2_codes_are_destinations(code: str, assigned: bool) -> None:
    assert is_country_code(code) is assigned
    assert len(ISO_3166_ALPHA_2) == 249

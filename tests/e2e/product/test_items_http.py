"""GET /v1/items and GET /v1/items/{id} over real HTTP (if_product_query): released data only, through the one
public serializer, with filters and keyset pagination. No request carries credentials: public reads need none."""

from __future__ import annotations

from typing import Any

import httpx

from prw_platform.db.database import Database
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.items import serialize_item
from prw_platform.storage import FilesystemObjectStore
from tests.e2e.product.catalog import CATALOG, PRIVATE_MARKERS, TENANT, Catalog
from tests.e2e.product.conftest import picture_links, served_catalog


def _ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [entry["item"] for entry in response.json()["items"]]


def _strings(document: Any) -> list[str]:
    """Every key and every string value in a JSON document."""
    if isinstance(document, dict):
        return [s for key, value in document.items() for s in [key, *_strings(value)]]
    if isinstance(document, list):
        return [s for value in document for s in _strings(value)]
    return [document] if isinstance(document, str) else []


def test_released_items_are_listed_in_item_order_with_the_current_release(
    http: httpx.Client, catalog: Catalog
) -> None:
    response = http.get("/v1/items")

    assert _ids(response) == list(catalog.released)
    page = response.json()
    assert page["next_cursor"] is None
    assert page["publication_revision"] == 2
    assert response.headers["content-type"] == "application/json"


def test_items_applied_but_never_released_are_neither_listed_nor_found(
    http: httpx.Client, catalog: Catalog
) -> None:
    listed = set(_ids(http.get("/v1/items", params={"limit": 100})))

    for item_id in catalog.unreleased:
        assert item_id not in listed
        assert http.get(f"/v1/items/{item_id}").status_code == 404


def test_a_change_applied_after_the_last_release_stays_private(http: httpx.Client) -> None:
    detail = http.get("/v1/items/itm_ssd_p5_1t").json()

    # The consumer applied revision 2 (the "2026 refresh" title); the release published revision 1.
    assert (detail["title"], detail["published_revision"], detail["publication_revision"]) == (
        "Lumen P5 1 TB SSD",
        1,
        1,
    )


def test_the_detail_shows_the_public_fields_and_the_listings_the_item_owns(http: httpx.Client) -> None:
    response = http.get("/v1/items/itm_ssd_p5_1t")

    assert response.status_code == 200
    detail = response.json()
    # Seed 004: the pictures the second release published (not the one applied since), as signed links.
    pictures = detail.pop("pictures")
    assert set(pictures) == {"main", "gallery"}
    assert pictures["main"].keys() == {"url", "content_type", "size_bytes"}
    assert (pictures["main"]["content_type"], len(pictures["gallery"])) == ("image/png", 1)
    assert detail == {
        "item": "itm_ssd_p5_1t",
        "published_revision": 1,
        "publication_revision": 1,
        "profile": "np_storage@1",
        "title": "Lumen P5 1 TB SSD",
        "brand": "Lumen",
        "identifiers": {"gtin": "04006381333931", "mpn": "P5-1T"},
        "attributes": {
            "storage:capacity": {"value": "1000", "unit": "GB", "definition_version": 1},
            "storage:interface": {"value": "nvme", "definition_version": 1},
        },
        "listings": [
            {
                "listing": "lst_lum_p5_1t",
                "item": "itm_ssd_p5_1t",
                "source_id": "src_shop_a",
                "url": "https://shop.example/lst_lum_p5_1t",
                "title": "Lumen P5 SSD 1TB (retail)",
                "price": "89.90",
                "currency": "EUR",
                "availability": "in_stock",
                "observed_at": "2026-10-10T03:31:55+00:00",
                "publication_revision": 1,
            },
            {
                "listing": "lst_shop_p5_1t",
                "item": "itm_ssd_p5_1t",
                "source_id": "src_shop_b",
                "url": "https://shop.example/lst_shop_p5_1t",
                "title": "P5 1TB NVMe",
                "price": "84.50",
                "currency": "EUR",
                "availability": "in_stock",
                "observed_at": "2026-10-10T03:31:55+00:00",
                "publication_revision": 1,
            },
        ],
    }


def test_the_http_json_is_exactly_the_public_serializer_output(
    http: httpx.Client, catalog: Catalog, module_product_db: Database, picture_store: FilesystemObjectStore
) -> None:
    collection = {entry["item"]: entry for entry in http.get("/v1/items").json()["items"]}
    # The server's signer: links of one expiry window are the same in every document.
    render = served_catalog(module_product_db, picture_links(picture_store)).picture_render()

    for item_id in catalog.released:
        found = PublicCatalog(module_product_db, TENANT, CATALOG).item(item_id)
        assert found is not None
        serialized = serialize_item(found, render)
        assert http.get(f"/v1/items/{item_id}").json() == serialized
        # Collection and detail agree on identity and revisions (if_product_query Authorization).
        serialized.pop("listings")
        assert collection[item_id] == serialized


def test_the_json_never_contains_capture_decision_review_or_evidence_references(
    http: httpx.Client, catalog: Catalog
) -> None:
    documents = [http.get("/v1/items", params={"limit": 100}).json()]
    documents += [http.get(f"/v1/items/{item_id}").json() for item_id in catalog.released]

    leaked = [
        text
        for document in documents
        for text in _strings(document)
        if any(marker in text.lower() for marker in PRIVATE_MARKERS)
    ]
    assert leaked == []


def test_another_tenant_or_catalog_is_never_served(http: httpx.Client, catalog: Catalog) -> None:
    listed = set(_ids(http.get("/v1/items", params={"limit": 100})))
    by_gtin = _ids(http.get("/v1/items", params={"gtin": "04006381333931"}))

    for item_id in catalog.foreign:
        assert item_id not in listed
        assert http.get(f"/v1/items/{item_id}").status_code == 404
    assert by_gtin == ["itm_ssd_p5_1t"]


def test_pages_follow_next_cursor_through_every_released_item_once(
    http: httpx.Client, catalog: Catalog
) -> None:
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        params: dict[str, str | int] = {"limit": 3}
        if cursor is not None:
            params["cursor"] = cursor
        body = http.get("/v1/items", params=params).json()
        pages.append([entry["item"] for entry in body["items"]])
        cursor = body["next_cursor"]
        if cursor is None:
            break

    assert pages == [list(catalog.released[:3]), list(catalog.released[3:])]


def test_a_page_exactly_as_long_as_the_rest_has_no_next_cursor(http: httpx.Client, catalog: Catalog) -> None:
    body = http.get("/v1/items", params={"limit": len(catalog.released)}).json()

    assert len(body["items"]) == len(catalog.released)
    assert body["next_cursor"] is None


def test_filters_by_brand_case_insensitively(http: httpx.Client) -> None:
    assert _ids(http.get("/v1/items", params={"brand": "lumen"})) == ["itm_ssd_p5_1t", "itm_ssd_p5_2t"]


def test_filters_by_gtin_and_mpn(http: httpx.Client) -> None:
    assert _ids(http.get("/v1/items", params={"gtin": "05012345678900"})) == ["itm_ssd_orbit_x1_1t"]
    assert _ids(http.get("/v1/items", params={"mpn": "P5-2T"})) == ["itm_ssd_p5_2t"]


def test_filters_by_profile(http: httpx.Client) -> None:
    assert _ids(http.get("/v1/items", params={"profile": "np_hdd@1"})) == ["itm_hdd_halden_4t"]


def test_q_searches_the_title_case_insensitively(http: httpx.Client) -> None:
    assert _ids(http.get("/v1/items", params={"q": "PORTABLE"})) == ["itm_ssd_orbit_x1_1t"]
    # LIKE wildcards in the text are literal characters.
    assert _ids(http.get("/v1/items", params={"q": "%"})) == []


def test_the_seed_attribute_filter_matches_value_and_unit(http: httpx.Client) -> None:
    # if_product_query example: GET /v1/items?class=...&attr[storage:capacity]=1 TB
    response = http.get("/v1/items?attr[storage:capacity]=1 TB")

    assert _ids(response) == ["itm_ssd_orbit_x1_1t", "itm_ssd_p5_1t"]


def test_an_attribute_filter_matches_the_stored_canonical_value_too(http: httpx.Client) -> None:
    assert _ids(http.get("/v1/items", params={"attr[storage:capacity]": "4000"})) == ["itm_hdd_halden_4t"]


def test_filters_combine_and_a_filter_matching_nothing_is_an_empty_page(http: httpx.Client) -> None:
    combined = http.get(
        "/v1/items",
        params={
            "brand": "Lumen",
            "attr[storage:capacity]": "1 TB",
            "attr[storage:interface]": "NVMe",
        },
    )
    nothing = http.get("/v1/items", params={"brand": "Lumen", "attr[storage:capacity]": "4 TB"})

    assert _ids(combined) == ["itm_ssd_p5_1t"]
    assert nothing.json() == {"items": [], "next_cursor": None, "publication_revision": 2}


def test_filters_and_pages_combine(http: httpx.Client) -> None:
    first = http.get("/v1/items", params={"brand": "Lumen", "limit": 1}).json()
    second = http.get(
        "/v1/items", params={"brand": "Lumen", "limit": 1, "cursor": first["next_cursor"]}
    ).json()

    assert [e["item"] for e in first["items"] + second["items"]] == ["itm_ssd_p5_1t", "itm_ssd_p5_2t"]
    assert second["next_cursor"] is None

"""if_product_query over real HTTP, the parts beyond plain filters: the seed's ``class`` + ``attr`` example,
attribute values compared in canonical form with units (through the installed profiles), text search, facet
counts over the filtered set, signed cursors, ETag / Cache-Control / 304, and GET /v1/sources/{id}."""

from __future__ import annotations

import base64
import re
from typing import Any

import httpx
import pytest

from tests.e2e.product.catalog import Catalog
from tests.e2e.product.conftest import error_of

SEED_EXAMPLE = "/v1/items?class=cls_storage_ssd&attr[storage:capacity]=1 TB"


def _ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [entry["item"] for entry in response.json()["items"]]


def test_the_seed_example_returns_the_matching_item(http: httpx.Client) -> None:
    # if_product_query Example: GET /v1/items?class=cls_storage_ssd&attr[storage:capacity]=1 TB. The 1 TB Orbit
    # is a USB drive (no SSD class), the P5 2 TB has another capacity, the Halden is not np_storage.
    assert _ids(http.get(SEED_EXAMPLE)) == ["itm_ssd_p5_1t"]


@pytest.mark.parametrize(
    ("item_class", "expected"),
    [
        ("cls_storage", ["itm_ssd_orbit_x1_1t", "itm_ssd_p5_1t", "itm_ssd_p5_2t"]),
        ("cls_storage_ssd", ["itm_ssd_p5_1t", "itm_ssd_p5_2t"]),  # NVMe, or an M.2 form factor
        ("cls_storage_hdd", []),
    ],
)
def test_a_class_selects_the_items_its_profile_rule_admits(
    http: httpx.Client, item_class: str, expected: list[str]
) -> None:
    assert _ids(http.get("/v1/items", params={"class": item_class})) == expected


@pytest.mark.parametrize("typed", ["1 TB", "1TB", "1000 GB", "1,000GB", "0.001 PB", "1000 GB ", "1000"])
def test_an_attribute_filter_compares_canonical_values_with_units(http: httpx.Client, typed: str) -> None:
    # Items store capacity in decimal gigabytes (np_storage): 1 TB matches an item stored as 1000 GB.
    response = http.get("/v1/items", params={"attr[storage:capacity]": typed})

    assert _ids(response) == ["itm_ssd_orbit_x1_1t", "itm_ssd_p5_1t"]


def test_an_enum_filter_is_read_by_the_profile_too(http: httpx.Client) -> None:
    assert _ids(http.get("/v1/items", params={"attr[storage:interface]": "NVMe"})) == ["itm_ssd_p5_1t"]
    assert _ids(http.get("/v1/items", params={"attr[storage:capacity]": "2 TB"})) == ["itm_ssd_p5_2t"]


def test_text_search_needs_every_word_in_title_brand_mpn_or_gtin(http: httpx.Client) -> None:
    assert _ids(http.get("/v1/items", params={"q": "lumen 2 tb"})) == ["itm_ssd_p5_2t"]
    assert _ids(http.get("/v1/items", params={"q": "p5-2t"})) == ["itm_ssd_p5_2t"]
    assert _ids(http.get("/v1/items", params={"q": "halden"})) == ["itm_hdd_halden_4t"]
    assert _ids(http.get("/v1/items", params={"q": "lumen halden"})) == []


def test_facets_count_every_matching_item_not_only_the_page(http: httpx.Client) -> None:
    response = http.get(
        "/v1/items", params={"facets": "storage:capacity,storage:interface,core:none", "limit": 1}
    )

    page = response.json()
    assert len(page["items"]) == 1
    assert page["facets"] == {
        "storage:capacity": [
            {"value": "1000", "unit": "GB", "count": 2},
            {"value": "2000", "unit": "GB", "count": 1},
            {"value": "4000", "unit": "GB", "count": 1},
        ],
        "storage:interface": [{"value": "nvme", "count": 1}, {"value": "usb", "count": 1}],
    }


def test_facets_follow_the_filters(http: httpx.Client) -> None:
    page = http.get("/v1/items", params={"class": "cls_storage_ssd", "facets": "storage:capacity"}).json()

    assert page["facets"] == {
        "storage:capacity": [
            {"value": "1000", "unit": "GB", "count": 1},
            {"value": "2000", "unit": "GB", "count": 1},
        ]
    }
    assert "facets" not in http.get("/v1/items").json()


def test_a_cursor_is_stable_and_walks_the_filtered_set(http: httpx.Client) -> None:
    params: dict[str, Any] = {"class": "cls_storage", "limit": 2}
    first = http.get("/v1/items", params=params).json()
    again = http.get("/v1/items", params=params).json()
    second = http.get("/v1/items", params={**params, "cursor": first["next_cursor"]}).json()

    assert first["next_cursor"] == again["next_cursor"]
    assert [e["item"] for e in first["items"] + second["items"]] == [
        "itm_ssd_orbit_x1_1t",
        "itm_ssd_p5_1t",
        "itm_ssd_p5_2t",
    ]
    assert second["next_cursor"] is None


def _issued_cursor(http: httpx.Client) -> str:
    cursor = http.get("/v1/items", params={"limit": 1}).json()["next_cursor"]
    assert isinstance(cursor, str)
    return cursor


def test_a_cursor_the_server_did_not_issue_is_422(http: httpx.Client) -> None:
    payload, _, mac = _issued_cursor(http).partition(".")
    unsigned = base64.urlsafe_b64encode(b"itm_ssd_orbit_x1_1t").decode().rstrip("=")
    forged_payload = base64.urlsafe_b64encode(b'["itm_ssd_p5_1t","x"]').decode().rstrip("=")
    flipped = ("A" if mac[0] != "A" else "B") + mac[1:]
    # The last character of a 16-byte MAC carries 4 unused bits: another spelling of the same MAC is refused too.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    respelled = mac[:-1] + alphabet[alphabet.index(mac[-1]) ^ 1]
    assert base64.urlsafe_b64decode(respelled + "==") == base64.urlsafe_b64decode(mac + "==")
    forgeries = (unsigned, f"{forged_payload}.{mac}", f"{payload}.{flipped}", f"{payload}.", payload)

    for cursor in (*forgeries, f"{payload}.{respelled}"):
        response = http.get("/v1/items", params={"limit": 1, "cursor": cursor})
        assert error_of(response) == (422, "INVALID_QUERY", False), cursor


def test_a_cursor_issued_for_other_filters_is_422(http: httpx.Client) -> None:
    cursor = _issued_cursor(http)

    response = http.get("/v1/items", params={"limit": 1, "cursor": cursor, "brand": "Lumen"})

    assert error_of(response) == (422, "INVALID_QUERY", False)
    assert "other filters" in response.json()["error"]["message"]


def test_every_public_read_carries_the_release_etag_and_cache_control(http: httpx.Client) -> None:
    responses = [
        http.get("/v1/items?brand=Halden"),
        http.get("/v1/items/itm_hdd_halden_4t"),
        http.get("/v1/sources/src_shop_b"),
    ]
    # Documents carrying picture links: the ETag names the links' window too (test_conditional_requests_http).
    linked = [http.get("/v1/items"), http.get(SEED_EXAMPLE), http.get("/v1/items/itm_ssd_p5_1t")]

    assert {r.status_code for r in responses + linked} == {200}
    # Generation 1, release 2 (the catalog's second release).
    assert {r.headers["etag"] for r in responses} == {'"g1r2"'}
    assert {r.headers["cache-control"] for r in responses} == {"public, max-age=30"}
    assert all(re.fullmatch(r'"g1r2x[0-9]+"', r.headers["etag"]) for r in linked)


@pytest.mark.parametrize("path", ["/v1/items", "/v1/items/itm_ssd_p5_1t", "/v1/sources/src_shop_b"])
def test_if_none_match_with_the_current_etag_is_304_without_a_body(http: httpx.Client, path: str) -> None:
    etag = http.get(path).headers["etag"]

    cached = http.get(path, headers={"If-None-Match": etag})
    weak = http.get(path, headers={"If-None-Match": f'"other", W/{etag}'})
    stale = http.get(path, headers={"If-None-Match": '"g1r1"'})

    assert (cached.status_code, cached.content, cached.headers["etag"]) == (304, b"", etag)
    assert weak.status_code == 304
    assert (stale.status_code, stale.headers["etag"]) == (200, etag)


def test_a_source_shows_what_the_release_publishes_of_it(http: httpx.Client) -> None:
    response = http.get("/v1/sources/src_shop_b")

    assert response.status_code == 200
    assert response.json() == {
        "source": "src_shop_b",
        "listings": 1,
        "items": 1,
        "last_observed_at": "2026-10-10T03:31:55+00:00",
        "publication_revision": 2,
    }


@pytest.mark.parametrize("source_id", ["src_no_such_source", "src_bench_web"])
def test_a_source_without_public_listings_is_404_not_found(http: httpx.Client, source_id: str) -> None:
    assert error_of(http.get(f"/v1/sources/{source_id}")) == (404, "NOT_FOUND", False)


def test_absent_identifiers_are_left_out_not_null(http: httpx.Client, catalog: Catalog) -> None:
    documents = {item: http.get(f"/v1/items/{item}").json() for item in catalog.released}
    listed = {e["item"]: e for e in http.get("/v1/items").json()["items"]}

    assert documents["itm_hdd_halden_4t"]["identifiers"] == {}
    assert documents["itm_ssd_orbit_x1_1t"]["identifiers"] == {"gtin": "05012345678900"}
    assert listed["itm_hdd_halden_4t"]["identifiers"] == {}


def test_revisions_agree_across_collection_detail_and_listings(http: httpx.Client, catalog: Catalog) -> None:
    page = http.get("/v1/items", params={"limit": 100}).json()
    for entry in page["items"]:
        detail = http.get(f"/v1/items/{entry['item']}").json()
        assert (detail["published_revision"], detail["publication_revision"]) == (
            entry["published_revision"],
            entry["publication_revision"],
        )
        assert entry["publication_revision"] <= page["publication_revision"]
        for listing in detail["listings"]:
            assert listing["item"] == entry["item"]
            assert listing["publication_revision"] <= page["publication_revision"]


def test_original_urls_and_observation_times_are_served_as_observed(http: httpx.Client) -> None:
    listings = http.get("/v1/items/itm_ssd_p5_1t").json()["listings"]

    assert [(entry["url"], entry["observed_at"]) for entry in listings] == [
        ("https://shop.example/lst_lum_p5_1t", "2026-10-10T03:31:55+00:00"),
        ("https://shop.example/lst_shop_p5_1t", "2026-10-10T03:31:55+00:00"),
    ]

"""Merges and splits round trip to the public API on real parts: decisions by the decision service (AW-01) on a
manual catalog, the relay (AW-03), the product consumer (AW-04), a release, and the product app over HTTP. After
the release that names a merge, ``GET /v1/items/{merged}`` is 301 Moved Permanently to the survivor (through every
later merge), with the release's ETag and Cache-Control, and the merged item's listings are the survivor's; after a
split's release the new item owns the listings moved to it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from prw_platform.bootstrap import Platform
from prw_platform.runtime import drain
from prw_platform.services import AuthorizeRelease, MergeItems, SplitItem
from tests.e2e.product.decisions import create_and_map, served_manual_catalog

TENANT, CATALOG, SOURCE = "ten_merge", "cat_merge", "src_merge_web"
REVIEWER = "reviewer:op_rita"


@pytest.fixture
def product(platform: Platform) -> Iterator[httpx.Client]:
    with served_manual_catalog(platform, TENANT, CATALOG, SOURCE) as http:
        yield http


def _release(platform: Platform) -> None:
    platform.decisions.release(AuthorizeRelease(CATALOG, "operator:ops_anna", "publish the catalog"), TENANT)
    drain(platform)


def _create(platform: Platform, n: int) -> tuple[str, str]:
    decided = platform.decisions.decide(create_and_map(CATALOG, SOURCE, "merge", n), TENANT, CATALOG)
    assert decided.item_id is not None
    assert decided.listing_id is not None
    return decided.item_id, decided.listing_id


def _merge(platform: Platform, item_id: str, into: str) -> None:
    platform.decisions.merge_items(MergeItems(CATALOG, item_id, into, REVIEWER, "the same SSD"), TENANT)
    drain(platform)


def _listing_ids(product: httpx.Client, item_id: str) -> list[str]:
    return sorted(entry["listing"] for entry in product.get(f"/v1/items/{item_id}").json()["listings"])


def test_a_released_merge_answers_the_merged_id_with_301_to_the_survivor_through_a_chain(
    platform: Platform, product: httpx.Client
) -> None:
    (a, listing_a), (b, listing_b), (c, listing_c) = (_create(platform, n) for n in (1, 2, 3))
    _release(platform)
    _merge(platform, a, b)
    # Accepted and applied internally, not released: the merged item is still public as it was.
    assert product.get(f"/v1/items/{a}").status_code == 200

    _release(platform)

    moved = product.get(f"/v1/items/{a}")
    assert moved.status_code == 301, moved.text
    assert moved.headers["location"] == f"/v1/items/{b}"
    etag = moved.headers["etag"]
    assert etag.endswith('r2"')
    assert moved.headers["cache-control"].startswith("public, max-age=")
    assert _listing_ids(product, b) == sorted([listing_a, listing_b])
    assert sorted(entry["item"] for entry in product.get("/v1/items").json()["items"]) == sorted([b, c])
    listings = product.get(f"/v1/items/{a}/listings")
    assert (listings.status_code, listings.headers["location"]) == (301, f"/v1/items/{b}/listings")
    # The redirect is a document of the release: revalidated with its ETag it is 304; ``*`` does not match it.
    assert product.get(f"/v1/items/{a}", headers={"If-None-Match": etag}).status_code == 304
    assert product.get(f"/v1/items/{a}", headers={"If-None-Match": "*"}).status_code == 301

    _merge(platform, b, c)
    _release(platform)

    for merged in (a, b):
        chained = product.get(f"/v1/items/{merged}")
        assert (chained.status_code, chained.headers["location"]) == (301, f"/v1/items/{c}")
    followed = product.get(f"/v1/items/{a}", follow_redirects=True)
    assert followed.status_code == 200
    assert followed.json()["item"] == c
    assert _listing_ids(product, c) == sorted([listing_a, listing_b, listing_c])
    assert product.get("/v1/items/itm_never_existed").status_code == 404


def test_a_released_split_gives_the_new_item_the_listings_moved_to_it(
    platform: Platform, product: httpx.Client
) -> None:
    item_id, kept = _create(platform, 1)
    other, moved = _create(platform, 2)
    _merge(platform, other, item_id)
    _release(platform)
    assert _listing_ids(product, item_id) == sorted([kept, moved])

    split = platform.decisions.split_item(
        SplitItem(CATALOG, item_id, (moved,), "Strata P5 2 TB", REVIEWER, "two capacities on one item"),
        TENANT,
    )
    drain(platform)
    _release(platform)

    new_item = product.get(f"/v1/items/{split.new_item_id}")
    assert new_item.status_code == 200, new_item.text
    assert new_item.json()["title"] == "Strata P5 2 TB"
    assert [entry["listing"] for entry in new_item.json()["listings"]] == [moved]
    assert _listing_ids(product, item_id) == [kept]

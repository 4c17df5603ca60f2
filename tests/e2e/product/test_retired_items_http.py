"""A retired item leaves the public catalog at the next release (INV-07), on real parts: an item
created by the decision service (AW-01) on a manual catalog and released, retired by an operator's decision, the
relay (AW-03), the product consumer (AW-04) and the product app over HTTP. Until the release it stays public;
after it ``GET /v1/items/{id}`` is 404 NOT_FOUND, ``GET /v1/items`` no longer lists it and its listings have no
public owner any more, while the other item keeps its own."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from prw_platform.bootstrap import Platform
from prw_platform.runtime import drain
from prw_platform.services import AuthorizeRelease, RetireItem
from tests.e2e.product.decisions import create_and_map, served_manual_catalog

TENANT, CATALOG, SOURCE = "ten_retire", "cat_retire", "src_retire_web"
OPERATOR = "operator:ops_anna"


@pytest.fixture
def product(platform: Platform) -> Iterator[httpx.Client]:
    with served_manual_catalog(platform, TENANT, CATALOG, SOURCE) as http:
        yield http


def _release(platform: Platform) -> None:
    platform.decisions.release(AuthorizeRelease(CATALOG, OPERATOR, "publish the catalog"), TENANT)
    drain(platform)


def _public_items(product: httpx.Client) -> list[str]:
    return [entry["item"] for entry in product.get("/v1/items").json()["items"]]


def test_a_retired_item_leaves_the_public_catalog_with_its_listings_at_the_next_release(
    platform: Platform, product: httpx.Client
) -> None:
    kept, retired = (
        platform.decisions.decide(create_and_map(CATALOG, SOURCE, "retire", n), TENANT, CATALOG).item_id
        for n in (1, 2)
    )
    assert kept is not None
    assert retired is not None
    _release(platform)
    assert sorted(_public_items(product)) == sorted([kept, retired])
    assert product.get(f"/v1/sources/{SOURCE}").json()["listings"] == 2

    platform.decisions.retire_item(RetireItem(CATALOG, retired, OPERATOR, "discontinued"), TENANT)
    drain(platform)
    assert product.get(f"/v1/items/{retired}").status_code == 200  # retired internally, still released

    _release(platform)

    gone = product.get(f"/v1/items/{retired}")
    assert gone.status_code == 404, gone.text
    assert gone.json()["error"]["code"] == "NOT_FOUND"
    assert product.get(f"/v1/items/{retired}/listings").status_code == 404
    assert _public_items(product) == [kept]
    source = product.get(f"/v1/sources/{SOURCE}").json()
    assert (source["listings"], source["items"], source["publication_revision"]) == (1, 1, 2)
    (own,) = product.get(f"/v1/items/{kept}/listings").json()["listings"]
    assert own["url"] == "https://retire.example/p/1"

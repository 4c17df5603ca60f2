"""if_product_query over HTTP: GET /v1/merchants, GET /v1/merchants/{id}, GET /v1/items/{id}/listings and
POST /v1/shipping/evaluations, served from the released snapshot only (tests/e2e/product/catalog.py: Shop A and
Shop B are released with the second release; mer_unreleased and Shop A's later policy are applied, never released).
One test per error row: 404 NOT_FOUND, 422 BASKET_SPANS_MERCHANTS, 422 INVALID_DESTINATION."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from prw_platform.db.database import Database
from tests.e2e.product.catalog import Catalog
from tests.e2e.product.conftest import error_of

SHOP_A_POLICY = {
    "currency": "EUR",
    "rates": [{"destination": "DE", "rate": "4.90"}, {"destination": "FR", "rate": "6.50"}],
    "free_shipping_threshold": "100.00",
}


def _evaluate(http: httpx.Client, destination: str, *lines: tuple[str, int]) -> httpx.Response:
    body = {"destination": destination, "lines": [{"listing": lst, "quantity": n} for lst, n in lines]}
    return http.post("/v1/shipping/evaluations", json=body)


def test_merchants_are_the_released_ones_with_sources_and_policies(
    http: httpx.Client, catalog: Catalog
) -> None:
    response = http.get("/v1/merchants")

    assert response.status_code == 200
    document = response.json()
    assert [m["merchant"] for m in document["merchants"]] == ["mer_shop_a", "mer_shop_b"]
    shop_a, shop_b = document["merchants"]
    assert shop_a == {
        "merchant": "mer_shop_a",
        "name": "Shop A",
        "url": "https://shop-a.example",
        "sources": ["src_shop_a"],
        # The policy accepted after the release (DE 0.00) is applied, not released.
        "shipping_policy": SHOP_A_POLICY,
        "published_revision": 1,
        "publication_revision": 2,
    }
    # Absent values are left out, not null.
    assert shop_b == {
        "merchant": "mer_shop_b",
        "name": "Shop B",
        "sources": ["src_shop_b"],
        "published_revision": 1,
        "publication_revision": 2,
    }
    assert document["publication_revision"] == 2
    assert document["next_cursor"] is None
    assert response.headers["etag"] == '"g1r2"'
    assert response.headers["cache-control"].startswith("public, max-age=")


def test_merchant_pages_follow_the_signed_cursor(http: httpx.Client, catalog: Catalog) -> None:
    first = http.get("/v1/merchants", params={"limit": 1}).json()
    second = http.get("/v1/merchants", params={"limit": 1, "cursor": first["next_cursor"]}).json()

    assert [m["merchant"] for m in first["merchants"] + second["merchants"]] == ["mer_shop_a", "mer_shop_b"]
    assert second["next_cursor"] is None


def test_a_cursor_the_server_did_not_issue_for_merchants_is_422(http: httpx.Client, catalog: Catalog) -> None:
    item_cursor = http.get("/v1/items", params={"limit": 1}).json()["next_cursor"]
    for cursor in ("forged.cursor", item_cursor):
        assert error_of(http.get("/v1/merchants", params={"cursor": cursor}))[:2] == (422, "INVALID_QUERY")


def test_one_merchant_and_an_unreleased_or_unknown_one_is_404_not_found(
    http: httpx.Client, catalog: Catalog
) -> None:
    shop_a = http.get("/v1/merchants/mer_shop_a")
    assert shop_a.status_code == 200
    assert shop_a.json()["shipping_policy"] == SHOP_A_POLICY
    for merchant in ("mer_unreleased", "mer_nowhere"):
        assert error_of(http.get(f"/v1/merchants/{merchant}")) == (404, "NOT_FOUND", False)


def test_item_listings_carry_merchant_original_url_and_latest_inventory(
    http: httpx.Client, catalog: Catalog
) -> None:
    detail = http.get("/v1/items/itm_ssd_p5_1t").json()
    response = http.get("/v1/items/itm_ssd_p5_1t/listings")

    assert response.status_code == 200
    document = response.json()
    # if_product_query: identity, published_revision and publication_revision agree across detail and listings.
    assert (document["item"], document["published_revision"], document["publication_revision"]) == (
        detail["item"],
        detail["published_revision"],
        detail["publication_revision"],
    )
    assert document["listings"] == [
        {
            "listing": "lst_lum_p5_1t",
            "source_id": "src_shop_a",
            "url": "https://shop.example/lst_lum_p5_1t",
            "title": "Lumen P5 SSD 1TB (retail)",
            "merchant": {"merchant": "mer_shop_a", "name": "Shop A"},
            "inventory": {
                "price": "89.90",
                "currency": "EUR",
                "availability": "in_stock",
                "observed_at": "2026-10-10T03:31:55+00:00",
            },
            "publication_revision": 1,
        },
        {
            "listing": "lst_shop_p5_1t",
            "source_id": "src_shop_b",
            "url": "https://shop.example/lst_shop_p5_1t",
            "title": "P5 1TB NVMe",
            "merchant": {"merchant": "mer_shop_b", "name": "Shop B"},
            "inventory": {
                "price": "84.50",
                "currency": "EUR",
                "availability": "in_stock",
                "observed_at": "2026-10-10T03:31:55+00:00",
            },
            "publication_revision": 1,
        },
    ]
    assert response.headers["etag"] == '"g1r2"'


def test_listings_of_an_item_no_release_publishes_is_404_not_found(
    http: httpx.Client, catalog: Catalog
) -> None:
    for item in (catalog.unreleased[0], "itm_nowhere"):
        assert error_of(http.get(f"/v1/items/{item}/listings")) == (404, "NOT_FOUND", False)


@pytest.mark.parametrize(
    "path", ["/v1/merchants", "/v1/merchants/mer_shop_a", "/v1/items/itm_ssd_p5_1t/listings"]
)
def test_if_none_match_with_the_release_etag_is_304(http: httpx.Client, catalog: Catalog, path: str) -> None:
    etag = http.get(path).headers["etag"]
    response = http.get(path, headers={"If-None-Match": etag})
    assert response.status_code == 304
    assert response.headers["etag"] == etag


def test_shipping_costs_the_destination_rate_below_the_threshold(
    http: httpx.Client, catalog: Catalog
) -> None:
    response = _evaluate(http, "DE", ("lst_lum_p5_1t", 1))

    assert response.status_code == 200
    assert response.json() == {
        "merchant": "mer_shop_a",
        "destination": "DE",
        "currency": "EUR",
        "lines": [{"listing": "lst_lum_p5_1t", "quantity": 1, "price": "89.90"}],
        "subtotal": "89.90",
        "shipping": "4.90",
        "total": "94.80",
        "free_shipping": False,
        "free_shipping_threshold": "100.00",
        "publication_revision": 2,
    }
    assert response.headers["cache-control"] == "no-store"


def test_shipping_is_free_at_or_above_the_threshold(http: httpx.Client, catalog: Catalog) -> None:
    document = _evaluate(http, "FR", ("lst_lum_p5_1t", 1), ("lst_lum_p5_1t", 1)).json()

    assert (document["subtotal"], document["shipping"], document["total"]) == ("179.80", "0.00", "179.80")
    assert document["free_shipping"] is True
    assert document["lines"] == [{"listing": "lst_lum_p5_1t", "quantity": 2, "price": "89.90"}]


def test_a_basket_of_two_merchants_is_422_basket_spans_merchants(
    http: httpx.Client, catalog: Catalog
) -> None:
    response = _evaluate(http, "DE", ("lst_lum_p5_1t", 1), ("lst_shop_p5_1t", 1))
    assert error_of(response) == (422, "BASKET_SPANS_MERCHANTS", False)


@pytest.mark.parametrize(
    ("destination", "listing"),
    [
        ("US", "lst_lum_p5_1t"),  # Shop A does not ship there
        ("DE", "lst_shop_p5_1t"),  # Shop B has no released policy: it ships nowhere
        ("XX", "lst_lum_p5_1t"),  # not an ISO 3166-1 alpha-2 code
        ("de", "lst_lum_p5_1t"),
        ("DEU", "lst_lum_p5_1t"),
    ],
)
def test_an_unshipped_or_non_iso_destination_is_422_invalid_destination(
    http: httpx.Client, catalog: Catalog, destination: str, listing: str
) -> None:
    assert error_of(_evaluate(http, destination, (listing, 1))) == (422, "INVALID_DESTINATION", False)


def test_a_basket_with_a_listing_no_release_publishes_is_404_not_found(
    http: httpx.Client, catalog: Catalog
) -> None:
    response = _evaluate(http, "DE", ("lst_lum_p5_1t", 1), ("lst_nowhere", 1))
    assert error_of(response) == (404, "NOT_FOUND", False)


@pytest.mark.parametrize(
    "body",
    [
        {"destination": "DE", "lines": []},
        {"destination": "DE", "lines": [{"listing": "lst_lum_p5_1t", "quantity": 0}]},
        {"destination": "DE", "lines": [{"listing": "lst_lum_p5_1t", "quantity": 1, "price": "1"}]},
        {"lines": [{"listing": "lst_lum_p5_1t", "quantity": 1}]},
    ],
)
def test_a_malformed_basket_is_422_invalid_query(
    http: httpx.Client, catalog: Catalog, body: dict[str, Any]
) -> None:
    assert error_of(http.post("/v1/shipping/evaluations", json=body)) == (422, "INVALID_QUERY", False)


def test_an_evaluation_stores_nothing(http: httpx.Client, catalog: Catalog, product_api_db_url: str) -> None:
    with Database(product_api_db_url, role=None, max_size=1) as owner:
        before = _row_counts(owner)
        assert _evaluate(http, "DE", ("lst_lum_p5_1t", 3)).status_code == 200
        assert error_of(_evaluate(http, "US", ("lst_lum_p5_1t", 1)))[0] == 422
        assert _row_counts(owner) == before
    assert sum(before.values()) > 0


def _row_counts(owner: Database) -> dict[str, int]:
    """The row count of every product table."""
    with owner.transaction() as conn:
        tables = [
            str(row["name"])
            for row in conn.execute(
                "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'product' ORDER BY 1"
            ).fetchall()
        ]
        return {
            table: int(str(conn.execute(f"SELECT count(*) AS n FROM product.{table}").fetchone()["n"]))  # type: ignore[index]  # noqa: S608
            for table in tables
        }

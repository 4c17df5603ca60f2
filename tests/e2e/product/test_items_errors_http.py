"""The product origin's errors over real HTTP: one error body (prw_api.errors), the seed's codes
(if_product_query: 404 NOT_FOUND; query errors 422 INVALID_QUERY), 503 with Retry-After, stable operation ids."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from prw_api.product import create_app
from prw_api.server import BackgroundServer
from prw_platform.config import Settings
from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.product.public.catalog import PublicCatalog
from tests.e2e.product.catalog import CATALOG, TENANT
from tests.e2e.product.conftest import error_of


def test_an_unknown_item_is_404_not_found(http: httpx.Client) -> None:
    response = http.get("/v1/items/itm_no_such_item")

    assert error_of(response) == (404, "NOT_FOUND", False)


def test_an_unknown_route_is_404_not_found_in_the_same_error_body(http: httpx.Client) -> None:
    assert error_of(http.get("/v1/merchandise")) == (404, "NOT_FOUND", False)


def test_a_write_method_on_a_read_only_route_is_405(http: httpx.Client) -> None:
    assert error_of(http.post("/v1/items", json={})) == (405, "METHOD_NOT_ALLOWED", False)


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=101",
        "limit=ten",
        "cursor=!!!",
        "cursor=",
        "gtin=not-a-gtin",
        "brand=",
        f"q={'x' * 201}",
        "attr[storage:capacity]=",
        "attr[]=1 TB",
        "attr=1 TB",
        "brand=Lumen&brand=Orbit",
        "attr[storage:capacity]=1 TB&attr[storage:capacity]=2 TB",
        "&".join(f"attr[a{n}]=1" for n in range(11)),
        "class=cls_no_such_class",
        "class=",
        "facets=",
        "facets=storage:capacity,,brand",
        "facets=" + ",".join(f"k{n}" for n in range(11)),
        "offset=20",
        "sort=title",
    ],
)
def test_an_invalid_query_is_422_invalid_query(http: httpx.Client, query: str) -> None:
    response = http.get(f"/v1/items?{query}")

    assert error_of(response) == (422, "INVALID_QUERY", False)


def test_an_unknown_class_is_refused_naming_the_installed_classes(http: httpx.Client) -> None:
    response = http.get("/v1/items?class=cls_storage_tape&attr[storage:capacity]=1 TB")

    assert error_of(response)[:2] == (422, "INVALID_QUERY")
    assert "cls_storage_ssd" in response.json()["error"]["message"]


def test_the_operation_ids_are_stable_and_the_attribute_filters_are_documented(http: httpx.Client) -> None:
    spec = http.get("/openapi.json").json()

    operations = {
        (path, method): operation["operationId"]
        for path, methods in spec["paths"].items()
        for method, operation in methods.items()
    }
    assert operations == {
        ("/v1/items", "get"): "listItems",
        ("/v1/items/{item_id}", "get"): "getItem",
        ("/v1/sources/{source_id}", "get"): "getSource",
        ("/v1/items/{item_id}/listings", "get"): "listItemListings",
        ("/v1/merchants", "get"): "listMerchants",
        ("/v1/merchants/{merchant_id}", "get"): "getMerchant",
        ("/v1/shipping/evaluations", "post"): "evaluateShipping",
        ("/v1/categories", "get"): "listCategories",
        ("/v1/categories/{category_id}", "get"): "getCategory",
        ("/v1/files/{token}", "get"): "getFile",
    }
    parameters = {p["name"]: p for p in spec["paths"]["/v1/items"]["get"]["parameters"]}
    assert set(parameters) == {
        "class",
        "profile",
        "brand",
        "gtin",
        "mpn",
        "q",
        "facets",
        "limit",
        "cursor",
        "attr",
    }
    assert parameters["attr"]["style"] == "deepObject"
    responses = spec["paths"]["/v1/items/{item_id}"]["get"]["responses"]
    assert responses["200"]["content"]["application/json"]["schema"]["$ref"].endswith("PublicItemDetailBody")
    assert responses["404"]["content"]["application/json"]["schema"]["$ref"].endswith("ErrorBody")


@pytest.fixture
def unavailable_server(tmp_path: Path) -> Iterator[BackgroundServer]:
    """The product API over a database whose server cannot be reached (a socket directory with no server)."""
    conninfo = f"host=/tmp/prw-no-server-{uuid.uuid4().hex} dbname=prw connect_timeout=1"
    db = Database(conninfo, role=roles.PRODUCT_APP, pool_timeout_s=0.2).open(wait=False)
    catalog = PublicCatalog(db, TENANT, CATALOG)
    try:
        with BackgroundServer(create_app(Settings(data_dir=tmp_path / "prw"), catalog)) as running:
            yield running
    finally:
        db.close()


def test_an_unavailable_database_is_503_retryable_with_retry_after(
    unavailable_server: BackgroundServer,
) -> None:
    with httpx.Client(base_url=unavailable_server.url, timeout=10) as client:
        listing = client.get("/v1/items")
        detail = client.get("/v1/items/itm_ssd_p5_1t")

    for response in (listing, detail):
        assert error_of(response) == (503, "STORAGE_UNAVAILABLE", True)
        assert response.headers["Retry-After"]


def test_a_catalog_paused_by_an_epoch_fence_is_503_not_an_empty_catalog(
    http: httpx.Client, product_api_db_url: str, catalog: object
) -> None:
    """if_projection_bootstrap "Fence restored history": while the stream is fenced and rebuilt, public serving
    answers 503 UNAVAILABLE with Retry-After, never an empty catalog or a 404 a client would believe."""
    pause = "UPDATE product.projected_scope SET paused_at = now(), paused_reason = %s WHERE tenant_id = %s"
    with psycopg.connect(product_api_db_url, autocommit=True) as owner:
        owner.execute(pause, ("epoch fence hep_test_2", TENANT))
        try:
            responses = [
                http.get(path)
                for path in ("/v1/items", "/v1/items/itm_ssd_p5_1t", "/v1/merchants", "/v1/categories")
            ]
        finally:
            owner.execute(
                "UPDATE product.projected_scope SET paused_at = NULL, paused_reason = NULL WHERE tenant_id = %s",
                (TENANT,),
            )
    for response in responses:
        assert error_of(response) == (503, "UNAVAILABLE", True), response.request.url
        assert response.headers["Retry-After"]
        assert "epoch fence" in response.json()["error"]["message"]
    assert http.get("/v1/items/itm_ssd_p5_1t").status_code == 200  # resumed

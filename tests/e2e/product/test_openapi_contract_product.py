"""The product origin's part of ``schemas/openapi.yaml`` (tests/support/openapi_contract.py): the running app's
OpenAPI is exactly its part. ``PRW_UPDATE_OPENAPI=1`` rewrites it after an intentional change."""

from __future__ import annotations

import httpx
import yaml

from tests.support.openapi_contract import CONTRACT, ORIGINS, check_origin


def test_the_running_product_app_serves_exactly_its_part_of_the_contract(http: httpx.Client) -> None:
    served = http.get("/openapi.json")
    assert served.status_code == 200
    check_origin("product", served.json())


def test_the_contract_lists_the_public_routes_without_security() -> None:
    document = yaml.safe_load(CONTRACT.read_text())

    assert document[ORIGINS]["product"] == [
        "/v1/categories",
        "/v1/categories/{category_id}",
        "/v1/files/{token}",
        "/v1/items",
        "/v1/items/{item_id}",
        "/v1/items/{item_id}/listings",
        "/v1/merchants",
        "/v1/merchants/{merchant_id}",
        "/v1/shipping/evaluations",
        "/v1/sources/{source_id}",
    ]
    for path in document[ORIGINS]["product"]:
        if path == "/v1/files/{token}":
            # A picture's bytes behind its signed link: no ETag of the release (the bytes are content-addressed).
            get = document["paths"][path]["get"]
            assert "security" not in get
            assert {"403", "404", "429", "503"} <= set(get["responses"])
            continue
        if path == "/v1/shipping/evaluations":
            # A POST answers one basket: no ETag, so no 304; its 404 and 422 are the seed's error rows.
            post = document["paths"][path]["post"]
            assert "security" not in post
            assert {"404", "422", "429", "503"} <= set(post["responses"])
            continue
        get = document["paths"][path]["get"]
        assert "security" not in get
        assert {"304", "422", "429", "503"} <= set(get["responses"])

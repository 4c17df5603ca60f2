"""Every public response, walked (if_product_query Authorization: "never emit private evidence,
capture/review/decision references or internal tags"), validated against the published response models, and the
per-client rate limit (429 RATE_LIMITED with Retry-After)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from prw_api.errors import ErrorBody
from prw_api.product import create_app
from prw_api.product.models import (
    CategoryPageBody,
    ItemListingsBody,
    ItemPageBody,
    MerchantBody,
    MerchantPageBody,
    PublicCategoryBody,
    PublicItemDetailBody,
    PublicSourceBody,
    ShippingEvaluationBody,
)
from prw_api.server import BackgroundServer
from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.services import TokenBucketLimiter
from tests.e2e.product.catalog import Catalog
from tests.e2e.product.conftest import error_of, served_catalog

#: Keys no public document may have, at any depth.
FORBIDDEN_KEYS = frozenset(
    {
        "capture",
        "capture_id",
        "captures",
        "decision",
        "decision_id",
        "review",
        "review_case",
        "review_case_id",
        "evidence",
        "evidence_locators",
        "internal_tags",
        "tags",
        "status",
        "artifact",
        "sha256",
    }
)
#: Id prefixes of private records (captures, decisions, review cases, artifacts, evidence, internal tags).
FORBIDDEN_PREFIXES = ("cap_", "dec_", "rc_", "rev_", "art_", "evd_", "tag_")


def _walk(document: Any, path: str = "$") -> Iterator[tuple[str, str | None, Any]]:
    """(path, key, value) of every member and element of a JSON document."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield f"{path}.{key}", key, value
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield f"{path}[{index}]", None, value
            yield from _walk(value, f"{path}[{index}]")


def _leaks(document: Any) -> list[str]:
    found = []
    for path, key, value in _walk(document):
        if key is not None and key.lower() in FORBIDDEN_KEYS:
            found.append(f"{path}: private key")
        for text in (key, value):
            if isinstance(text, str) and text.lower().startswith(FORBIDDEN_PREFIXES):
                found.append(f"{path}: private id {text!r}")
    return found


def _public_responses(http: httpx.Client, catalog: Catalog) -> list[tuple[httpx.Response, type[BaseModel]]]:
    """A response of every public route and every status it answers with a body."""
    pages = [
        "/v1/items",
        "/v1/items?limit=1",
        "/v1/items?class=cls_storage_ssd&attr[storage:capacity]=1 TB",
        "/v1/items?facets=storage:capacity,storage:interface,storage:form_factor",
        "/v1/items?q=lumen&facets=storage:capacity",
    ]
    responses: list[tuple[httpx.Response, type[BaseModel]]] = [(http.get(p), ItemPageBody) for p in pages]
    cursor = responses[1][0].json()["next_cursor"]
    responses.append((http.get("/v1/items", params={"limit": 1, "cursor": cursor}), ItemPageBody))
    responses += [(http.get(f"/v1/items/{item}"), PublicItemDetailBody) for item in catalog.released]
    responses += [(http.get(f"/v1/sources/{s}"), PublicSourceBody) for s in ("src_shop_a", "src_shop_b")]
    responses += [(http.get(f"/v1/items/{item}/listings"), ItemListingsBody) for item in catalog.released]
    responses += [(http.get(p), MerchantPageBody) for p in ("/v1/merchants", "/v1/merchants?limit=1")]
    responses += [(http.get(f"/v1/merchants/{m}"), MerchantBody) for m in ("mer_shop_a", "mer_shop_b")]
    responses += [(_evaluate(http, "DE", "lst_lum_p5_1t"), ShippingEvaluationBody)]
    # Seed 004: released pictures (item documents above carry them) and classes.
    responses += [(http.get(p), CategoryPageBody) for p in ("/v1/categories", "/v1/categories?limit=1")]
    responses += [
        (http.get(f"/v1/categories/{c}"), PublicCategoryBody) for c in ("cls_ssd_drives", "cls_no_picture")
    ]
    errors = [
        f"/v1/items/{catalog.unreleased[0]}",
        f"/v1/items/{catalog.unreleased[0]}/listings",
        "/v1/sources/src_nowhere",
        "/v1/merchants/mer_unreleased",
        "/v1/items?class=cls_nothing",
        "/v1/items?cursor=cap_0310",
        "/v1/merchants?cursor=cap_0310",
        "/v1/categories/cls_unreleased",
        "/v1/categories?cursor=cap_0310",
        "/v1/files/cap_0310.forged",
    ]
    responses += [(http.get(p), ErrorBody) for p in errors]
    responses += [
        (_evaluate(http, destination, *listings), ErrorBody)
        for destination, listings in (
            ("US", ("lst_lum_p5_1t",)),
            ("DE", ("lst_lum_p5_1t", "lst_shop_p5_1t")),
            ("DE", ("cap_lum_0310",)),
        )
    ]
    return responses


def _evaluate(http: httpx.Client, destination: str, *listings: str) -> httpx.Response:
    lines = [{"listing": listing, "quantity": 1} for listing in listings]
    return http.post("/v1/shipping/evaluations", json={"destination": destination, "lines": lines})


def test_no_public_response_has_a_private_key_or_id(http: httpx.Client, catalog: Catalog) -> None:
    responses = _public_responses(http, catalog)

    leaks = {str(r.url): _leaks(r.json()) for r, _ in responses}
    assert {url: found for url, found in leaks.items() if found} == {}
    # The walk covered released pictures: the detail of the item with pictures has signed links, no address.
    detail = http.get("/v1/items/itm_ssd_p5_1t").json()
    assert detail["pictures"]["main"]["url"].startswith("/v1/files/")
    assert len(detail["pictures"]["gallery"]) == 1
    # The snapshots do carry private references (catalog.PRIVATE_FIELDS): the walk has something to find.
    assert _leaks({"decision_id": "dec_0142"}) == [
        "$.decision_id: private key",
        "$.decision_id: private id 'dec_0142'",
    ]


def test_every_public_response_conforms_to_its_published_model(http: httpx.Client, catalog: Catalog) -> None:
    for response, model in _public_responses(http, catalog):
        model.model_validate(response.json())  # extra keys are forbidden: a new field fails here
        if model is not ErrorBody:
            assert response.status_code == 200, response.text


@pytest.fixture
def limited_http(module_product_db: Database, catalog: Catalog, tmp_path: Path) -> Iterator[httpx.Client]:
    """The product API with a limiter of 2 requests at once, then one every 4 s, per client."""
    app = create_app(
        Settings(data_dir=tmp_path / "prw"),
        served_catalog(module_product_db),
        limiter=TokenBucketLimiter(0.25, 2),
    )
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


def test_a_client_over_its_rate_is_429_rate_limited_with_retry_after(limited_http: httpx.Client) -> None:
    allowed = [limited_http.get("/v1/items/itm_ssd_p5_1t").status_code for _ in range(2)]
    refused = limited_http.get("/v1/items/itm_ssd_p5_1t")

    assert allowed == [200, 200]
    assert error_of(refused) == (429, "RATE_LIMITED", True)
    assert refused.headers["retry-after"] in {"3", "4"}  # 4 s for the next token, less what has passed
    # Probes are never limited: a load balancer keeps seeing the worker alive.
    assert limited_http.get("/healthz").status_code == 200

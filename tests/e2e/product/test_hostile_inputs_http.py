"""Hostile input on the public product API, over real HTTP (hardened inputs). Public reads carry no
identity, so every one of these is sent unauthenticated, as anyone could.

- a body above the limit, on any route and method: 413 PAYLOAD_TOO_LARGE before it is read;
- a NUL (PostgreSQL text cannot hold it) or bytes that are not UTF-8 once percent-decoded, in the path, a filter,
  a filter's name or a forged cursor: the origin's 422 INVALID_QUERY (a plain-text 500 before);
- a value the database refuses anyway (psycopg DataError): 422 INVALID_QUERY; a statement timeout past its
  retry: 503 STORAGE_UNAVAILABLE; an unexpected exception: 500 INTERNAL with the request id in the body, the
  ``X-Request-Id`` header and the log.

The product routes take no dates, URLs, media types or JSON bodies, so those classes do not apply here.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import httpx
import pytest

from prw_api.product import create_app
from prw_api.server import BackgroundServer
from prw_platform.config import Settings
from prw_platform.db.database import Connection, Database
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.items import ItemDetail, ItemFilters, ItemPage
from tests.e2e.product.catalog import CATALOG, TENANT, Catalog
from tests.e2e.product.conftest import error_of

MIB = 1024 * 1024


def _chunked(data: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/v1/items"), ("GET", "/v1/items/x"), ("POST", "/v1/items")]
)
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_above_the_limit_is_413_payload_too_large(
    http: httpx.Client, method: str, path: str, chunked: bool
) -> None:
    body = b"[" + b"{}," * MIB + b"{}]"  # 3 MiB, over the default 1 MiB

    response = http.request(
        method,
        path,
        content=_chunked(body) if chunked else body,
        headers={"Content-Type": "application/json"},
    )

    if chunked:
        # Announced by nothing, the size is known only as bytes are read, and no route of this origin reads a
        # body: it answers as without one (the server discards the bytes, never holding them).
        assert (
            response.status_code == {"/v1/items": 405 if method == "POST" else 200, "/v1/items/x": 404}[path]
        )
    else:
        assert error_of(response) == (413, "PAYLOAD_TOO_LARGE", False)
    assert http.get("/v1/items?limit=1").status_code == 200


@pytest.mark.parametrize(
    "target",
    [
        "/v1/items/itm_%00",
        "/v1/items/%ED%A0%80",  # the UTF-8 form of a lone surrogate is not UTF-8
        "/v1/items/itm_%FF",
        "/v1/items?brand=%00",
        "/v1/items?q=Lumen%00",
        "/v1/items?mpn=P5%00",
        "/v1/items?profile=%00",
        "/v1/items?attr[storage:capacity]=1%00TB",
        "/v1/items?attr[storage%00capacity]=1",
        "/v1/items?%00=1",
        "/v1/items?cursor=%00",
        "/v1/items?brand=%C3%28",
        "/v1/items?q=%ED%A0%80",
        "/v1/merchants/mer_%00",
        "/v1/items/itm_%00/listings",
        "/v1/merchants?cursor=%00",
    ],
)
def test_a_nul_or_non_utf8_in_the_path_or_query_is_422_invalid_query(http: httpx.Client, target: str) -> None:
    response = http.get(target)

    assert error_of(response) == (422, "INVALID_QUERY", False)


@pytest.mark.parametrize(("destination", "listing"), [("DE", "lst_\u0000"), ("D\u0000", "lst_lum_p5_1t")])
def test_a_nul_in_a_shipping_basket_is_422_invalid_query_not_500(
    http: httpx.Client, catalog: Catalog, destination: str, listing: str
) -> None:
    body = {"destination": destination, "lines": [{"listing": listing, "quantity": 1}]}
    response = http.post("/v1/shipping/evaluations", json=body)

    assert error_of(response) == (422, "INVALID_QUERY", False)


def test_a_forged_cursor_that_decodes_to_a_nul_is_422_invalid_query(http: httpx.Client) -> None:
    cursor = base64.urlsafe_b64encode(b"itm_\x00").decode().rstrip("=")

    response = http.get(f"/v1/items?cursor={cursor}")

    assert error_of(response) == (422, "INVALID_QUERY", False)


def test_ordinary_text_in_filters_is_still_answered(http: httpx.Client, catalog: Catalog) -> None:
    for target in ("/v1/items?q=%C3%BC%20%F0%9F%99%82", "/v1/items?brand=Lumen", "/v1/items/itm_%C3%BC"):
        assert http.get(target).status_code in (200, 404)


class _FailingCatalog(PublicCatalog):
    """The deployment's catalog, whose reads run ``statement`` first (a real SQL failure) or raise ``error``."""

    statement: tuple[str, tuple[object, ...]] | None = None
    error: Exception | None = None

    def _fail(self) -> NoReturn:
        if self.error is not None:
            raise self.error
        assert self.statement is not None
        sql, parameters = self.statement

        def work(conn: Connection) -> NoReturn:
            conn.execute(sql, parameters)
            raise AssertionError("the statement should have failed")

        self.db.run(work, tenant_id=self.tenant_id)
        raise AssertionError("unreachable")

    def items(
        self,
        filters: ItemFilters,
        *,
        limit: int = 20,
        cursor: str | None = None,
        facets: tuple[str, ...] = (),
    ) -> ItemPage:
        self._fail()

    def item_detail(self, item_id: str) -> ItemDetail:
        self._fail()

    # The list and the detail routes read on the event loop (``*_async``); the failure runs off it.
    async def items_async(
        self,
        filters: ItemFilters,
        *,
        limit: int = 20,
        cursor: str | None = None,
        facets: tuple[str, ...] = (),
    ) -> ItemPage:
        await asyncio.to_thread(self._fail)
        raise AssertionError("unreachable")

    async def item_detail_async(self, item_id: str) -> ItemDetail:
        await asyncio.to_thread(self._fail)
        raise AssertionError("unreachable")


@pytest.fixture
def failing(
    module_product_db: Database, tmp_path: Path
) -> Iterator[tuple[type[_FailingCatalog], httpx.Client]]:
    """An in-process product server over the test catalog served by a ``_FailingCatalog``; configure the class,
    then call."""

    class Failing(_FailingCatalog):
        """This test's own class, so its configuration does not leak into another test."""

    app = create_app(Settings(data_dir=tmp_path / "prw"), Failing(module_product_db, TENANT, CATALOG))
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, timeout=10) as client:
        yield Failing, client


@pytest.mark.parametrize(
    "statement",
    [
        ("SELECT %s::int", (2**40,)),  # 22003 numeric_value_out_of_range
        ("SELECT %s::text::int", ("ten",)),  # 22P02 invalid_text_representation
        ("SELECT %s::text", ("\x00",)),
    ],
)
def test_a_database_data_error_is_422_invalid_query_not_500(
    failing: tuple[type[_FailingCatalog], httpx.Client], statement: tuple[str, tuple[object, ...]]
) -> None:
    catalog, client = failing
    catalog.statement = statement

    for target in ("/v1/items", "/v1/items/itm_ssd_p5_1t"):
        assert error_of(client.get(target)) == (422, "INVALID_QUERY", False)


def test_a_statement_timeout_past_its_retry_is_503_storage_unavailable(
    failing: tuple[type[_FailingCatalog], httpx.Client],
) -> None:
    catalog, client = failing
    catalog.statement = ("SET LOCAL statement_timeout = 20; SELECT pg_sleep(1)", ())

    response = client.get("/v1/items")

    assert error_of(response) == (503, "STORAGE_UNAVAILABLE", True)


def test_an_unexpected_exception_is_500_internal_with_the_request_id_in_body_header_and_log(
    failing: tuple[type[_FailingCatalog], httpx.Client], caplog: pytest.LogCaptureFixture
) -> None:
    catalog, client = failing
    catalog.error = KeyError("internal detail tok_9")

    with caplog.at_level(logging.ERROR, logger="prw_api"):
        response = client.get("/v1/items/itm_ssd_p5_1t")

    assert response.status_code == 500
    error = response.json()["error"]
    assert (error["code"], error["retryable"]) == ("INTERNAL", False)
    assert error["request_id"] == response.headers["x-request-id"]
    assert "tok_9" not in response.text
    assert any(error["request_id"] in record.getMessage() and record.exc_info for record in caplog.records)
    assert client.get("/openapi.json").status_code == 200

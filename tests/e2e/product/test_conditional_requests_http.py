"""Conditional requests of the product origin over real HTTP (RFC 9110 13.1.2, if_product_query caching).

A document that carries signed picture links changes when the links are signed for another window, so its ETag does
too: a client or CDN revalidating after the window gets 200 with fresh links instead of a 304 that keeps links that
then answer 403 LINK_EXPIRED; its max-age ends when the links are renewed. A document without links keeps the
release's ETag and the 304 that reads only the release. ``If-None-Match: *`` matches only a document that exists:
a missing entry is 404, as without the header.

The link clock is simulated (``PictureLinks(clock=...)``): the server reads the module's released catalog, signs and
opens links with a clock the test moves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from prw_api.product import create_app
from prw_api.server import BackgroundServer
from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.product.public.pictures import PictureLinks
from prw_platform.storage import FilesystemObjectStore
from tests.e2e.product.catalog import PICTURE_BUCKET, Catalog
from tests.e2e.product.conftest import error_of, served_catalog

#: The start of a link window (windows of one hour are aligned to the hour).
WINDOW_START = datetime(2026, 12, 1, 9, 0, 0, tzinfo=UTC)
TTL = timedelta(hours=1)


class LinkClock:
    def __init__(self) -> None:
        self.now = WINDOW_START + timedelta(seconds=10)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> LinkClock:
    return LinkClock()


@pytest.fixture
def product(
    tmp_path: Path,
    module_product_db: Database,
    catalog: Catalog,
    picture_store: FilesystemObjectStore,
    clock: LinkClock,
) -> Iterator[httpx.Client]:
    """The module's catalog served with links signed (and opened) on ``clock``; max-age 30 s."""
    links = PictureLinks(
        picture_store, PICTURE_BUCKET, b"e2e conditional requests key, 32B", ttl=TTL, clock=clock
    )
    served = served_catalog(module_product_db, links)
    settings = Settings(data_dir=tmp_path / "prw-product", product_cache_max_age_seconds=30)
    with (
        BackgroundServer(create_app(settings, served)) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        yield http


def _item_links(document: dict[str, Any]) -> list[str]:
    pictures = document["pictures"]
    return [pictures["main"]["url"], *(g["url"] for g in pictures["gallery"])]


#: Documents that carry picture links, and how to find them in each.
LINKED: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "/v1/items/itm_ssd_p5_1t": _item_links,
    "/v1/items?limit=100": lambda page: [
        url for item in page["items"] if "pictures" in item for url in _item_links(item)
    ],
    "/v1/categories/cls_ssd_drives": lambda category: [category["picture"]["url"]],
    "/v1/categories": lambda page: [c["picture"]["url"] for c in page["categories"] if "picture" in c],
}


@pytest.mark.parametrize("path", list(LINKED))
def test_a_document_revalidated_after_its_links_rotated_is_200_with_fresh_links(
    product: httpx.Client, clock: LinkClock, path: str
) -> None:
    first = product.get(path)
    assert first.status_code == 200, first.text
    etag, links = first.headers["etag"], LINKED[path](first.json())
    assert links
    # Within the window the links are the same: the ETag still names the document, 304 without a body.
    clock.now += timedelta(seconds=30)
    cached = product.get(path, headers={"If-None-Match": etag})
    assert (cached.status_code, cached.content, cached.headers["etag"]) == (304, b"", etag)

    # Two windows later the links the client kept have expired...
    clock.now = WINDOW_START + 2 * TTL + timedelta(seconds=10)
    assert all(error_of(product.get(url)) == (403, "LINK_EXPIRED", False) for url in links)
    # ...so revalidating with the old ETag is a 200 with another ETag and fresh links that open.
    revalidated = product.get(path, headers={"If-None-Match": etag})
    assert revalidated.status_code == 200
    assert revalidated.headers["etag"] != etag
    fresh = LINKED[path](revalidated.json())
    assert len(fresh) == len(links)
    assert set(fresh).isdisjoint(links)
    assert all(product.get(url).status_code == 200 for url in fresh)
    # The new ETag is current: 304 again.
    assert product.get(path, headers={"If-None-Match": revalidated.headers["etag"]}).status_code == 304


def test_a_document_with_links_is_fresh_no_longer_than_until_its_links_are_renewed(
    product: httpx.Client, clock: LinkClock
) -> None:
    clock.now = (
        WINDOW_START + TTL - timedelta(seconds=10)
    )  # 10 s before the links are signed for the next window
    linked = product.get("/v1/items/itm_ssd_p5_1t")
    revalidated = product.get("/v1/items/itm_ssd_p5_1t", headers={"If-None-Match": linked.headers["etag"]})
    unlinked = product.get("/v1/items/itm_hdd_halden_4t")

    assert linked.headers["cache-control"] == "public, max-age=10"
    assert (revalidated.status_code, revalidated.headers["cache-control"]) == (304, "public, max-age=10")
    assert unlinked.headers["cache-control"] == "public, max-age=30"


@pytest.mark.parametrize(
    "path", ["/v1/items/itm_hdd_halden_4t", "/v1/categories/cls_no_picture", "/v1/merchants/mer_shop_a"]
)
def test_a_document_without_links_keeps_the_release_etag_across_windows(
    product: httpx.Client, clock: LinkClock, path: str
) -> None:
    first = product.get(path)
    assert (first.status_code, first.headers["etag"]) == (200, '"g1r2"')

    clock.now += 5 * TTL
    again = product.get(path, headers={"If-None-Match": '"g1r2"'})
    assert (again.status_code, again.headers["etag"]) == (304, '"g1r2"')


@pytest.mark.parametrize(
    "path",
    [
        "/v1/items/itm_nowhere",
        "/v1/items/itm_unreleased_draft",  # applied, never released
        "/v1/items/itm_nowhere/listings",
        "/v1/merchants/mer_nowhere",
        "/v1/categories/cls_nowhere",
        "/v1/categories/cls_unreleased",
        "/v1/sources/src_nowhere",
    ],
)
def test_if_none_match_star_on_a_missing_entry_is_404(
    http: httpx.Client, catalog: Catalog, path: str
) -> None:
    # RFC 9110 13.1.2: "*" matches only a current representation; none exists, so the answer is the header's absence.
    assert error_of(http.get(path, headers={"If-None-Match": "*"})) == (404, "NOT_FOUND", False)


@pytest.mark.parametrize(
    "path",
    [
        "/v1/items/itm_ssd_p5_1t",
        "/v1/items",
        "/v1/items/itm_ssd_p5_1t/listings",
        "/v1/merchants/mer_shop_a",
        "/v1/merchants",
        "/v1/categories/cls_ssd_drives",
        "/v1/categories",
        "/v1/sources/src_shop_b",
    ],
)
def test_if_none_match_star_on_an_existing_document_is_304_with_its_etag(
    http: httpx.Client, catalog: Catalog, path: str
) -> None:
    current = http.get(path)
    assert current.status_code == 200

    cached = http.get(path, headers={"If-None-Match": "*"})

    assert (cached.status_code, cached.content, cached.headers["etag"]) == (304, b"", current.headers["etag"])

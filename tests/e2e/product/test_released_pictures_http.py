"""Released item pictures and class pictures in the public product API (seed 004), on real parts:
items decided by the decision service (AW-01) on a manual catalog, pictures and classes saved through the managed
file pipeline (each save an accepted change), the relay (AW-03), the product consumer (AW-04), releases, and the
product app over HTTP reading the bytes from the managed store behind signed links.

Never before release: a saved picture or class is private until a release publishes it; a picture replaced after a
release keeps serving the released one until the next release (also once its file is retired by the cleanup,
which keeps released bytes for thirty days); a deleted class leaves the public catalog at the next release."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from prw_platform.auth.keys import derived_secret
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.product.public.pictures import PictureLinks
from prw_platform.resolver.files import store as file_store
from prw_platform.resolver.files.lifecycle import FileState
from prw_platform.resolver.files.sources import UploadSource
from prw_platform.runtime import Budget, drain, run_stage
from prw_platform.services import AuthorizeRelease
from prw_platform.storage.port import sha256_hex
from tests.e2e.product.conftest import error_of
from tests.e2e.product.decisions import create_and_map, served_manual_catalog
from tests.integration.files.conftest import png

TENANT, CATALOG, SOURCE = "ten_pics", "cat_pics", "src_pics_web"
OPERATOR = "operator:ops_pia"


@pytest.fixture
def platform(deployment_settings: Settings) -> Iterator[Platform]:
    # A released or replaced file is due for the sweep at once: the cleanup runs inside the test.
    settings = deployment_settings.model_copy(update={"catalog_file_cleanup_delay_seconds": 0})
    with bootstrap(settings) as built:
        yield built


@pytest.fixture
def product(platform: Platform) -> Iterator[httpx.Client]:
    with served_manual_catalog(platform, TENANT, CATALOG, SOURCE) as http:
        yield http


def _item(platform: Platform, n: int) -> str:
    item_id = platform.decisions.decide(create_and_map(CATALOG, SOURCE, "pics", n), TENANT, CATALOG).item_id
    assert item_id is not None
    return item_id


def _release(platform: Platform) -> None:
    platform.decisions.release(AuthorizeRelease(CATALOG, OPERATOR, "publish the catalog"), TENANT)
    drain(platform)


def _save_pictures(platform: Platform, item_id: str, main: bytes, *gallery: bytes) -> None:
    platform.catalog_files.save_item_pictures(
        TENANT, item_id, UploadSource(main), [UploadSource(g) for g in gallery], actor=OPERATOR
    )
    drain(platform)


def _bytes(product: httpx.Client, picture: dict[str, Any]) -> bytes:
    response = product.get(picture["url"])
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == picture["content_type"] == "image/png"
    return response.content


def test_item_pictures_are_public_only_after_a_release_and_a_replacement_waits_for_the_next(
    platform: Platform, product: httpx.Client
) -> None:
    item = _item(platform, 1)
    _release(platform)
    assert "pictures" not in product.get(f"/v1/items/{item}").json()

    # A PNG whose header gives its size (640 x 480), and one whose header does not.
    front = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", 640, 480) + b"front"
    back = png("pics-back")
    _save_pictures(platform, item, front, back)
    # Applied by the consumer, not released: the public API shows no picture.
    assert "pictures" not in product.get(f"/v1/items/{item}").json()

    _release(platform)
    pictures = product.get(f"/v1/items/{item}").json()["pictures"]
    assert _bytes(product, pictures["main"]) == front
    assert [_bytes(product, g) for g in pictures["gallery"]] == [back]
    assert (pictures["main"]["size_bytes"], pictures["main"]["width"], pictures["main"]["height"]) == (
        len(front),
        640,
        480,
    )
    assert "width" not in pictures["gallery"][0]  # unknown: left out, not null
    (listed,) = product.get("/v1/items").json()["items"]
    assert listed["pictures"] == pictures  # the collection and the detail carry the same released pictures

    replacement = png("pics-front-2")
    _save_pictures(platform, item, replacement)
    still = product.get(f"/v1/items/{item}").json()["pictures"]
    assert _bytes(product, still["main"]) == front
    assert len(still["gallery"]) == 1

    _release(platform)
    now = product.get(f"/v1/items/{item}").json()["pictures"]
    assert _bytes(product, now["main"]) == replacement
    assert now["gallery"] == []


def test_a_replaced_released_picture_stays_readable_after_its_file_is_retired(
    platform: Platform, product: httpx.Client
) -> None:
    item = _item(platform, 2)
    first = png("pics-retire-1")
    _save_pictures(platform, item, first)
    _release(platform)
    released = product.get(f"/v1/items/{item}").json()["pictures"]["main"]
    assert _bytes(product, released) == first

    _save_pictures(platform, item, png("pics-retire-2"))
    # The replaced file is detached and due at once: the sweep claims it, the consumer retires it (committed).
    run_stage(platform, "files-sweep", Budget(batches=5))
    run_stage(platform, "files-cleanup", Budget(batches=5))
    (old,) = _files_in_state(platform, "discarded", first)
    assert old.retained_until is not None  # a released file is retired, its bytes kept thirty days

    # Not released yet: the public item still shows the released picture, and its bytes are still served.
    again = product.get(f"/v1/items/{item}").json()["pictures"]["main"]
    assert _bytes(product, again) == first


def released_sha(data: bytes) -> str:
    return sha256_hex(data)


def _files_in_state(platform: Platform, state: FileState, data: bytes) -> list[file_store.CatalogFile]:
    """The tenant's files in ``state`` holding ``data`` (the cleanup's outcome, read as the resolver stores it)."""
    return platform.resolver_api_db.run(
        lambda conn: [
            f for f in file_store.files_in_state(conn, TENANT, state, 100) if f.sha256 == released_sha(data)
        ],
        tenant_id=TENANT,
        read_only=True,
    )


def test_a_class_and_its_picture_are_public_after_a_release_and_leave_at_the_release_after_deletion(
    platform: Platform, product: httpx.Client
) -> None:
    item = _item(platform, 3)
    first, second = png("pics-class-1"), png("pics-class-2")
    platform.catalog_files.create_class(
        TENANT, CATALOG, "cls_drives", "Drives", picture=UploadSource(first), members=[item], actor=OPERATOR
    )
    drain(platform)
    assert product.get("/v1/categories").json()["categories"] == []
    assert error_of(product.get("/v1/categories/cls_drives")) == (404, "NOT_FOUND", False)

    _release(platform)
    category = product.get("/v1/categories/cls_drives").json()
    assert (category["category"], category["name"], category["item_count"]) == ("cls_drives", "Drives", 1)
    assert _bytes(product, category["picture"]) == first
    assert product.get("/v1/categories").json()["categories"] == [category]

    platform.catalog_files.update_class(
        TENANT, "cls_drives", name="Fast drives", picture=UploadSource(second), members=None, actor=OPERATOR
    )
    drain(platform)
    unchanged = product.get("/v1/categories/cls_drives").json()
    assert unchanged["name"] == "Drives"
    assert _bytes(product, unchanged["picture"]) == first

    _release(platform)
    changed = product.get("/v1/categories/cls_drives").json()
    assert changed["name"] == "Fast drives"
    assert _bytes(product, changed["picture"]) == second

    platform.catalog_files.delete_class(TENANT, "cls_drives", actor=OPERATOR)
    drain(platform)
    assert product.get("/v1/categories/cls_drives").status_code == 200  # deleted, not released yet

    _release(platform)
    assert error_of(product.get("/v1/categories/cls_drives")) == (404, "NOT_FOUND", False)
    assert product.get("/v1/categories").json()["categories"] == []


def test_a_tampered_or_expired_picture_link_is_refused(platform: Platform, product: httpx.Client) -> None:
    item = _item(platform, 4)
    _save_pictures(platform, item, png("pics-links"))
    _release(platform)
    url = product.get(f"/v1/items/{item}").json()["pictures"]["main"]["url"]
    assert product.get(url).status_code == 200

    payload, _, mac = url.removeprefix("/v1/files/").partition(".")
    for forged_mac in (
        ("A" if mac[0] != "A" else "B") + mac[1:],  # another mac
        mac[:-1] + ("A" if mac[-1] != "A" else "B"),  # another spelling (maybe of the same bytes)
    ):
        assert error_of(product.get(f"/v1/files/{payload}.{forged_mac}")) == (404, "NOT_FOUND", False)
    assert error_of(product.get(f"/v1/files/{payload[:-2]}.{mac}")) == (404, "NOT_FOUND", False)

    # A genuine link (the deployment's key) whose window ended: 403 LINK_EXPIRED.
    secret = derived_secret(platform.token_signing_key, "prw product pictures v1")
    past = platform.clock() - timedelta(hours=3)
    stale = PictureLinks(platform.store, "catalog-files", secret, clock=lambda: past)
    picture = {"sha256": released_sha(png("pics-links")), "media_type": "image/png"}
    expired = stale.public_picture(TENANT, CATALOG, picture, stale.expiry())
    assert expired is not None
    assert error_of(product.get(expired["url"])) == (403, "LINK_EXPIRED", False)
    # The same link for another catalog of the deployment is not this catalog's.
    foreign = stale.public_picture(TENANT, "cat_other", picture, int(platform.clock().timestamp()) + 3600)
    assert foreign is not None
    assert error_of(product.get(foreign["url"])) == (404, "NOT_FOUND", False)

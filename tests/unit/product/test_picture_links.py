"""Signed read links of released pictures (seed 004): no database, a filesystem store and a
simulated clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from prw_platform.product.errors import PictureGone, PictureLinkExpired, PictureLinkInvalid
from prw_platform.product.public.pictures import PictureLinks
from prw_platform.storage import FilesystemObjectStore
from prw_platform.storage.keys import ObjectKey
from prw_platform.storage.port import sha256_hex

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDRlinks"
SECRET = b"unit picture links key, 32 bytes"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 9, 59, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> FilesystemObjectStore:
    store = FilesystemObjectStore(tmp_path / "objects")
    store.put_if_absent(
        ObjectKey("catalog-files", "ten_a", sha256_hex(PNG)), PNG, sha256_hex(PNG), "image/png"
    )
    return store


def _picture(data: bytes = PNG) -> dict[str, object]:
    return {"sha256": sha256_hex(data), "media_type": "image/png", "size_bytes": len(data), "width": None}


def test_a_link_opens_the_released_bytes_and_leaves_unknown_dimensions_out(
    store: FilesystemObjectStore,
) -> None:
    links = PictureLinks(store, "catalog-files", SECRET, clock=Clock())

    document = links.public_picture("ten_a", "cat_a", _picture(), links.expiry())

    assert document is not None
    assert set(document) == {"url", "content_type", "size_bytes"}
    opened = links.open("ten_a", "cat_a", document["url"].removeprefix("/v1/files/"))
    assert (opened.data, opened.media_type) == (PNG, "image/png")


def test_links_of_one_window_are_the_same_and_live_at_least_one_window(store: FilesystemObjectStore) -> None:
    clock = Clock()
    links = PictureLinks(store, "catalog-files", SECRET, ttl=timedelta(hours=1), clock=clock)
    first = links.public_picture("ten_a", "cat_a", _picture(), links.expiry())
    clock.now += timedelta(seconds=30)  # 09:59:30, the same window
    assert links.public_picture("ten_a", "cat_a", _picture(), links.expiry()) == first
    assert first is not None
    token = first["url"].removeprefix("/v1/files/")

    clock.now = datetime(2026, 12, 1, 10, 59, 59, tzinfo=UTC)  # one window later: still valid
    assert links.open("ten_a", "cat_a", token).data == PNG
    clock.now = datetime(2026, 12, 1, 11, 0, 0, tzinfo=UTC)  # the end of the next window
    with pytest.raises(PictureLinkExpired) as expired:
        links.open("ten_a", "cat_a", token)
    assert (expired.value.status, expired.value.code) == (403, "LINK_EXPIRED")


def test_a_forged_foreign_or_non_canonical_link_is_not_found(store: FilesystemObjectStore) -> None:
    links = PictureLinks(store, "catalog-files", SECRET, clock=Clock())
    document = links.public_picture("ten_a", "cat_a", _picture(), links.expiry())
    assert document is not None
    token = document["url"].removeprefix("/v1/files/")
    other_key = PictureLinks(store, "catalog-files", b"another deployment key, 32 bytes", clock=Clock())

    for tenant, catalog, candidate in (
        ("ten_a", "cat_b", token),  # another catalog of the deployment
        ("ten_b", "cat_a", token),  # another tenant
        ("ten_a", "cat_a", token + "A"),  # another spelling
        ("ten_a", "cat_a", "x" + token),
        ("ten_a", "cat_a", "no-dot"),
    ):
        with pytest.raises(PictureLinkInvalid) as refused:
            links.open(tenant, catalog, candidate)
        assert (refused.value.status, refused.value.code) == (404, "NOT_FOUND")
    with pytest.raises(PictureLinkInvalid):
        other_key.open("ten_a", "cat_a", token)


def test_a_picture_whose_bytes_are_gone_is_not_found(store: FilesystemObjectStore) -> None:
    links = PictureLinks(store, "catalog-files", SECRET, clock=Clock())
    missing = _picture(b"\x89PNG\r\n\x1a\nnever stored")
    document = links.public_picture("ten_a", "cat_a", missing, links.expiry())
    assert document is not None

    with pytest.raises(PictureGone):
        links.open("ten_a", "cat_a", document["url"].removeprefix("/v1/files/"))


def test_a_snapshot_without_a_content_address_has_no_public_picture(store: FilesystemObjectStore) -> None:
    links = PictureLinks(store, "catalog-files", SECRET, clock=Clock())
    assert links.public_picture("ten_a", "cat_a", {"media_type": "image/png"}, links.expiry()) is None

"""Reading a picture source as a file (seed 004 preparing -> ready guard): the URL allow-list and the picture
sniffing, without a database."""

from __future__ import annotations

import pytest

from prw_platform.resolver.files.errors import UnreadableSource
from prw_platform.resolver.files.sources import allowed_url, check_picture, sniff_picture

ALLOW = ["https://cdn.example/pictures/"]


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://cdn.example/pictures/a.png", True),
        ("HTTPS://CDN.EXAMPLE/pictures/a.png", True),
        ("https://cdn.example/pictures/../secrets/a.png", False),
        ("https://cdn.example/pictures/%2e%2e/secrets/a.png", False),
        ("https://cdn.example/other/a.png", False),
        ("https://cdn.example.evil/pictures/a.png", False),
        ("https://user:pw@cdn.example/pictures/a.png", False),
        ("ftp://cdn.example/pictures/a.png", False),
        ("file:///etc/passwd", False),
        ("not a url", False),
    ],
)
def test_only_urls_under_an_allowed_prefix_are_read(url: str, allowed: bool) -> None:
    assert allowed_url(url, ALLOW) is allowed


def test_nothing_is_allowed_by_default() -> None:
    assert allowed_url("https://cdn.example/pictures/a.png", []) is False


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (b"\x89PNG\r\n\x1a\nrest", "image/png"),
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"GIF89arest", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPrest", "image/webp"),
        (b"<html>", None),
        (b"RIFF\x00\x00\x00\x00WAVE", None),
    ],
)
def test_pictures_are_recognized_by_their_first_bytes(data: bytes, media_type: str | None) -> None:
    assert sniff_picture(data) == media_type


def test_an_empty_a_too_large_or_a_non_picture_body_is_unreadable() -> None:
    for data, limit, said in (
        (b"", 10, "empty"),
        (b"\x89PNG\r\n\x1a\n" * 3, 10, "more than"),
        (b"text", 10, "not a"),
    ):
        with pytest.raises(UnreadableSource, match=said) as refused:
            check_picture(data, limit, "the upload")
        assert refused.value.status == 400

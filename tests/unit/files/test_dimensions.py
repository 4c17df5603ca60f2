"""Width and height from a picture's header (the public API gives "width/height if known"), for the four types the
pipeline admits, and None when the header does not say."""

from __future__ import annotations

import struct
import zlib

import pytest

from prw_platform.resolver.files.dimensions import picture_size


def _png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


def _jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof2 = b"\xff\xc2" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + b"\xff" + sof2 + b"\xff\xd9"  # with a fill byte before the SOF


def _webp(chunk: bytes, body: bytes) -> bytes:
    return (
        b"RIFF" + struct.pack("<I", 4 + 8 + len(body)) + b"WEBP" + chunk + struct.pack("<I", len(body)) + body
    )


@pytest.mark.parametrize(
    ("data", "media_type", "size"),
    [
        (_png(640, 480), "image/png", (640, 480)),
        (b"GIF89a" + struct.pack("<HH", 32, 16) + b"\x00", "image/gif", (32, 16)),
        (_jpeg(1024, 768), "image/jpeg", (1024, 768)),
        (
            _webp(b"VP8X", b"\x00" * 4 + (799).to_bytes(3, "little") + (599).to_bytes(3, "little")),
            "image/webp",
            (800, 600),
        ),
        (
            _webp(b"VP8 ", b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", 320, 200)),
            "image/webp",
            (320, 200),
        ),
        # VP8L: 14 bits of width - 1 then 14 bits of height - 1, little-endian after the 0x2f signature.
        (_webp(b"VP8L", b"\x2f" + ((99) | (49 << 14)).to_bytes(4, "little")), "image/webp", (100, 50)),
    ],
)
def test_the_header_gives_width_and_height(data: bytes, media_type: str, size: tuple[int, int]) -> None:
    assert picture_size(data, media_type) == size


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"),  # truncated
        (_png(0, 480), "image/png"),  # a zero side is no picture size
        (_png(1 << 30, 1), "image/png"),  # beyond belief
        (b"\xff\xd8\xff\xe0\x00", "image/jpeg"),  # no frame header
        (b"\xff\xd8\x00\x00\x00\x00\x00\x00\x00\x00\x00", "image/jpeg"),  # not a marker
        (b"RIFF\x00\x00\x00\x00WEBPVP8Z\x00\x00\x00\x00", "image/webp"),  # an unknown chunk
        (_png(640, 480), "image/svg+xml"),  # a type the pipeline does not admit
    ],
)
def test_a_header_that_does_not_say_gives_none(data: bytes, media_type: str) -> None:
    assert picture_size(data, media_type) is None

"""A picture's width and height in pixels, read from its header (the public API gives them "if
known"). Pure: the bytes in, ``(width, height)`` or None when the header does not say (a truncated or unusual
file). Only the four types ``sources.sniff_picture`` admits: PNG, JPEG, GIF, WebP."""

from __future__ import annotations

import struct
from typing import Final

#: JPEG start-of-frame markers (baseline, progressive, lossless, ...): every SOFn but DHT (C4), JPG (C8), DAC (CC).
_SOF: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
#: Markers without a length: TEM, RST0-7, SOI.
_STANDALONE: Final = frozenset({0x01, *range(0xD0, 0xD9)})
#: Larger than any real picture (PNG allows 2^31 - 1): a header claiming more is not believed.
_MAX_SIDE: Final = 1 << 20


def picture_size(data: bytes, media_type: str) -> tuple[int, int] | None:
    size: tuple[int, int] | None
    if media_type == "image/png":
        size = _png(data)
    elif media_type == "image/gif":
        size = struct.unpack("<HH", data[6:10]) if len(data) >= 10 else None
    elif media_type == "image/jpeg":
        size = _jpeg(data)
    elif media_type == "image/webp":
        size = _webp(data)
    else:
        size = None
    if size is None or not all(0 < side <= _MAX_SIDE for side in size):
        return None
    return size


def _png(data: bytes) -> tuple[int, int] | None:
    # The signature (8), then the IHDR chunk: length (4), type (4), width (4), height (4).
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _jpeg(data: bytes) -> tuple[int, int] | None:
    index = 2  # after SOI
    while index + 9 <= len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        if marker == 0xFF:  # fill byte
            index += 1
            continue
        if marker in _STANDALONE:
            index += 2
            continue
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return width, height
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        if length < 2:
            return None
        index += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        b = data[21:25]
        width = 1 + (((b[1] & 0x3F) << 8) | b[0])
        height = 1 + (((b[3] & 0x0F) << 10) | (b[2] << 2) | ((b[1] & 0xC0) >> 6))
        return width, height
    if chunk == b"VP8X" and len(data) >= 30:
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    return None

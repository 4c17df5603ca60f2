"""Bytes to text: a capture is stored as bytes, and the same bytes must always decode to the same text."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# <meta charset="x"> and <meta http-equiv="Content-Type" content="text/html; charset=x">, looked for in the
# first bytes only, as the HTML standard's prescan does.
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_PRESCAN_BYTES = 4096
# The WHATWG Encoding Standard decodes these labels as windows-1252, and so do browsers.
_WINDOWS_1252_LABELS = frozenset({"iso-8859-1", "iso8859-1", "latin-1", "latin1", "us-ascii", "ascii", "l1"})


@dataclass(frozen=True, slots=True)
class DecodedDocument:
    text: str
    encoding: str
    #: How the encoding was chosen: ``bom``, ``media type``, ``meta charset`` or ``default``.
    source: str
    #: True when some bytes were not valid in ``encoding`` and were replaced by U+FFFD.
    replaced: bool


def media_type_charset(media_type: str) -> str | None:
    """The ``charset`` parameter of a media type (``text/html; charset=ISO-8859-1``), if any."""
    for parameter in media_type.split(";")[1:]:
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return None


def _known_codec(label: str | None) -> str | None:
    if not label:
        return None
    folded = label.strip().lower()
    if folded in _WINDOWS_1252_LABELS:
        return "cp1252"
    try:
        return codecs.lookup(folded).name
    except LookupError:
        return None


def decode_html(data: bytes, media_type: str) -> DecodedDocument:
    """Decode with, in order: a byte-order mark, the media type's charset, a ``<meta>`` charset in the first
    4 KiB, then UTF-8. Undecodable bytes become U+FFFD (never an exception), so decoding is total."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _decode(data[len(bom) :], encoding, "bom")
    declared = _known_codec(media_type_charset(media_type))
    if declared:
        return _decode(data, declared, "media type")
    match = _META_CHARSET.search(data[:_PRESCAN_BYTES])
    meta = _known_codec(match.group(1).decode("ascii", "replace")) if match else None
    # A page cannot be UTF-16 if its ASCII-compatible <meta> says so: the prescan itself read ASCII.
    if meta and not meta.startswith("utf-16"):
        return _decode(data, meta, "meta charset")
    return _decode(data, "utf-8", "default")


def _decode(data: bytes, encoding: str, source: str) -> DecodedDocument:
    try:
        return DecodedDocument(data.decode(encoding), encoding, source, replaced=False)
    except UnicodeDecodeError:
        return DecodedDocument(data.decode(encoding, errors="replace"), encoding, source, replaced=True)

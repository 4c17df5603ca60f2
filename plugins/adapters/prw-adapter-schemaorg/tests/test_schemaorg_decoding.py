"""Bytes decode the same way every time: BOM, then the media type's charset, then <meta charset>, then UTF-8
with replacement (never an exception)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from prw_adapter_schemaorg import SchemaOrgAdapter
from prw_adapter_schemaorg.decoding import decode_html, media_type_charset

from prw_platform.plugins import Artifact, CaptureView, Extraction

Extract = Callable[..., Extraction]

CAFE_CP1252 = "<html><head><title>Café crème</title></head><body><h1>Café crème</h1></body></html>".encode(
    "cp1252"
)


def test_charset_of_the_media_type_is_used(extract_html: Extract) -> None:
    extraction = extract_html(CAFE_CP1252, media_type="text/html; charset=windows-1252")
    assert extraction.listing.title == "Café crème"
    assert not any("U+FFFD" in d for d in extraction.diagnostics)


def test_capture_charset_is_used_for_an_artifact_stored_without_one(adapter: SchemaOrgAdapter) -> None:
    capture = CaptureView("cap_1", "src_1", "text/html; charset=windows-1252")
    artifact = Artifact("art_1", "-", "application/octet-stream", CAFE_CP1252)
    assert adapter.extract(capture, [artifact]).listing.title == "Café crème"


def test_meta_charset_is_used_when_the_media_type_has_none(extract_html: Extract) -> None:
    data = b'<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head><body></body></html>'
    assert extract_html(data).listing.title == "Café"


def test_http_equiv_content_type_is_a_meta_charset(extract_html: Extract) -> None:
    data = (
        b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-15">'
        b"<title>Prix \xa4</title></head><body></body></html>"
    )
    assert extract_html(data).listing.title == "Prix €"


def test_byte_order_mark_wins_over_a_wrong_media_type_charset() -> None:
    document = decode_html(b"\xef\xbb\xbf<title>Cr\xc3\xa8me</title>", "text/html; charset=iso-8859-1")
    assert (document.text, document.source) == ("<title>Crème</title>", "bom")


def test_undecodable_bytes_are_replaced_and_diagnosed(extract_html: Extract) -> None:
    extraction = extract_html(b"<html><head><title>Caf\xe9</title></head><body></body></html>")
    assert extraction.listing.title == "Caf\ufffd"
    assert "bytes not valid utf-8 (default) replaced with U+FFFD" in extraction.diagnostics


def test_unknown_charset_falls_back_to_meta_then_utf8() -> None:
    document = decode_html("<title>Crème</title>".encode(), "text/html; charset=x-unknown-42")
    assert (document.text, document.encoding, document.source) == ("<title>Crème</title>", "utf-8", "default")


@pytest.mark.parametrize(
    ("media_type", "charset"),
    [
        ("text/html; charset=UTF-8", "UTF-8"),
        ('text/html; charset="iso-8859-1"', "iso-8859-1"),
        ("text/html;foo=bar; Charset=koi8-r", "koi8-r"),
        ("text/html", None),
        ("text/html; charset=", None),
    ],
)
def test_media_type_charset(media_type: str, charset: str | None) -> None:
    assert media_type_charset(media_type) == charset

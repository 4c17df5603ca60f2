"""pa_prw_listing_json@1.0.0: prw.listing/1 documents into claims; real validation errors are ExtractionError."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from prw_platform.plugins import Artifact, CaptureView, Extraction, ExtractionError
from prw_platform.plugins.builtin.listing_json import ListingJsonAdapter

CAPTURE = CaptureView("cap_1", "src_1", "application/json", url="https://shop.example/p/1")


def _artifact(
    data: bytes | str, media_type: str = "application/json", artifact_id: str = "art_1"
) -> Artifact:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return Artifact(artifact_id, "0" * 64, media_type, raw)


def _extract(document: object, *more: Artifact) -> Extraction:
    return ListingJsonAdapter().extract(CAPTURE, [_artifact(json.dumps(document)), *more])


def test_claims_carry_json_pointer_locators_in_a_fixed_order() -> None:
    extraction = _extract(
        {
            "specs": {"a/b": "x", "c~d": 2},
            "gtin": "4006381333931",
            "title": "T",
            "price": "9.99",
            "brand": "B",
        }
    )
    assert [(c.attribute, c.value, c.evidence_locator) for c in extraction.claims] == [
        ("core:title", "T", "/title"),
        ("core:brand", "B", "/brand"),
        ("core:gtin", "4006381333931", "/gtin"),
        ("core:price", "9.99", "/price"),
        ("spec:a/b", "x", "/specs/a~1b"),
        ("spec:c~d", 2, "/specs/c~0d"),
    ]
    assert extraction.adapter == "pa_prw_listing_json@1.0.0"


def test_a_json_number_price_keeps_its_digits_and_becomes_a_decimal() -> None:
    extraction = ListingJsonAdapter().extract(CAPTURE, [_artifact('{"title": "T", "price": 89.90}')])
    assert extraction.listing.price == Decimal("89.90")
    assert str(extraction.listing.price) == "89.90"
    assert ("core:price", "89.90") in {(c.attribute, c.value) for c in extraction.claims}


def test_a_formatted_price_string_is_left_to_the_profile_with_a_diagnostic() -> None:
    extraction = _extract({"title": "T", "price": "1.234,56 €"})
    assert extraction.listing.price is None
    assert any("not a plain decimal" in d for d in extraction.diagnostics)


def test_listing_fields_come_from_the_document_and_the_capture() -> None:
    listing = _extract(
        {"title": "T", "currency": "EUR", "availability": "https://schema.org/PreOrder"}
    ).listing
    assert (listing.title, listing.url, listing.currency, listing.availability) == (
        "T",
        "https://shop.example/p/1",
        "EUR",
        "preorder",
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe{", "not UTF-8"),
        ("{", "not valid JSON"),
        ("[1, 2]", "must be a JSON object, got list"),
        ('{"title": "T", "price": NaN}', "NaN is not a number"),
        ('{"title": "A", "title": "B"}', "has the key 'title' twice"),
        ('{"brand": "B"}', "does not match prw.listing/1"),
        ('{"title": "T", "gtin": 4006381333931}', "/gtin: 4006381333931 is not of type 'string'"),
        ('{"title": "T", "price": -1}', "/price: -1 is less than the minimum of 0"),
        ('{"title": "T", "specs": {"capacity": [1]}}', "/specs/capacity: [1] is not of type"),
        ('{"title": "", "mpn": "X"}', "/title: '' should be non-empty"),
        ('{"schema": "prw.listing/2", "title": "T"}', "/schema: 'prw.listing/1' was expected"),
    ],
)
def test_invalid_documents_raise_extraction_error_with_the_reason(data: bytes | str, message: str) -> None:
    with pytest.raises(ExtractionError) as info:
        ListingJsonAdapter().extract(CAPTURE, [_artifact(data)])
    assert message in str(info.value)
    assert info.value.code == "EXTRACTION_FAILED"


def test_a_capture_without_a_json_artifact_is_an_extraction_error() -> None:
    with pytest.raises(ExtractionError, match="no JSON artifact among 1"):
        ListingJsonAdapter().extract(CAPTURE, [_artifact("<html/>", media_type="text/html")])


def test_unknown_keys_extra_artifacts_and_url_mismatch_are_diagnostics() -> None:
    extraction = _extract(
        {"title": "T", "colour": "red", "url": "https://shop.example/other"},
        _artifact("{}", artifact_id="art_2"),
    )
    assert extraction.diagnostics == (
        "read art_1; other JSON artifacts ignored: art_2",
        "unknown keys not read: colour",
        "document url https://shop.example/other differs from the captured url https://shop.example/p/1",
    )


@pytest.mark.parametrize(
    ("media_type", "supported"),
    [
        ("application/json", True),
        ("Application/JSON; charset=utf-8", True),
        ("application/vnd.prw.listing+json", True),
        ("text/html", False),
        ("", False),
        ("application/ld+json", False),
    ],
)
def test_supports_json_media_types_only(media_type: str, supported: bool) -> None:
    assert ListingJsonAdapter().supports(CaptureView("cap_1", "src_1", media_type)) is supported


def test_the_generic_adapter_yields_to_specific_ones() -> None:
    assert ListingJsonAdapter().priority < 0

"""Built-in adapter ``pa_prw_listing_json@1.0.0``: a collector-side structured listing document.

A collector that already knows the fields (a merchant feed, an API response it mapped itself) sends them as one
JSON object (media type ``application/json`` or ``application/vnd.prw.listing+json``)::

    {
      "schema": "prw.listing/1",          optional; when present it must be exactly this
      "title": "Samsung 870 EVO 1TB",     at least one of title, gtin, mpn is required
      "brand": "Samsung", "mpn": "MZ-77E1T0B/EU",
      "gtin": "8801643233722",            a string: leading zeros matter
      "price": 89.90,                     a number or a string ("89,90 €" is kept for the profile to parse)
      "currency": "EUR",
      "availability": "https://schema.org/InStock",
      "url": "https://shop.example/p/870-evo-1tb",
      "specs": {"capacity": "1 TB", "interface": "SATA 6Gb/s"}   string, number or boolean values
    }

Every claim's evidence locator is the RFC 6901 JSON pointer of the value it was read from (``/gtin``,
``/specs/capacity``). Unknown top-level keys are reported as diagnostics, never read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any

from prw_platform.plugins.hookspecs import hookimpl
from prw_platform.plugins.types import (
    PLUGIN_API_VERSION,
    Artifact,
    Availability,
    CaptureView,
    Claim,
    ClaimValue,
    Extraction,
    ExtractionError,
    ListingFields,
    SourceAdapter,
)
from prw_platform.plugins.vocabulary import availability_from_text

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

PRW_PLUGIN_API = PLUGIN_API_VERSION

LISTING_SCHEMA_ID = "prw.listing/1"
MEDIA_TYPES = frozenset({"application/json", "application/vnd.prw.listing+json"})

_SCALAR = {"type": ["string", "number", "boolean"]}
_TEXT = {"type": "string", "minLength": 1}
LISTING_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "schema": {"const": LISTING_SCHEMA_ID},
        "title": _TEXT,
        "brand": _TEXT,
        "mpn": _TEXT,
        "gtin": _TEXT,
        "price": {"type": ["number", "string"], "minimum": 0, "minLength": 1},
        "currency": _TEXT,
        "availability": _TEXT,
        "url": _TEXT,
        "specs": {"type": "object", "additionalProperties": _SCALAR},
    },
    "anyOf": [{"required": ["title"]}, {"required": ["gtin"]}, {"required": ["mpn"]}],
}


@cache
def _validator() -> Draft202012Validator:
    # jsonschema is imported on the first listing document, not with the plugin API: its import is slow
    # (bench/README.md), and most processes that load plugins (`prw plugins`, `prw extract` on an HTML page)
    # never validate a listing.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(LISTING_SCHEMA)


# Top-level fields read as core claims, in the order claims are emitted (deterministic for the same bytes).
_CORE_FIELDS = ("title", "brand", "mpn", "gtin", "price", "currency", "availability")
_PLAIN_DECIMAL = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")


def _pointer(*tokens: str) -> str:
    """RFC 6901: ``~`` is written ``~0`` and ``/`` is written ``~1`` inside a reference token."""
    return "".join("/" + token.replace("~", "~0").replace("/", "~1") for token in tokens)


def _claim_value(value: object) -> ClaimValue:
    if isinstance(value, Decimal):
        return str(value)  # the number exactly as written: 89.90 stays "89.90"
    if isinstance(value, str | int | float | bool):
        return value.strip() if isinstance(value, str) else value
    raise ExtractionError(f"unexpected JSON value {value!r}")


def _reject_constant(name: str) -> object:
    raise ExtractionError(f"listing document is not valid JSON: {name} is not a number")


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    document: dict[str, object] = {}
    for key, value in pairs:
        if key in document:
            raise ExtractionError(
                f"listing document has the key {key!r} twice; which one is meant is unclear"
            )
        document[key] = value
    return document


def parse_listing_document(data: bytes) -> dict[str, Any]:
    """Decode and validate one listing document; ExtractionError with the JSON pointer of each problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExtractionError(f"listing document is not UTF-8: {exc}") from exc
    try:
        document = json.loads(
            text, parse_float=Decimal, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys
        )
    except json.JSONDecodeError as exc:
        raise ExtractionError(f"listing document is not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise ExtractionError(f"listing document must be a JSON object, got {type(document).__name__}")
    errors = sorted(_validator().iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        details = "; ".join(
            f"{_pointer(*(str(p) for p in e.absolute_path)) or '/'}: {e.message}" for e in errors
        )
        raise ExtractionError(f"listing document does not match {LISTING_SCHEMA_ID}: {details}")
    return document


class ListingJsonAdapter:
    """Reads ``prw.listing/1`` documents; generic (any ``application/json``), so it yields to specific adapters."""

    name: str = "pa_prw_listing_json"
    version: str = "1.0.0"
    priority: int = -10

    def supports(self, capture: CaptureView) -> bool:
        media_type = capture.media_type.split(";", 1)[0].strip().lower() if capture.media_type else ""
        return media_type in MEDIA_TYPES

    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        diagnostics: list[str] = []
        documents = [a for a in artifacts if a.media_type.split(";", 1)[0].strip().lower() in MEDIA_TYPES]
        if not documents:
            raise ExtractionError(f"capture {capture.capture_id} has no JSON artifact among {len(artifacts)}")
        if len(documents) > 1:
            ignored = ", ".join(a.artifact_id for a in documents[1:])
            diagnostics.append(f"read {documents[0].artifact_id}; other JSON artifacts ignored: {ignored}")
        document = parse_listing_document(documents[0].data)

        unknown = sorted(set(document) - set(LISTING_SCHEMA["properties"]))
        if unknown:
            diagnostics.append(f"unknown keys not read: {', '.join(unknown)}")
        claims = [
            Claim(f"core:{key}", _claim_value(document[key]), _pointer(key))
            for key in _CORE_FIELDS
            if key in document
        ]
        for key, value in document.get("specs", {}).items():
            if not key.strip():
                diagnostics.append("a spec with an empty name was not read")
                continue
            claims.append(Claim(f"spec:{key.strip()}", _claim_value(value), _pointer("specs", key)))

        listing = ListingFields(
            title=document.get("title"),
            url=document.get("url") or capture.url,
            price=self._price(document.get("price"), diagnostics),
            currency=document.get("currency"),
            availability=self._availability(document.get("availability"), diagnostics),
        )
        if capture.url and document.get("url") and document["url"] != capture.url:
            diagnostics.append(f"document url {document['url']} differs from the captured url {capture.url}")
        return Extraction(
            adapter=f"{self.name}@{self.version}",
            claims=tuple(claims),
            listing=listing,
            diagnostics=tuple(diagnostics),
        )

    @staticmethod
    def _price(raw: object, diagnostics: list[str]) -> Decimal | None:
        if raw is None:
            return None
        if isinstance(raw, Decimal):
            return raw
        if isinstance(raw, int) and not isinstance(raw, bool):
            return Decimal(raw)
        if isinstance(raw, str) and _PLAIN_DECIMAL.fullmatch(raw.strip()):
            return Decimal(raw.strip())
        diagnostics.append(f"price {raw!r} is not a plain decimal: left to the profile's price normalization")
        return None

    @staticmethod
    def _availability(raw: object, diagnostics: list[str]) -> Availability | None:
        if not isinstance(raw, str):
            return None
        availability = availability_from_text(raw)
        if availability is None:
            diagnostics.append(f"availability {raw!r} is not a known schema.org value or phrase")
        return availability


@hookimpl
def prw_register_adapters() -> list[SourceAdapter]:
    return [ListingJsonAdapter()]

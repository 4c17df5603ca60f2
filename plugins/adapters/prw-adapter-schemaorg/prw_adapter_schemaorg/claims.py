"""Claims: what the page says, attribute by attribute, as found (trimmed), with where it says it.

The primary product's schema.org values come first; an attribute it does not state is taken from the page's
OpenGraph/meta tags, and the title last from ``<h1>``/``<title>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prw_adapter_schemaorg.entities import Entity, ProductView, Value
from prw_adapter_schemaorg.offers import OfferReading
from prw_adapter_schemaorg.page import PageSignals
from prw_adapter_schemaorg.vocabulary import spec_attribute
from prw_platform.plugins import Claim, ClaimValue

DESCRIPTION_LIMIT = 2000
IMAGE_LIMIT = 10
GTIN_PROPERTIES = ("gtin", "gtin8", "gtin12", "gtin13", "gtin14", "isbn")

# Attributes a product may leave unsaid, and the meta tags (OpenGraph product, Twitter, HTML) that can say them.
_META_FALLBACKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core:brand", ("product:brand", "og:brand")),
    ("core:mpn", ("product:mfr_part_no",)),
    ("core:gtin", ("product:gtin", "product:upc", "product:ean", "product:isbn")),
    ("core:sku", ("product:retailer_item_id",)),
    ("core:url", ("og:url",)),
    ("core:image", ("og:image", "twitter:image")),
    ("core:description", ("og:description", "twitter:description", "description")),
    ("core:category", ("product:category",)),
    ("core:color", ("product:color",)),
)


def as_found(value: ClaimValue) -> ClaimValue:
    """Strings trimmed, with whitespace runs as one space (as HTML renders them); other values unchanged."""
    return " ".join(value.split()) if isinstance(value, str) else value


@dataclass
class ClaimList:
    claims: list[Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, attribute: str, value: ClaimValue, locator: str) -> None:
        found = as_found(value)
        if found == "" or any(
            c.attribute == attribute and c.evidence_locator == locator for c in self.claims
        ):
            return
        if attribute == "core:description" and isinstance(found, str) and len(found) > DESCRIPTION_LIMIT:
            self.notes.append(f"core:description at {locator} cut to {DESCRIPTION_LIMIT} characters")
            found = found[:DESCRIPTION_LIMIT].rstrip()
        self.claims.append(Claim(attribute, found, locator))

    def has(self, attribute: str) -> bool:
        return any(claim.attribute == attribute for claim in self.claims)

    def add_value(self, attribute: str, value: Value | None) -> None:
        if value is not None and not isinstance(value.data, Entity):
            self.add(attribute, value.data, value.locator)


def _named(value: Value) -> Value | None:
    """A plain value, or the ``name`` of an entity (a Brand, an Organization, a category Thing)."""
    entity = value.entity
    if entity is None:
        return value
    return entity.first("name", "codeValue")


def _image(value: Value) -> Value | None:
    entity = value.entity
    return value if entity is None else entity.first("url", "contentUrl")


def _first_of(view: ProductView, offer: Entity | None, name: str) -> Value | None:
    return next(iter(view.values(name)), None) or (offer.first(name) if offer else None)


def add_product_claims(claims: ClaimList, view: ProductView, offer: OfferReading) -> None:
    claims.add_value("core:title", view.values("name")[0] if view.values("name") else None)
    claims.add_value("core:brand", next((n for v in view.values("brand") if (n := _named(v))), None))
    claims.add_value("core:mpn", _first_of(view, offer.offer, "mpn"))
    gtin_sources = [view.values(name) for name in GTIN_PROPERTIES]
    if not any(gtin_sources) and offer.offer is not None:
        gtin_sources = [offer.offer.values(name) for name in GTIN_PROPERTIES]
    for values in gtin_sources:
        for value in values:
            claims.add_value("core:gtin", value)
    claims.add_value("core:sku", _first_of(view, offer.offer, "sku"))
    claims.add_value("core:url", next(iter(view.values("url")), None) or offer.url)
    for value in view.values("image")[:IMAGE_LIMIT]:
        claims.add_value("core:image", _image(value))
    claims.add_value(
        "core:description", next((v for v in view.values("description") if isinstance(v.data, str)), None)
    )
    for value in view.values("category"):
        claims.add_value("core:category", _named(value))
    for value in view.values("color"):
        claims.add_value("core:color", value)
    for specification in view.entities("additionalProperty"):
        _add_spec(claims, specification)


def _add_spec(claims: ClaimList, specification: Entity) -> None:
    """``spec:<lower_snake_name>`` = the PropertyValue's value; a unitText (else unitCode) is appended after a
    space (``"45 kg"``), so the claim reads as the page shows it."""
    label = next((v.data for v in specification.values("name") if isinstance(v.data, str)), None)
    label = label or next(
        (v.data for v in specification.values("propertyID") if isinstance(v.data, str)), None
    )
    attribute = spec_attribute(label) if label else None
    if attribute is None:
        claims.notes.append(f"{specification.locator}: additionalProperty without a name skipped")
        return
    unit = specification.first("unitText", "unitCode")
    unit_text = unit.data.strip() if unit is not None and isinstance(unit.data, str) else ""
    found = False
    for value in specification.values("value"):
        if isinstance(value.data, Entity):
            continue
        found = True
        data = as_found(value.data)
        claims.add(attribute, f"{data} {unit_text}" if unit_text else data, value.locator)
    if not found:
        claims.notes.append(f"{specification.locator}: additionalProperty {label!r} has no value; skipped")


def _title_fallback(page: PageSignals) -> tuple[str, str] | None:
    """og:title, twitter:title, the first ``<h1>`` that is part of ``<title>``, ``<title>``, the first ``<h1>``.
    (An ``<h1>`` outside the title is often a dialog's: Amazon's first is "Adding to Cart...".)"""
    meta = page.first_meta("og:title", "twitter:title")
    if meta is not None:
        return meta.value, meta.locator
    folded_title = _fold(page.title.value) if page.title else ""
    heading = next((h for h in page.headings if _fold(h.value) and _fold(h.value) in folded_title), None)
    for located in (heading, page.title, next(iter(page.headings), None)):
        if located is not None:
            return located.value, located.locator
    return None


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def add_page_claims(claims: ClaimList, page: PageSignals) -> None:
    if not claims.has("core:title"):
        title = _title_fallback(page)
        if title is not None:
            claims.add("core:title", *title)
    for attribute, names in _META_FALLBACKS:
        if claims.has(attribute):
            continue
        for name in names:
            located = page.meta.get(name)
            if located is not None:
                claims.add(attribute, located.value, located.locator)
                if attribute != "core:gtin":
                    break
    if not claims.has("core:url") and page.canonical is not None:
        claims.add("core:url", page.canonical.value, page.canonical.locator)

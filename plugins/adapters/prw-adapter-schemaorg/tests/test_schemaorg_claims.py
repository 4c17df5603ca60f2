"""Claims are as found (trimmed), namespaced, and carry a locator a reviewer can follow."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from prw_adapter_schemaorg.vocabulary import spec_attribute

from prw_platform.plugins import Extraction

Extract = Callable[..., Extraction]
ClaimsOf = Callable[[Extraction, str], list[tuple[object, str]]]


def page(node: dict[str, object], *, head: str = "", body: str = "") -> str:
    product = {"@context": "https://schema.org", "@type": "Product", **node}
    script = f'<script type="application/ld+json">{json.dumps(product)}</script>'
    return f"<html><head>{head}{script}</head><body>{body}</body></html>"


def test_identifiers_brand_and_offer_fields_are_claimed_with_locators(extract_html: Extract) -> None:
    node = {
        "name": "  Samsung 870 EVO\n 1TB ",
        "brand": {"@type": "Brand", "name": "Samsung"},
        "mpn": "MZ-77E1T0B/EU",
        "gtin13": 8806090545917,
        "isbn": "978-3-16-148410-0",
        "sku": "870-1TB",
        "url": "https://shop.example/870",
        "image": [
            "https://shop.example/870-a.jpg",
            {"@type": "ImageObject", "url": "https://shop.example/870-b.jpg"},
        ],
        "category": [{"@type": "Thing", "name": "SSD"}, "Storage"],
        "color": "black",
        "offers": {
            "@type": "Offer",
            "price": "89.90",
            "priceCurrency": "EUR",
            "availability": "https://schema.org/InStock",
        },
    }
    extraction = extract_html(page(node))
    assert [(c.attribute, c.value, c.evidence_locator) for c in extraction.claims] == [
        ("core:title", "Samsung 870 EVO 1TB", "jsonld[0].name"),
        ("core:brand", "Samsung", "jsonld[0].brand.name"),
        ("core:mpn", "MZ-77E1T0B/EU", "jsonld[0].mpn"),
        ("core:gtin", 8806090545917, "jsonld[0].gtin13"),
        ("core:gtin", "978-3-16-148410-0", "jsonld[0].isbn"),
        ("core:sku", "870-1TB", "jsonld[0].sku"),
        ("core:url", "https://shop.example/870", "jsonld[0].url"),
        ("core:image", "https://shop.example/870-a.jpg", "jsonld[0].image[0]"),
        ("core:image", "https://shop.example/870-b.jpg", "jsonld[0].image[1].url"),
        ("core:category", "SSD", "jsonld[0].category[0].name"),
        ("core:category", "Storage", "jsonld[0].category[1]"),
        ("core:color", "black", "jsonld[0].color"),
        ("core:price", "89.90", "jsonld[0].offers.price"),
        ("core:currency", "EUR", "jsonld[0].offers.priceCurrency"),
        ("core:availability", "https://schema.org/InStock", "jsonld[0].offers.availability"),
    ]
    assert extraction.listing.title == "Samsung 870 EVO 1TB"
    assert extraction.listing.url == "https://shop.example/870"
    assert extraction.listing.availability == "in_stock"


def test_identifiers_on_the_offer_are_used_when_the_product_has_none(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    offer = {"@type": "Offer", "price": 5, "priceCurrency": "EUR", "sku": "S-1", "gtin": "04012345678901"}
    extraction = extract_html(page({"name": "Screw", "offers": offer}))
    assert claims_of(extraction, "core:sku") == [("S-1", "jsonld[0].offers.sku")]
    assert claims_of(extraction, "core:gtin") == [("04012345678901", "jsonld[0].offers.gtin")]


def test_additional_properties_become_spec_claims_with_their_unit(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    properties = [
        {"@type": "PropertyValue", "name": "Screen Size", "value": 6.1, "unitText": "in"},
        {"@type": "PropertyValue", "name": "batteryCapacity", "value": "4000", "unitCode": "AMH"},
        {"@type": "PropertyValue", "propertyID": "waterResistance", "value": "IP68"},
        {"@type": "PropertyValue", "name": "Colours", "value": ["red", "blue"]},
        {"@type": "PropertyValue", "name": "5G", "value": True},
        {"@type": "PropertyValue", "name": "Weight"},
        {"@type": "PropertyValue", "value": "orphan"},
    ]
    extraction = extract_html(page({"name": "Phone", "additionalProperty": properties}))
    specs = [
        (c.attribute, c.value, c.evidence_locator)
        for c in extraction.claims
        if c.attribute.startswith("spec:")
    ]
    assert specs == [
        ("spec:screen_size", "6.1 in", "jsonld[0].additionalProperty[0].value"),
        ("spec:battery_capacity", "4000 AMH", "jsonld[0].additionalProperty[1].value"),
        ("spec:water_resistance", "IP68", "jsonld[0].additionalProperty[2].value"),
        ("spec:colours", "red", "jsonld[0].additionalProperty[3].value[0]"),
        ("spec:colours", "blue", "jsonld[0].additionalProperty[3].value[1]"),
        ("spec:5g", True, "jsonld[0].additionalProperty[4].value"),
    ]
    assert "jsonld[0].additionalProperty[5]: additionalProperty 'Weight' has no value; skipped" in (
        extraction.diagnostics
    )
    assert (
        "jsonld[0].additionalProperty[6]: additionalProperty without a name skipped" in extraction.diagnostics
    )


def test_long_description_is_bounded_and_noted(extract_html: Extract, claims_of: ClaimsOf) -> None:
    extraction = extract_html(page({"name": "Book", "description": "  word  " * 1000}))
    ((description, locator),) = claims_of(extraction, "core:description")
    assert isinstance(description, str)
    assert 1990 < len(description) <= 2000
    assert description.startswith("word word")
    assert locator == "jsonld[0].description"
    assert "core:description at jsonld[0].description cut to 2000 characters" in extraction.diagnostics


def test_long_meta_description_is_bounded_too(extract_html: Extract, claims_of: ClaimsOf) -> None:
    head = f'<meta name="description" content="{"lorem " * 500}">'
    extraction = extract_html(f"<html><head>{head}</head><body><h1>Lamp</h1></body></html>")
    ((description, locator),) = claims_of(extraction, "core:description")
    assert isinstance(description, str)
    assert 1990 < len(description) <= 2000
    assert locator == "meta[name=description]"
    assert "core:description at meta[name=description] cut to 2000 characters" in extraction.diagnostics


def test_meta_tags_fill_what_the_product_does_not_say(extract_html: Extract, claims_of: ClaimsOf) -> None:
    head = (
        '<meta property="og:url" content="https://shop.example/kettle">'
        '<meta property="og:image" content="https://shop.example/kettle.jpg">'
        '<meta property="og:description" content="A kettle.">'
        '<meta property="product:brand" content="Acme">'
        '<meta property="product:availability" content="in stock">'
    )
    extraction = extract_html(page({"name": "Kettle"}, head=head))
    assert claims_of(extraction, "core:url") == [("https://shop.example/kettle", "meta[property=og:url]")]
    assert claims_of(extraction, "core:image") == [
        ("https://shop.example/kettle.jpg", "meta[property=og:image]")
    ]
    assert claims_of(extraction, "core:description") == [("A kettle.", "meta[property=og:description]")]
    assert claims_of(extraction, "core:brand") == [("Acme", "meta[property=product:brand]")]
    assert claims_of(extraction, "core:availability") == [("in stock", "meta[property=product:availability]")]
    assert extraction.listing.availability == "in_stock"


def test_unrecognized_availability_is_kept_as_found_and_listed_as_unknown(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    offer = {"@type": "Offer", "price": "5", "priceCurrency": "EUR", "availability": "Ships in 3 weeks"}
    extraction = extract_html(page({"name": "Chair", "offers": offer}))
    assert claims_of(extraction, "core:availability") == [
        ("Ships in 3 weeks", "jsonld[0].offers.availability")
    ]
    assert extraction.listing.availability == "unknown"


def test_title_without_structured_data_is_the_heading_inside_the_title(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    html = (
        "<html><head><title>Shop | Walnut Desk | Free delivery</title></head>"
        "<body><h1>Sign in</h1><h1>Walnut Desk</h1></body></html>"
    )
    extraction = extract_html(html)
    assert claims_of(extraction, "core:title") == [("Walnut Desk", "css:h1[1]")]


def test_title_falls_back_to_the_title_element(extract_html: Extract, claims_of: ClaimsOf) -> None:
    extraction = extract_html("<html><head><title> Walnut Desk </title></head><body><p>x</p></body></html>")
    assert claims_of(extraction, "core:title") == [("Walnut Desk", "css:title")]


def test_canonical_link_is_the_url_of_last_resort(extract_html: Extract, claims_of: ClaimsOf) -> None:
    html = '<html><head><link rel="canonical" href="https://shop.example/d"></head><body><h1>D</h1></body></html>'
    extraction = extract_html(html, url="https://shop.example/d?utm=x")
    assert claims_of(extraction, "core:url") == [("https://shop.example/d", "link[rel=canonical]")]


def test_listing_url_is_the_capture_url_when_the_page_names_none(extract_html: Extract) -> None:
    extraction = extract_html("<html><body><h1>D</h1></body></html>", url="https://shop.example/d")
    assert extraction.listing.url == "https://shop.example/d"
    assert not [c for c in extraction.claims if c.attribute == "core:url"]


@pytest.mark.parametrize(
    ("name", "attribute"),
    [
        ("screenSize", "spec:screen_size"),
        ("Screen size (in)", "spec:screen_size_in"),
        ("HDMIPorts", "spec:hdmi_ports"),
        ("USB-C ports", "spec:usb_c_ports"),
        ("Größe", "spec:größe"),
        ("  ", None),
        ("--", None),
        ("mp3Player", "spec:mp3_player"),
        ("5G", "spec:5g"),
    ],
)
def test_spec_attribute_names(name: str, attribute: str | None) -> None:
    assert spec_attribute(name) == attribute

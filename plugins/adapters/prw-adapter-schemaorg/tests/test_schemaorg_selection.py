"""Several Product entities on one page: the primary one is chosen by a fixed rule (title match, offer price,
completeness, syntax, document order), and the skipped ones are named in the diagnostics."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal

from prw_platform.plugins import Extraction

Extract = Callable[..., Extraction]
ClaimsOf = Callable[[Extraction, str], list[tuple[object, str]]]


def page(*nodes: object, title: str, head: str = "") -> str:
    scripts = "".join(f'<script type="application/ld+json">{json.dumps(node)}</script>' for node in nodes)
    return f"<html><head><title>{title}</title>{head}{scripts}</head><body></body></html>"


def product(name: str, price: str | None = None, **extra: object) -> dict[str, object]:
    node: dict[str, object] = {"@context": "https://schema.org", "@type": "Product", "name": name, **extra}
    if price is not None:
        node["offers"] = {"@type": "Offer", "price": price, "priceCurrency": "EUR"}
    return node


def test_product_named_like_the_page_wins_over_an_earlier_one(extract_html: Extract) -> None:
    extraction = extract_html(
        page(
            product("Red Toaster", "19.00", sku="T"),
            product("Blue Kettle", "29.00"),
            title="Blue Kettle | Shop",
        )
    )
    assert extraction.listing.title == "Blue Kettle"
    assert extraction.listing.price == Decimal("29.00")
    assert (
        "2 Product entities; primary jsonld[1] ('Blue Kettle') chosen by title match yes, price yes, completeness 2, "
        "then syntax and document order; skipped: jsonld[0] ('Red Toaster')"
    ) in extraction.diagnostics


def test_without_a_title_match_the_product_with_a_price_wins(extract_html: Extract) -> None:
    extraction = extract_html(
        page(product("Manual", None, sku="M", brand="Acme"), product("Kettle", "29.00"), title="Shop")
    )
    assert extraction.listing.title == "Kettle"
    assert any("skipped: jsonld[0] ('Manual')" in d for d in extraction.diagnostics)


def test_title_match_is_on_whole_words(extract_html: Extract) -> None:
    # "Shop" is not "Shopping bag": the priced product wins, not the one whose name merely contains the title.
    extraction = extract_html(page(product("Shopping bag"), product("Kettle", "29.00"), title="Shop"))
    assert extraction.listing.title == "Kettle"


def test_then_the_more_complete_product_wins(extract_html: Extract) -> None:
    extraction = extract_html(
        page(product("A", "1.00"), product("B", "2.00", sku="B-1", brand="Acme", color="red"), title="Shop")
    )
    assert extraction.listing.title == "B"


def test_then_json_ld_wins_over_microdata_for_the_same_product(
    extract_fixture: Extract, claims_of: ClaimsOf
) -> None:
    # A Common Crawl page with the same product in JSON-LD and in microdata.
    extraction = extract_fixture("wdc_lspc/04.html")
    assert claims_of(extraction, "core:price") == [("87.7", "jsonld[1].offers.price")]
    assert any(
        d.startswith("2 Product entities; primary jsonld[1] ")
        and d.endswith("skipped: microdata[3] ('Boitier additionnel Bmw 5 520D 184 ch')")
        for d in extraction.diagnostics
    ), extraction.diagnostics


def test_two_microdata_products_on_a_real_page(extract_fixture: Extract) -> None:
    extraction = extract_fixture("wdc_lspc/03.html")
    assert extraction.listing.price == Decimal("645")
    assert extraction.listing.currency == "CZK"
    assert any(
        d.startswith("2 Product entities; primary microdata[0] ") and "skipped: microdata[2]" in d
        for d in extraction.diagnostics
    )


def test_products_nested_in_a_product_are_not_candidates(extract_html: Extract) -> None:
    kettle = product("Kettle", "29.00", isRelatedTo=product("Descaler", "4.00"), isAccessoryOrSparePartFor=[])
    extraction = extract_html(page(kettle, title="Shop"))
    assert extraction.listing.title == "Kettle"
    assert not any("Product entities" in d for d in extraction.diagnostics)


def _group(*variants: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "@context": "https://schema.org",
        "@type": "ProductGroup",
        "name": "Trail Shoe",
        "brand": {"@type": "Brand", "name": "Acme"},
        "productGroupID": "TS",
        "hasVariant": list(variants),
        **extra,
    }


def _variant(size: str, price: str, url: str) -> dict[str, object]:
    return {
        "@type": "Product",
        "sku": f"TS-{size}",
        "size": size,
        "url": url,
        "offers": {"@type": "Offer", "price": price, "priceCurrency": "EUR"},
    }


def test_product_group_is_read_as_the_variant_at_the_page_url(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    group = _group(
        _variant("42", "99.00", "https://shop.example/ts?size=42"),
        _variant("43", "109.00", "https://shop.example/ts?size=43"),
    )
    extraction = extract_html(page(group, title="Trail Shoe"), url="https://shop.example/ts?size=43")
    assert claims_of(extraction, "core:sku") == [("TS-43", "jsonld[0].hasVariant[1].sku")]
    assert claims_of(extraction, "core:price") == [("109.00", "jsonld[0].hasVariant[1].offers.price")]
    # What the variant does not say comes from its group.
    assert claims_of(extraction, "core:title") == [("Trail Shoe", "jsonld[0].name")]
    assert claims_of(extraction, "core:brand") == [("Acme", "jsonld[0].brand.name")]
    assert (
        "jsonld[0]: ProductGroup with 2 variants; jsonld[0].hasVariant[1] is the listing (its url is the page's); "
        "the group fills in what the variant does not say"
    ) in extraction.diagnostics


def test_product_group_without_a_url_match_uses_the_first_variant_with_a_price(extract_html: Extract) -> None:
    unpriced = {"@type": "Product", "sku": "TS-41"}
    group = _group(unpriced, _variant("42", "99.00", "https://shop.example/ts?size=42"))
    extraction = extract_html(page(group, title="Trail Shoe"), url="https://shop.example/elsewhere")
    assert extraction.listing.price == Decimal("99.00")
    assert any(
        "jsonld[0].hasVariant[1] is the listing (the first with a price)" in d for d in extraction.diagnostics
    )


def test_variant_with_is_variant_of_takes_missing_values_from_its_group(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    variant = product("Trail Shoe 42", "99.00", sku="TS-42")
    variant["isVariantOf"] = {"@type": "ProductGroup", "name": "Trail Shoe", "brand": "Acme", "color": "grey"}
    extraction = extract_html(page(variant, title="Trail Shoe 42"))
    assert claims_of(extraction, "core:title") == [("Trail Shoe 42", "jsonld[0].name")]
    assert claims_of(extraction, "core:brand") == [("Acme", "jsonld[0].isVariantOf.brand")]
    assert claims_of(extraction, "core:color") == [("grey", "jsonld[0].isVariantOf.color")]

"""Real pages carry malformed JSON-LD: it is repaired where that is unambiguous, skipped (with its index) where
not, and one bad block never hides the others."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from prw_adapter_schemaorg.jsonld import parse_block

from prw_platform.plugins import Extraction

Extract = Callable[..., Extraction]
ClaimsOf = Callable[[Extraction, str], list[tuple[object, str]]]


def page(*blocks: str, title: str = "Kettle", script_type: str = "application/ld+json") -> str:
    scripts = "".join(f'<script type="{script_type}">{block}</script>' for block in blocks)
    return f"<html><head><title>{title}</title>{scripts}</head><body></body></html>"


KETTLE = '{"@context": "https://schema.org", "@type": "Product", "name": "Kettle", "sku": "K-1"}'


def test_trailing_commas_and_comments_are_repaired_and_diagnosed(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    block = """<!--
    {
      "@context": "https://schema.org", // the vocabulary
      "@type": "Product",
      "name": "Kettle, 1.7 l // steel",  /* the name keeps its slashes */
      "offers": {"@type": "Offer", "price": "24.90", "priceCurrency": "EUR",},
    }
    -->"""
    extraction = extract_html(page(block))
    assert claims_of(extraction, "core:title") == [("Kettle, 1.7 l // steel", "jsonld[0].name")]
    assert extraction.listing.price == Decimal("24.90")
    assert (
        "jsonld[0]: malformed JSON-LD repaired (HTML comment markers removed, JavaScript comments removed, "
        "trailing commas removed)"
    ) in extraction.diagnostics


def test_unreadable_block_is_skipped_with_its_index_and_later_blocks_are_read(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    broken = '{"@type": "Product", "name": "Broken" "sku": "B-1"}'
    extraction = extract_html(page(broken, KETTLE))
    assert claims_of(extraction, "core:sku") == [("K-1", "jsonld[1].sku")]
    assert (
        "jsonld[0]: malformed JSON-LD skipped (Expecting ',' delimiter: line 1 column 39 (char 38))"
    ) in extraction.diagnostics


def test_empty_block_is_skipped_and_diagnosed(extract_html: Extract) -> None:
    extraction = extract_html(page("   ", KETTLE))
    assert "jsonld[0]: malformed JSON-LD skipped (empty block)" in extraction.diagnostics
    assert extraction.listing.title == "Kettle"


def test_concatenated_objects_in_one_block_are_read_as_a_list(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    block = '{"@type": "WebSite", "name": "Shop"}\n' + KETTLE
    extraction = extract_html(page(block))
    assert claims_of(extraction, "core:sku") == [("K-1", "jsonld[0][1].sku")]
    assert "jsonld[0]: malformed JSON-LD repaired (2 concatenated JSON values read as a list)" in (
        extraction.diagnostics
    )


def test_html_escaped_json_is_unescaped(extract_html: Extract, claims_of: ClaimsOf) -> None:
    block = "{&quot;@type&quot;: &quot;Product&quot;, &quot;name&quot;: &quot;Kettle&quot;}"
    extraction = extract_html(page(block))
    assert claims_of(extraction, "core:title") == [("Kettle", "jsonld[0].name")]
    assert "jsonld[0]: malformed JSON-LD repaired (HTML-escaped JSON unescaped)" in extraction.diagnostics


def test_media_type_parameters_on_the_script_type_are_allowed(extract_html: Extract) -> None:
    extraction = extract_html(page(KETTLE, script_type="application/ld+json; charset=utf-8"))
    assert extraction.listing.title == "Kettle"


def test_graph_with_main_entity_reference_counts_the_product_once(
    extract_html: Extract, claims_of: ClaimsOf
) -> None:
    block = """{"@context": "https://schema.org", "@graph": [
      {"@type": "WebPage", "@id": "https://shop.example/k#page", "mainEntity": {"@id": "https://shop.example/k#product"}},
      {"@type": "Product", "@id": "https://shop.example/k#product", "name": "Kettle",
       "offers": {"@id": "https://shop.example/k#offer"}},
      {"@type": "Offer", "@id": "https://shop.example/k#offer", "price": 19.5, "priceCurrency": "GBP"}
    ]}"""
    extraction = extract_html(page(block))
    assert not any("Product entities" in d for d in extraction.diagnostics), extraction.diagnostics
    assert claims_of(extraction, "core:title") == [("Kettle", "jsonld[0].@graph[1].name")]
    # A reference resolves to the node that defines it: the locator is where the value is written.
    assert claims_of(extraction, "core:price") == [(19.5, "jsonld[0].@graph[2].price")]
    assert extraction.listing.price == Decimal("19.5")
    assert extraction.listing.currency == "GBP"


def test_product_nested_in_item_page_main_entity_is_read(
    extract_fixture: Extract, claims_of: ClaimsOf
) -> None:
    # schema.org example eg-0394: ItemPage.mainEntity is the Product; its Offer points back with itemOffered.
    extraction = extract_fixture("schemaorg_examples/eg-0394.jsonld.html")
    assert claims_of(extraction, "core:title") == [("Explosive tennis balls", "jsonld[0].mainEntity.name")]
    assert claims_of(extraction, "core:price") == [("1000.00", "jsonld[0].mainEntity.offers.price")]


def test_self_referencing_nodes_do_not_loop(extract_html: Extract) -> None:
    block = """{"@type": "Product", "@id": "#p", "name": "Loop", "isRelatedTo": {"@id": "#p"},
      "offers": {"@type": "Offer", "@id": "#o", "price": "5", "priceCurrency": "USD", "itemOffered": {"@id": "#p"},
                 "seller": {"@id": "#o"}}}"""
    extraction = extract_html(page(block, title="Loop"))
    assert extraction.listing.price == Decimal("5")


def test_top_level_array_blocks_keep_their_item_index(extract_fixture: Extract, claims_of: ClaimsOf) -> None:
    extraction = extract_fixture("metascraper_shopping/html/overstock.html")
    assert claims_of(extraction, "core:price") == [("31.49", "jsonld[0][0].offers.price")]


@pytest.mark.parametrize(
    ("text", "repairs"),
    [
        ('{"a": [1, 2,],}', ("trailing commas removed",)),
        ('{"a": "x, ]"}', ()),
        ('{"a": "//not a comment"}', ()),
        ('{"a": "quote \\" ,}"}', ()),
        ('{"a": 1};', ("stray separators ignored",)),
    ],
)
def test_repairs_never_touch_string_contents(text: str, repairs: tuple[str, ...]) -> None:
    block = parse_block(0, text)
    assert block.error is None
    assert block.repairs == repairs

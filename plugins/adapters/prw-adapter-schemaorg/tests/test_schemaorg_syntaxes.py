"""The same product in JSON-LD, microdata and RDFa gives the same core claims (schema.org's own examples)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from prw_platform.plugins import Extraction

# Examples whose three forms carry the same content upstream.
SAME_IN_ALL_THREE = ["4658", "eg-0011", "eg-0029", "eg-0031", "eg-0375", "eg-0376"]
# Upstream forms that differ: eg-0010's JSON-LD offer says 55.00 where its microdata and RDFa say 1000.00, and
# 4660's JSON-LD has a description its microdata and RDFa lack. There, microdata and RDFa must agree.
MICRODATA_EQUALS_RDFA = ["eg-0010", "4660"]
SYNTAX_PREFIX = {"jsonld": "jsonld[", "microdata": "microdata[", "rdfa": "rdfa["}

Extract = Callable[..., Extraction]


def _read(extract_fixture: Extract, example: str, syntax: str) -> Extraction:
    return extract_fixture(f"schemaorg_examples/{example}.{syntax}.html")


def _claimed(extraction: Extraction) -> list[tuple[str, object]]:
    return sorted((c.attribute, c.value) for c in extraction.claims)


@pytest.mark.parametrize("example", SAME_IN_ALL_THREE)
def test_three_syntaxes_give_the_same_claims_and_listing(example: str, extract_fixture: Extract) -> None:
    read = {syntax: _read(extract_fixture, example, syntax) for syntax in SYNTAX_PREFIX}
    assert read["jsonld"].claims, "the example has a Product"
    assert _claimed(read["jsonld"]) == _claimed(read["microdata"]) == _claimed(read["rdfa"])
    assert read["jsonld"].listing == read["microdata"].listing == read["rdfa"].listing


@pytest.mark.parametrize("example", SAME_IN_ALL_THREE + MICRODATA_EQUALS_RDFA)
def test_every_claim_locates_into_its_own_syntax(example: str, extract_fixture: Extract) -> None:
    for syntax, prefix in SYNTAX_PREFIX.items():
        extraction = _read(extract_fixture, example, syntax)
        assert all(c.evidence_locator.startswith(prefix) for c in extraction.claims), extraction.claims


@pytest.mark.parametrize("example", MICRODATA_EQUALS_RDFA)
def test_microdata_and_rdfa_agree_where_upstream_json_ld_differs(
    example: str, extract_fixture: Extract
) -> None:
    microdata = _read(extract_fixture, example, "microdata")
    rdfa = _read(extract_fixture, example, "rdfa")
    assert _claimed(microdata) == _claimed(rdfa)
    assert microdata.listing == rdfa.listing


def test_kenmore_example_reads_every_core_claim_in_microdata(extract_fixture: Extract) -> None:
    extraction = _read(extract_fixture, "eg-0010", "microdata")
    assert [(c.attribute, c.value, c.evidence_locator) for c in extraction.claims] == [
        ("core:title", 'Kenmore White 17" Microwave', "microdata[0].properties.name"),
        ("core:image", "kenmore-microwave-17in.jpg", "microdata[0].properties.image"),
        (
            "core:description",
            "0.7 cubic feet countertop microwave. Has six preset cooking categories and convenience features "
            "like Add-A-Minute and Child Lock.",
            "microdata[0].properties.description",
        ),
        ("core:price", "1000.00", "microdata[0].properties.offers.properties.price"),
        ("core:currency", "USD", "microdata[0].properties.offers.properties.priceCurrency"),
        (
            "core:availability",
            "https://schema.org/InStock",
            "microdata[0].properties.offers.properties.availability",
        ),
    ]
    assert extraction.listing.price == Decimal("1000.00")
    assert extraction.listing.availability == "in_stock"


def test_rdfa_additional_properties_become_spec_claims(extract_fixture: Extract) -> None:
    extraction = _read(extract_fixture, "4660", "rdfa")
    specs = sorted((c.attribute, c.value) for c in extraction.claims if c.attribute.startswith("spec:"))
    assert specs == [
        ("spec:carbon_footprint", "45 kg CO2-eq"),
        ("spec:recyclable_content", "92%"),
        ("spec:spare_part_availability", "P5Y"),
    ]

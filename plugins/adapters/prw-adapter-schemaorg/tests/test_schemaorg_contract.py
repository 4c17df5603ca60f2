"""pa_schemaorg keeps the platform's adapter contract (prw_platform.plugins.testing.AdapterContract), run on
recorded captures with expected claims and listing fields."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import prw_adapter_schemaorg.plugin as plugin_module
import pytest

from prw_platform.plugins import Claim
from prw_platform.plugins.testing import AdapterCase, AdapterContract

FIXTURES = Path(__file__).parent / "fixtures"


class TestSchemaOrgAdapterContract(AdapterContract):
    @pytest.fixture
    def plugin_module(self) -> object:
        return plugin_module

    @pytest.fixture
    def adapter_pin(self) -> str:
        return "pa_schemaorg@1.0.0"

    @pytest.fixture
    def cases(self) -> Sequence[AdapterCase]:
        return [
            AdapterCase.from_file(
                FIXTURES / "metascraper_shopping/html/overstock.html",
                media_type="text/html",
                url="https://www.overstock.com/Home-Garden/Certified-International-Elegance-Canape-Plates-Set-of-6/29099468/product.html",
                expected_claims=(
                    Claim(
                        "core:title",
                        "Certified International Elegance Canape Plates, Set of 6",
                        "jsonld[0][0].name",
                    ),
                    Claim("core:mpn", "23272SET6", "jsonld[0][0].mpn"),
                    Claim("core:price", "31.49", "jsonld[0][0].offers.price"),
                    ("core:brand", "Certified International"),
                    ("core:sku", "34092028"),
                    ("core:availability", "InStock"),
                ),
                expected_listing={"price": Decimal("31.49"), "currency": "USD", "availability": "in_stock"},
            ),
            AdapterCase.from_file(
                FIXTURES / "metascraper_shopping/html/rejuvenation.html",
                media_type="text/html; charset=utf-8",
                expected_claims=(
                    Claim("core:brand", "Rejuvenation", "jsonld[0].brand.name"),
                    Claim("core:price", "120.00", "meta[property=product:price:amount]"),
                    ("core:mpn", "A1686"),
                ),
                expected_listing={
                    "price": Decimal("120.00"),
                    "currency": "USD",
                    "title": "Keystick Wall Sconce",
                },
            ),
            AdapterCase.from_file(
                FIXTURES / "schemaorg_examples/eg-0010.rdfa.html",
                media_type="application/xhtml+xml",
                expected_claims=(
                    Claim("core:price", "1000.00", "rdfa[0].offers.price"),
                    Claim("core:availability", "https://schema.org/InStock", "rdfa[0].offers.availability"),
                    ("core:title", 'Kenmore White 17" Microwave'),
                ),
                expected_listing={"price": Decimal("1000.00"), "currency": "USD", "availability": "in_stock"},
            ),
            AdapterCase.from_file(
                FIXTURES / "schemaorg_examples/eg-0489.jsonld.html",
                media_type="text/html",
                expected_claims=(
                    Claim("core:gtin", "98766051104399", "jsonld[0][1].gtin14"),
                    Claim("core:color", "light blue", "jsonld[0][1].color"),
                    Claim("core:price", 15, "jsonld[0][1].offers[0].priceSpecification[0].price"),
                ),
                expected_listing={"price": Decimal("15"), "availability": "backorder"},
            ),
            AdapterCase.from_file(
                FIXTURES / "schemaorg_examples/4660.microdata.html",
                media_type="text/html",
                expected_claims=(
                    Claim(
                        "spec:carbon_footprint",
                        "45 kg CO2-eq",
                        "microdata[0].properties.additionalProperty[1].properties.value",
                    ),
                    ("core:title", "Circular Smartphone"),
                ),
                expected_listing={"price": None},
            ),
            AdapterCase.from_file(
                FIXTURES / "extruct_samples/misc_opengraph_ns_product_test.html",
                media_type="text/html",
                expected_claims=(("core:title", "Better Off Dead [Exclusive Blu-ray Steelbook]"),),
                expected_listing={"price": Decimal("17.99"), "currency": "USD"},
            ),
            AdapterCase.from_file(
                FIXTURES / "extruct_samples/schema.org_product.html",
                media_type="text/html",
                expected_claims=(("core:brand", "ACME"), ("core:mpn", "925872")),
                expected_listing={"title": "Executive Anvil", "price": Decimal("119.99"), "currency": "USD"},
            ),
            AdapterCase.from_file(
                FIXTURES / "wdc_lspc/06.html",
                media_type="text/html",
                url="https://www.notino.cz/dove/mencare-clean-comfort-deodorant-antiperspirant-ve-spreji/",
                expected_listing={"price": Decimal("59.00"), "currency": "CZK", "availability": "in_stock"},
            ),
        ]


class TestSchemaOrgAdapterV11Contract(TestSchemaOrgAdapterContract):
    """pa_schemaorg@1.1.0 keeps every claim @1.0.0 reads on the same captures (its rules only add or refine)."""

    @pytest.fixture
    def adapter_pin(self) -> str:
        return "pa_schemaorg@1.1.0"


class TestSchemaOrgAdapterV3Contract(TestSchemaOrgAdapterContract):
    """pa_schemaorg@3.0.0 on recorded captures: every claim rated, the offer claimed once per independent
    statement (expected claims name their source and confidence)."""

    @pytest.fixture
    def adapter_pin(self) -> str:
        return "pa_schemaorg@3.0.0"

    @pytest.fixture
    def cases(self) -> Sequence[AdapterCase]:
        return [
            AdapterCase.from_file(
                FIXTURES / "metascraper_shopping/html/overstock.html",
                media_type="text/html",
                url="https://www.overstock.com/Home-Garden/Certified-International-Elegance-Canape-Plates-Set-of-6/29099468/product.html",
                expected_claims=(
                    Claim("core:price", "31.49", "jsonld[0][0].offers.price", "structured", 0.85),
                    Claim("core:price", "$31.49", "css:span#product-price", "buy_box", 0.85),
                    Claim("core:currency", "USD", "jsonld[0][0].offers.priceCurrency", "structured", 0.95),
                    Claim("core:sku", "34092028", "jsonld[0][0].sku", "structured", 0.9),
                    Claim(
                        "core:availability", "InStock", "jsonld[0][0].offers.availability", "structured", 0.9
                    ),
                ),
                expected_listing={"price": Decimal("31.49"), "currency": "USD", "availability": "in_stock"},
            ),
            AdapterCase.from_file(
                FIXTURES / "metascraper_shopping/html/rejuvenation.html",
                media_type="text/html; charset=utf-8",
                expected_claims=(
                    Claim("core:price", "120.00", "meta[property=product:price:amount]", "meta", 0.75),
                    Claim("core:currency", "USD", "meta[property=product:price:currency]", "meta", 0.9),
                ),
                expected_listing={"price": Decimal("120.00"), "currency": "USD"},
            ),
            AdapterCase.from_file(
                FIXTURES / "wdc_lspc/06.html",
                media_type="text/html",
                url="https://www.notino.cz/dove/mencare-clean-comfort-deodorant-antiperspirant-ve-spreji/",
                expected_claims=(
                    Claim(
                        "core:price",
                        "59.00",
                        "microdata[1].properties.offers.properties.price",
                        "structured",
                        0.85,
                    ),
                    Claim("core:currency", "Kč", "css:[itemprop=price]", "text", 0.8),
                ),
                expected_listing={"price": Decimal("59.00"), "currency": "CZK", "availability": "in_stock"},
            ),
        ]

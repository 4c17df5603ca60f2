"""The built-in pa_prw_listing_json adapter keeps the same contract as any installed adapter."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import pytest

from prw_platform.plugins import Claim
from prw_platform.plugins.builtin import listing_json
from prw_platform.plugins.testing import AdapterCase, AdapterContract

FIXTURES = Path(__file__).parent / "fixtures"


class TestListingJsonAdapterContract(AdapterContract):
    @pytest.fixture
    def plugin_module(self) -> object:
        return listing_json

    @pytest.fixture
    def adapter_pin(self) -> str:
        return "pa_prw_listing_json@1.0.0"

    @pytest.fixture
    def cases(self) -> Sequence[AdapterCase]:
        return [
            AdapterCase.from_file(
                FIXTURES / "listing_870_evo.json",
                media_type="application/json",
                url="https://shop.example/p/870-evo-1tb",
                expected_claims=(
                    Claim("core:gtin", "8806090545917", "/gtin"),
                    Claim("core:price", "89.90", "/price"),
                    Claim("spec:read/write cache", "1 GB", "/specs/read~1write cache"),
                    ("core:brand", "Samsung"),
                    ("spec:capacity", "1 TB"),
                ),
                expected_listing={"price": Decimal("89.90"), "currency": "EUR", "availability": "in_stock"},
            ),
            AdapterCase.from_file(
                FIXTURES / "listing_minimal_text_price.json",
                media_type="application/vnd.prw.listing+json; charset=utf-8",
                expected_claims=(Claim("core:price", "1.234,56 €", "/price"), ("core:mpn", "WD40EFPX")),
                expected_listing={"price": None, "availability": "out_of_stock", "title": None},
            ),
        ]

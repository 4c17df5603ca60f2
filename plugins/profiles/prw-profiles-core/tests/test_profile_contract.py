"""The three profiles of this distribution keep the platform's ProfileContract."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest
from prw_profiles_core import plugin

from prw_platform.plugins import AttributeValue, Claim
from prw_platform.plugins.testing import ProfileCase, ProfileContract

SSD_CLAIMS = (
    Claim("core:title", 'Samsung 870 EVO 1TB 2.5" SATA III Internal SSD', "/title"),
    Claim("core:brand", "Samsung", "/brand"),
    Claim("core:mpn", "MZ-77E1T0B/EU", "/mpn"),
    Claim("core:gtin", "8806090545917", "/gtin"),
    Claim("core:price", "89,90 €", "/price"),
    Claim("core:availability", "https://schema.org/InStock", "/availability"),
    Claim("spec:Sequential Read", "560 MB/s", "/specs/sequential read"),
    Claim("spec:Sequential Write", "530 MB/s", "/specs/sequential write"),
)
CORE_EXPECTED: dict[str, AttributeValue] = {
    "core:gtin": "08806090545917",
    "core:mpn": "MZ-77E1T0B/EU",
    "core:price": Decimal("89.90"),
    "core:currency": "EUR",
    "core:availability": "in_stock",
}
CONFLICT = ProfileCase(
    "conflicting_gtins",
    (Claim("core:gtin", "4006381333931", "/a"), Claim("core:gtin", "036000291452", "/b")),
    expected_attributes={"core:gtin": "04006381333931"},
    expected_problems=(("core:gtin", "CONFLICTING_CLAIMS"),),
)
BAD_CHECK_DIGIT = ProfileCase(
    "bad_check_digit",
    (Claim("core:gtin", "4006381333932", "/gtin"), Claim("core:price", "$10 - $20", "/price")),
    expected_problems=(("core:gtin", "GTIN_INVALID_CHECK_DIGIT"), ("core:price", "PRICE_RANGE")),
    absent_attributes=("core:gtin", "core:price"),
)


class TestCoreProfileContract(ProfileContract):
    @pytest.fixture
    def plugin_module(self) -> object:
        return plugin

    @pytest.fixture
    def profile_pin(self) -> str:
        return "np_core@1"

    @pytest.fixture
    def cases(self) -> Sequence[ProfileCase]:
        return [
            ProfileCase("ssd_listing", SSD_CLAIMS, CORE_EXPECTED, absent_attributes=("storage:capacity",)),
            CONFLICT,
            BAD_CHECK_DIGIT,
        ]


class TestStorageProfileV1Contract(ProfileContract):
    @pytest.fixture
    def plugin_module(self) -> object:
        return plugin

    @pytest.fixture
    def profile_pin(self) -> str:
        return "np_storage@1"

    @pytest.fixture
    def cases(self) -> Sequence[ProfileCase]:
        storage: dict[str, AttributeValue] = {
            "storage:capacity": Decimal(1000),
            "storage:interface": "sata",
            "storage:form_factor": "2.5in",
            "storage:read_speed": Decimal(560),
        }
        return [
            ProfileCase(
                "ssd_listing", SSD_CLAIMS, CORE_EXPECTED | storage, absent_attributes=("storage:write_speed",)
            ),
            CONFLICT,
            BAD_CHECK_DIGIT,
        ]


class TestStorageProfileV2Contract(ProfileContract):
    @pytest.fixture
    def plugin_module(self) -> object:
        return plugin

    @pytest.fixture
    def profile_pin(self) -> str:
        return "np_storage@2"

    @pytest.fixture
    def cases(self) -> Sequence[ProfileCase]:
        storage: dict[str, AttributeValue] = {
            "storage:capacity": Decimal(1000),
            "storage:write_speed": Decimal(530),
        }
        return [ProfileCase("ssd_listing", SSD_CLAIMS, CORE_EXPECTED | storage), CONFLICT, BAD_CHECK_DIGIT]


# np_core@2 and np_storage@3 weigh claims by confidence and withhold an offer value under 0.75.
DISPUTED_PRICE = ProfileCase(
    "disputed_price",
    (
        Claim("core:price", "20.00", "jsonld[0].offers.price", "structured", 0.85),
        Claim("core:price", "€25.00", "css:span.price", "buy_box", 0.8),
        Claim("core:currency", "EUR", "jsonld[0].offers.priceCurrency", "structured", 0.95),
    ),
    expected_attributes={"core:currency": "EUR"},
    expected_problems=(("core:price", "CONFLICTING_CLAIMS"), ("core:price", "UNCERTAIN_VALUE")),
    absent_attributes=("core:price",),
)


class TestCoreProfileV2Contract(TestCoreProfileContract):
    @pytest.fixture
    def profile_pin(self) -> str:
        return "np_core@2"

    @pytest.fixture
    def cases(self) -> Sequence[ProfileCase]:
        return [
            ProfileCase("ssd_listing", SSD_CLAIMS, CORE_EXPECTED, absent_attributes=("storage:capacity",)),
            CONFLICT,
            BAD_CHECK_DIGIT,
            DISPUTED_PRICE,
        ]


class TestStorageProfileV3Contract(TestStorageProfileV2Contract):
    @pytest.fixture
    def profile_pin(self) -> str:
        return "np_storage@3"

    @pytest.fixture
    def cases(self) -> Sequence[ProfileCase]:
        storage: dict[str, AttributeValue] = {
            "storage:capacity": Decimal(1000),
            "storage:write_speed": Decimal(530),
        }
        return [
            ProfileCase("ssd_listing", SSD_CLAIMS, CORE_EXPECTED | storage),
            CONFLICT,
            BAD_CHECK_DIGIT,
            DISPUTED_PRICE,
        ]

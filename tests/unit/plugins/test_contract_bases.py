"""The contract bases catch what they promise to catch: each check fails on a plugin that breaks it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import pytest

from prw_platform.plugins import (
    Artifact,
    CaptureView,
    Claim,
    Extraction,
    ListingFields,
    Normalization,
    NormalizedAttribute,
)
from prw_platform.plugins.testing import (
    AdapterCase,
    AdapterContract,
    ProfileCase,
    ProfileContract,
    registry_with,
)
from tests.unit.plugins.fakes import FakeAdapter, FakePlugin, FakeProfile

CASE = AdapterCase.from_bytes(
    "page", b"Samsung 870 EVO", media_type="text/html", expected_claims=(("core:title", "Samsung 870 EVO"),)
)
PROFILE_CASE = ProfileCase("title", (Claim("core:title", "Samsung", "/t"),), {"core:title": "Samsung"})


@dataclass
class _NoLocator(FakeAdapter):
    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        return Extraction(self.name + "@" + self.version, (Claim("core:title", "x", " "),), ListingFields())


@dataclass
class _FloatPrice(FakeAdapter):
    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        return Extraction(f"{self.name}@{self.version}", (), ListingFields(price=9.99))  # type: ignore[arg-type]


@dataclass
class _Counter(FakeAdapter):
    runs: int = 0

    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        self.runs += 1
        return Extraction(
            f"{self.name}@{self.version}", (Claim("core:title", str(self.runs), "/n"),), ListingFields()
        )


@dataclass
class _RaisesOnJunk(FakeAdapter):
    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        return Extraction(
            f"{self.name}@{self.version}",
            (Claim("core:title", artifacts[0].data.decode(), "/"),),
            ListingFields(),
        )


def test_the_well_behaved_fake_passes_the_adapter_contract() -> None:
    contract, adapter = AdapterContract(), FakeAdapter("pa_fake", "1.0.0")
    contract.test_expected_claims_are_present(adapter, [CASE])
    contract.test_every_claim_is_namespaced_typed_and_locatable(adapter, [CASE])
    contract.test_supports_never_raises_on_junk(adapter)


def test_a_blank_evidence_locator_fails_the_contract() -> None:
    with pytest.raises(AssertionError, match="has no evidence locator"):
        AdapterContract().test_every_claim_is_namespaced_typed_and_locatable(
            _NoLocator("pa_fake", "1.0.0"), [CASE]
        )


def test_a_float_listing_price_fails_the_contract() -> None:
    with pytest.raises(AssertionError, match="price"):
        AdapterContract().test_listing_fields_are_typed(_FloatPrice("pa_fake", "1.0.0"), [CASE])


def test_a_non_deterministic_extract_fails_the_contract() -> None:
    adapter = _Counter("pa_counter", "1.0.0")
    plugin = FakePlugin([adapter])
    with pytest.raises(AssertionError, match="second run differs"):
        AdapterContract().test_extract_is_deterministic(adapter, plugin, "pa_counter@1.0.0", [CASE])


def test_an_exception_other_than_extraction_error_on_junk_fails_the_contract() -> None:
    with pytest.raises(IndexError):
        AdapterContract().test_extract_on_junk_returns_or_raises_extraction_error(
            _RaisesOnJunk("pa_j", "1.0.0"), [CASE]
        )


def test_a_missing_expected_claim_fails_the_contract() -> None:
    case = AdapterCase.from_bytes("page", b"x", media_type="text/html", expected_claims=(("core:gtin", "1"),))
    with pytest.raises(AssertionError, match="missing"):
        AdapterContract().test_expected_claims_are_present(FakeAdapter("pa_fake", "1.0.0"), [case])


def test_an_unregistered_pin_fails_the_contract() -> None:
    registry = registry_with(FakePlugin([FakeAdapter("pa_fake", "1.0.0")]))
    with pytest.raises(AssertionError):
        AdapterContract().test_adapter_is_registered_through_pluggy_under_its_pin(
            registry, FakeAdapter("pa_fake", "1.0.0"), "pa_fake@2.0.0"
        )


def test_a_plugin_without_the_api_declaration_fails_the_contract() -> None:
    with pytest.raises(AssertionError):
        AdapterContract().test_plugin_declares_the_platform_plugin_api(object())


@dataclass
class _WrongUnit(FakeProfile):
    def normalize(self, claims: Sequence[Claim]) -> Normalization:
        return Normalization(self.pin, (NormalizedAttribute("core:title", Decimal(1), 1, "TB", ("/t",)),))

    @property
    def pin(self) -> str:
        return f"{self.name}@{self.version}"


@dataclass
class _NoEvidence(FakeProfile):
    def normalize(self, claims: Sequence[Claim]) -> Normalization:
        return Normalization(f"{self.name}@{self.version}", (NormalizedAttribute("core:title", "x", 1),))


@dataclass
class _RaisesOnNan(FakeProfile):
    def normalize(self, claims: Sequence[Claim]) -> Normalization:
        for claim in claims:
            Decimal(str(claim.value)).quantize(Decimal(1))
        return Normalization(f"{self.name}@{self.version}", ())


def test_the_well_behaved_fake_passes_the_profile_contract() -> None:
    contract, profile = ProfileContract(), FakeProfile("np_fake", "1")
    contract.test_expected_attributes_are_present(profile, [PROFILE_CASE])
    contract.test_every_attribute_conforms_to_its_definition(profile, [PROFILE_CASE])
    contract.test_normalize_never_raises_on_junk_claims(profile)
    contract.test_definitions_are_well_formed(profile)


def test_a_value_that_breaks_its_definition_fails_the_contract() -> None:
    with pytest.raises(AssertionError, match="INV-02"):
        ProfileContract().test_every_attribute_conforms_to_its_definition(
            _WrongUnit("np_fake", "1"), [PROFILE_CASE]
        )


def test_an_attribute_without_evidence_fails_the_contract() -> None:
    with pytest.raises(AssertionError, match="no evidence locators"):
        ProfileContract().test_every_attribute_conforms_to_its_definition(
            _NoEvidence("np_fake", "1"), [PROFILE_CASE]
        )


def test_a_profile_that_raises_on_junk_claims_fails_the_contract() -> None:
    with pytest.raises(ArithmeticError):
        ProfileContract().test_normalize_never_raises_on_junk_claims(_RaisesOnNan("np_fake", "1"))


def test_identity_keys_outside_the_definitions_fail_the_contract() -> None:
    profile = FakeProfile("np_fake", "1", identity_keys=(("core:gtin",),))
    with pytest.raises(AssertionError, match="not defined by the profile"):
        ProfileContract().test_identity_keys_name_defined_attributes(profile)


def test_an_expected_problem_that_is_not_reported_fails_the_contract() -> None:
    case = ProfileCase(
        "c", (Claim("core:title", "x", "/t"),), expected_problems=(("core:title", "EMPTY_VALUE"),)
    )
    with pytest.raises(AssertionError, match="not reported"):
        ProfileContract().test_expected_problems_are_reported(FakeProfile("np_fake", "1"), [case])

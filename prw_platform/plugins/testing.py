"""Contract tests shipped to plugin authors (STYLE.md: Plugins; eventsourcing's recorder test cases).

Subclass ``AdapterContract`` or ``ProfileContract`` in a test module of your plugin's distribution, name the
subclass ``Test...`` so pytest collects it, and override the three fixtures the base cannot know::

    from prw_platform.plugins.testing import AdapterCase, AdapterContract

    class TestMyAdapterContract(AdapterContract):
        @pytest.fixture
        def plugin_module(self) -> object:
            return my_distribution.plugin            # the module your `prw` entry point names

        @pytest.fixture
        def adapter_pin(self) -> str:
            return "pa_my_shop@1.0.0"

        @pytest.fixture
        def cases(self) -> Sequence[AdapterCase]:
            return [AdapterCase.from_file(FIXTURES / "page.html", media_type="text/html", expected_claims=(...))]

Every ``test_*`` method of the base then runs against your plugin, registered through pluggy exactly as the
platform registers it. This module imports only pytest and the plugin API.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import get_args

import pytest

from prw_platform.plugins.cases import AdapterCase, ProfileCase
from prw_platform.plugins.confidence import confidence_problem
from prw_platform.plugins.conformance import conformance_problem
from prw_platform.plugins.manager import get_plugin_manager, register_plugin
from prw_platform.plugins.pins import is_adapter_pin, is_profile_pin
from prw_platform.plugins.registry import PluginRegistry
from prw_platform.plugins.types import (
    PLUGIN_API_VERSION,
    Artifact,
    Availability,
    CaptureView,
    Claim,
    ClaimValue,
    Extraction,
    ExtractionError,
    Normalization,
    NormalizationProfile,
    SourceAdapter,
)

__all__ = [
    "AdapterCase",
    "AdapterContract",
    "ProfileCase",
    "ProfileContract",
    "claim_matches",
    "registry_with",
]

_AVAILABILITY_VALUES = frozenset(get_args(Availability))
_CLAIM_VALUE_TYPES = (str, int, float, bool)


def registry_with(plugin_module: object) -> PluginRegistry:
    """A registry of the built-ins plus this plugin, registered as the platform does (API check included)."""
    pm = get_plugin_manager(load_entrypoints=False)
    register_plugin(pm, plugin_module)
    return PluginRegistry.from_manager(pm)


def _junk_captures() -> list[CaptureView]:
    media_types = [
        "",
        "application/octet-stream",
        "APPLICATION/JSON; charset=UTF-8",
        "text/html;",
        "image/png",
    ]
    urls: list[str | None] = [None, "", "not a url", "http://[::1", "https://例え.jp/ü?q=%zz", "x" * 10_000]
    return [
        CaptureView(capture_id="cap_junk", source_id=source, media_type=media_type, url=url)
        for media_type in media_types
        for url in urls
        for source in ("", "src_junk")
    ]


_JUNK_BYTES = (b"", b"\x00\xff\xfe\xfd", b"{", b"null", b"[]", b'{"title": 5}', b"<html><body></body></html>")


class AdapterContract:
    """The contract every source adapter keeps. Override ``plugin_module``, ``adapter_pin`` and ``cases``."""

    @pytest.fixture
    def plugin_module(self) -> object:
        pytest.fail(
            f"{type(self).__name__} must override the plugin_module fixture (the entry point's module)"
        )

    @pytest.fixture
    def adapter_pin(self) -> str:
        pytest.fail(f"{type(self).__name__} must override the adapter_pin fixture (name@MAJOR.MINOR.PATCH)")

    @pytest.fixture
    def cases(self) -> Sequence[AdapterCase]:
        pytest.fail(f"{type(self).__name__} must override the cases fixture (recorded captures)")

    @pytest.fixture
    def registry(self, plugin_module: object) -> PluginRegistry:
        return registry_with(plugin_module)

    @pytest.fixture
    def adapter(self, registry: PluginRegistry, adapter_pin: str) -> SourceAdapter:
        return registry.adapter(adapter_pin)

    def test_plugin_declares_the_platform_plugin_api(self, plugin_module: object) -> None:
        assert getattr(plugin_module, "PRW_PLUGIN_API", None) == PLUGIN_API_VERSION

    def test_pin_is_well_formed(self, adapter_pin: str) -> None:
        assert is_adapter_pin(adapter_pin), f"{adapter_pin!r} is not pa_<name>@MAJOR.MINOR.PATCH"

    def test_adapter_is_registered_through_pluggy_under_its_pin(
        self, registry: PluginRegistry, adapter: SourceAdapter, adapter_pin: str
    ) -> None:
        assert f"{adapter.name}@{adapter.version}" == adapter_pin
        assert adapter_pin in registry.adapter_pins

    def test_has_recorded_cases(self, cases: Sequence[AdapterCase]) -> None:
        assert cases, "record at least one capture with expected claims"
        assert len({case.case_id for case in cases}) == len(cases), "case ids must be unique"

    def test_supports_every_recorded_case(self, adapter: SourceAdapter, cases: Sequence[AdapterCase]) -> None:
        unsupported = [case.case_id for case in cases if adapter.supports(case.capture) is not True]
        assert not unsupported, f"supports() is not True for {unsupported}"

    def test_supports_never_raises_on_junk(self, adapter: SourceAdapter) -> None:
        for capture in _junk_captures():
            assert isinstance(adapter.supports(capture), bool), f"supports() must return a bool for {capture}"

    def test_extract_on_junk_returns_or_raises_extraction_error(
        self, adapter: SourceAdapter, cases: Sequence[AdapterCase]
    ) -> None:
        for case in cases:
            variants: list[tuple[Artifact, ...]] = [()]
            for junk in _JUNK_BYTES:
                digest = hashlib.sha256(junk).hexdigest()
                variants.append((Artifact(f"art_junk_{digest[:8]}", digest, case.capture.media_type, junk),))
            for artifacts in variants:
                try:
                    result = adapter.extract(case.capture, artifacts)
                except ExtractionError:
                    continue
                assert isinstance(result, Extraction), f"{case.case_id}: extract() returned {result!r}"

    def test_extract_is_deterministic(
        self, adapter: SourceAdapter, plugin_module: object, adapter_pin: str, cases: Sequence[AdapterCase]
    ) -> None:
        fresh = registry_with(plugin_module).adapter(adapter_pin)
        for case in cases:
            first = adapter.extract(case.capture, case.artifacts)
            assert adapter.extract(case.capture, case.artifacts) == first, (
                f"{case.case_id}: second run differs"
            )
            assert fresh.extract(case.capture, case.artifacts) == first, (
                f"{case.case_id}: fresh instance differs"
            )

    def test_extraction_names_the_adapter_pin(
        self, adapter: SourceAdapter, adapter_pin: str, cases: Sequence[AdapterCase]
    ) -> None:
        for case in cases:
            assert adapter.extract(case.capture, case.artifacts).adapter == adapter_pin

    def test_expected_claims_are_present(self, adapter: SourceAdapter, cases: Sequence[AdapterCase]) -> None:
        for case in cases:
            claims = adapter.extract(case.capture, case.artifacts).claims
            read = {(c.attribute, c.value) for c in claims}
            missing = [
                expected
                for expected in case.expected_claims
                if (
                    not any(claim_matches(expected, claim) for claim in claims)
                    if isinstance(expected, Claim)
                    else expected not in read
                )
            ]
            assert not missing, f"{case.case_id}: missing {missing}; read {sorted(read, key=repr)}"

    def test_every_claim_rating_is_valid(self, adapter: SourceAdapter, cases: Sequence[AdapterCase]) -> None:
        """A confidence is a number in [0, 1] with an evidence source and a locator; a source is a known one."""
        for case in cases:
            for claim in adapter.extract(case.capture, case.artifacts).claims:
                problem = confidence_problem(claim)
                assert problem is None, f"{case.case_id}: {problem}"

    def test_expected_listing_fields(self, adapter: SourceAdapter, cases: Sequence[AdapterCase]) -> None:
        for case in cases:
            listing = adapter.extract(case.capture, case.artifacts).listing
            for name, expected in case.expected_listing.items():
                assert getattr(listing, name) == expected, f"{case.case_id}: listing.{name}"

    def test_every_claim_is_namespaced_typed_and_locatable(
        self, adapter: SourceAdapter, cases: Sequence[AdapterCase]
    ) -> None:
        for case in cases:
            for claim in adapter.extract(case.capture, case.artifacts).claims:
                namespace, _, key = claim.attribute.partition(":")
                assert namespace, f"{case.case_id}: {claim.attribute!r} is not namespace:key"
                assert key.strip(), f"{case.case_id}: {claim.attribute!r} is not namespace:key"
                assert isinstance(claim.value, _CLAIM_VALUE_TYPES), f"{case.case_id}: {claim!r}"
                assert not (isinstance(claim.value, float) and not math.isfinite(claim.value)), repr(claim)
                assert isinstance(claim.evidence_locator, str), repr(claim)
                assert claim.evidence_locator.strip(), (
                    f"{case.case_id}: {claim.attribute} has no evidence locator"
                )

    def test_listing_fields_are_typed(self, adapter: SourceAdapter, cases: Sequence[AdapterCase]) -> None:
        for case in cases:
            listing = adapter.extract(case.capture, case.artifacts).listing
            assert listing.price is None or isinstance(listing.price, Decimal), f"{case.case_id}: price"
            assert listing.price is None or listing.price.is_finite(), f"{case.case_id}: price"
            assert listing.availability is None or listing.availability in _AVAILABILITY_VALUES
            for name in ("title", "url", "currency"):
                value = getattr(listing, name)
                assert value is None or (isinstance(value, str) and value.strip()), f"{case.case_id}: {name}"

    def test_diagnostics_are_text(self, adapter: SourceAdapter, cases: Sequence[AdapterCase]) -> None:
        for case in cases:
            diagnostics = adapter.extract(case.capture, case.artifacts).diagnostics
            assert all(isinstance(d, str) and d for d in diagnostics), f"{case.case_id}: {diagnostics!r}"


def claim_matches(expected: Claim, claim: Claim) -> bool:
    """An expected ``Claim`` matches a read one with the same attribute, value and locator, and the same source
    and confidence where the expected claim states them (a case recorded before ratings existed still holds)."""
    return (
        (expected.attribute, expected.value, expected.evidence_locator)
        == (claim.attribute, claim.value, claim.evidence_locator)
        and (expected.source is None or expected.source == claim.source)
        and (
            expected.confidence is None
            or (claim.confidence is not None and math.isclose(expected.confidence, claim.confidence))
        )
    )


def _junk_claims() -> list[Claim]:
    attributes = [
        "core:gtin",
        "core:price",
        "core:currency",
        "core:availability",
        "core:title",
        "spec:capacity",
    ]
    values: list[ClaimValue] = [
        "",
        "   ",
        "\x00",
        "-1",
        "1e309",
        "¥",
        "x" * 5_000,
        True,
        -1,
        0,
        math.nan,
        1.5,
    ]
    unrated = [Claim(attribute, value, "/junk") for attribute in attributes for value in values]
    # Rated claims at the edges of [0, 1], and two sources disagreeing at full confidence.
    rated = [
        Claim(attribute, value, "/rated", "structured", confidence)
        for attribute in attributes
        for value in ("1", "2")
        for confidence in (0.0, 1.0)
    ]
    return unrated + rated


class ProfileContract:
    """The contract every normalization profile keeps. Override ``plugin_module``, ``profile_pin``, ``cases``."""

    @pytest.fixture
    def plugin_module(self) -> object:
        pytest.fail(
            f"{type(self).__name__} must override the plugin_module fixture (the entry point's module)"
        )

    @pytest.fixture
    def profile_pin(self) -> str:
        pytest.fail(f"{type(self).__name__} must override the profile_pin fixture (np_<name>@N)")

    @pytest.fixture
    def cases(self) -> Sequence[ProfileCase]:
        pytest.fail(
            f"{type(self).__name__} must override the cases fixture (claims with expected attributes)"
        )

    @pytest.fixture
    def registry(self, plugin_module: object) -> PluginRegistry:
        return registry_with(plugin_module)

    @pytest.fixture
    def profile(self, registry: PluginRegistry, profile_pin: str) -> NormalizationProfile:
        return registry.profile(profile_pin)

    def test_plugin_declares_the_platform_plugin_api(self, plugin_module: object) -> None:
        assert getattr(plugin_module, "PRW_PLUGIN_API", None) == PLUGIN_API_VERSION

    def test_pin_is_well_formed(self, profile_pin: str) -> None:
        assert is_profile_pin(profile_pin), f"{profile_pin!r} is not np_<name>@N"

    def test_profile_is_registered_through_pluggy_under_its_pin(
        self, registry: PluginRegistry, profile: NormalizationProfile, profile_pin: str
    ) -> None:
        assert f"{profile.name}@{profile.version}" == profile_pin
        assert profile_pin in registry.profile_pins

    def test_definitions_are_well_formed(self, profile: NormalizationProfile) -> None:
        assert profile.definitions, "a profile defines at least one attribute"
        for key, definition in profile.definitions.items():
            assert definition.key == key, f"definitions[{key!r}] is the definition of {definition.key!r}"
            namespace, _, name = key.partition(":")
            assert namespace, f"{key!r} is not namespace:name"
            assert name, f"{key!r} is not namespace:name"
            assert definition.version >= 1, key
            assert definition.description.strip(), f"{key} needs a description"
            if definition.value_type == "enum":
                assert definition.allowed_values, f"{key} is an enum without allowed values"
            if definition.value_type == "quantity":
                assert definition.unit, f"{key} is a quantity without a canonical unit"

    def test_identity_keys_name_defined_attributes(self, profile: NormalizationProfile) -> None:
        assert profile.identity_keys, "a profile names at least one identity key set"
        for key_set in profile.identity_keys:
            assert key_set, "an identity key set is never empty"
            undefined = [key for key in key_set if key not in profile.definitions]
            assert not undefined, f"identity keys {undefined} are not defined by the profile"

    def test_has_recorded_cases(self, cases: Sequence[ProfileCase]) -> None:
        assert cases, "record at least one set of claims with expected attributes"
        assert len({case.case_id for case in cases}) == len(cases), "case ids must be unique"

    def test_normalize_is_deterministic(
        self, profile: NormalizationProfile, cases: Sequence[ProfileCase]
    ) -> None:
        for case in cases:
            first = profile.normalize(case.claims)
            assert profile.normalize(case.claims) == first, f"{case.case_id}: second run differs"

    def test_normalization_names_the_profile_pin(
        self, profile: NormalizationProfile, profile_pin: str, cases: Sequence[ProfileCase]
    ) -> None:
        for case in cases:
            assert profile.normalize(case.claims).profile == profile_pin

    def test_expected_attributes_are_present(
        self, profile: NormalizationProfile, cases: Sequence[ProfileCase]
    ) -> None:
        for case in cases:
            result = profile.normalize(case.claims)
            for key, expected in case.expected_attributes.items():
                got = result.get(key)
                assert got is not None, f"{case.case_id}: {key} missing; problems: {result.problems}"
                assert got.value == expected, f"{case.case_id}: {key} is {got.value!r}, expected {expected!r}"
            present = [key for key in case.absent_attributes if result.get(key) is not None]
            assert not present, f"{case.case_id}: {present} should not be normalized"

    def test_expected_problems_are_reported(
        self, profile: NormalizationProfile, cases: Sequence[ProfileCase]
    ) -> None:
        for case in cases:
            reported = {(p.attribute, p.code) for p in profile.normalize(case.claims).problems}
            missing = [p for p in case.expected_problems if p not in reported]
            assert not missing, (
                f"{case.case_id}: problems {missing} not reported; reported {sorted(reported)}"
            )

    def test_every_attribute_conforms_to_its_definition(
        self, profile: NormalizationProfile, cases: Sequence[ProfileCase]
    ) -> None:
        for case in cases:
            _assert_conforms(profile, profile.normalize(case.claims), case.case_id)

    def test_normalize_never_raises_on_junk_claims(self, profile: NormalizationProfile) -> None:
        for claim in _junk_claims():
            result = profile.normalize([claim])
            assert isinstance(result, Normalization), repr(claim)
            _assert_conforms(profile, result, f"junk {claim!r}"[:200])
        assert isinstance(profile.normalize([]), Normalization)
        assert isinstance(profile.normalize(_junk_claims()), Normalization)


def _assert_conforms(profile: NormalizationProfile, result: Normalization, label: str) -> None:
    keys = [attribute.key for attribute in (*result.attributes, *result.withheld)]
    assert len(keys) == len(set(keys)), (
        f"{label}: an attribute appears twice (published or withheld) in {keys}"
    )
    for attribute in (*result.attributes, *result.withheld):
        confidence = attribute.confidence
        assert confidence is None or (
            isinstance(confidence, int | float) and math.isfinite(confidence) and 0 <= confidence <= 1
        ), f"{label}: {attribute.key} has confidence {confidence!r}, outside [0, 1]"
        definition = profile.definitions.get(attribute.key)
        assert definition is not None, f"{label}: {attribute.key} has no definition in the profile"
        problem = conformance_problem(attribute, definition)
        assert problem is None, f"{label}: INV-02: {problem}"
        assert attribute.evidence_locators, f"{label}: {attribute.key} has no evidence locators"
        assert all(locator.strip() for locator in attribute.evidence_locators), f"{label}: {attribute.key}"
    for problem_found in result.problems:
        assert problem_found.code.strip(), f"{label}: {problem_found!r} has no code"
        assert problem_found.message.strip(), f"{label}: {problem_found!r} has no message"

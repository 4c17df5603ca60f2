"""np_storage@1/@2: unit-normalized storage attributes from spec claims, else from the title."""

from __future__ import annotations

from decimal import Decimal

import pytest
from prw_profiles_core import plugin
from prw_profiles_core.problems import CONFLICTING_CLAIMS, ENUM_UNKNOWN, QUANTITY_UNPARSEABLE
from prw_profiles_core.units import read_capacity

from prw_platform.plugins import Claim, ClaimValue, Normalization, NormalizationProfile

TITLE = 'Samsung 870 EVO 1TB 2.5" SATA SSD'


def _profiles() -> dict[str, NormalizationProfile]:
    return {f"{p.name}@{p.version}": p for p in plugin.prw_register_profiles()}


def _normalize(pin: str, *claims: tuple[str, ClaimValue]) -> Normalization:
    return _profiles()[pin].normalize([Claim(a, v, f"/{i}") for i, (a, v) in enumerate(claims)])


def _value(result: Normalization, key: str) -> object:
    attribute = result.get(key)
    return None if attribute is None else attribute.value


@pytest.mark.parametrize("text", ["1TB", "1000 GB", "1,000GB", "1 000 GB", "1.0 TB", "1000GB", "1 tb"])
def test_decimal_capacities_are_equal_in_gb(text: str) -> None:
    quantity = read_capacity(text)
    assert quantity is not None
    assert quantity.value == Decimal(1000)


def test_binary_units_convert_exactly() -> None:
    tebibyte = read_capacity("1 TiB")
    gibibytes = read_capacity("512 GiB")
    assert tebibyte is not None
    assert gibibytes is not None
    assert tebibyte.value == Decimal("1099.511627776")  # 1.0995 TB: 2^40 bytes / 10^9
    assert round(tebibyte.value / 1000, 4) == Decimal("1.0995")
    assert gibibytes.value == Decimal("549.755813888")


@pytest.mark.parametrize(
    ("text", "gb"), [("1,5 TB", Decimal(1500)), ("2.5TB", Decimal(2500)), ("500 MB", "0.5")]
)
def test_decimal_commas_and_small_units(text: str, gb: Decimal | str) -> None:
    quantity = read_capacity(text)
    assert quantity is not None
    assert quantity.value == Decimal(gb)


@pytest.mark.parametrize(
    "spec_name",
    ["spec:capacity", "spec:Storage Capacity", "spec:Hard Drive Capacity", "spec:hard_drive-capacity:"],
)
def test_capacity_spec_names_are_recognized(spec_name: str) -> None:
    result = _normalize("np_storage@1", (spec_name, "2 TB"))
    capacity = result.get("storage:capacity")
    assert capacity is not None
    assert (capacity.value, capacity.unit, capacity.evidence_locators) == (Decimal(2000), "GB", ("/0",))


def test_a_unit_in_the_spec_name_applies_to_a_bare_number() -> None:
    assert _value(_normalize("np_storage@1", ("spec:Capacity (GB)", 500)), "storage:capacity") == Decimal(500)


def test_without_spec_claims_the_title_is_read_and_the_locator_says_so() -> None:
    result = _normalize("np_storage@1", ("core:title", TITLE))
    assert {a.key: a.value for a in result.attributes if a.key.startswith("storage:")} == {
        "storage:capacity": Decimal(1000),
        "storage:interface": "sata",
        "storage:form_factor": "2.5in",
    }
    capacity = result.get("storage:capacity")
    assert capacity is not None
    assert capacity.evidence_locators == ("/0#char=16,19",)
    assert TITLE[16:19] == "1TB"


def test_a_spec_claim_wins_over_the_title() -> None:
    result = _normalize("np_storage@1", ("core:title", TITLE), ("spec:capacity", "2TB"))
    capacity = result.get("storage:capacity")
    assert capacity is not None
    assert (capacity.value, capacity.evidence_locators) == (Decimal(2000), ("/1",))


def test_an_unreadable_spec_is_a_problem_and_the_title_is_not_used_instead() -> None:
    result = _normalize("np_storage@1", ("core:title", TITLE), ("spec:capacity", "large"))
    assert _value(result, "storage:capacity") is None
    assert ("storage:capacity", QUANTITY_UNPARSEABLE) in {(p.attribute, p.code) for p in result.problems}


def test_title_capacity_ignores_cache_sizes_and_takes_the_largest() -> None:
    result = _normalize("np_storage@1", ("core:title", "WD Red Plus 4TB NAS HDD 5400 RPM 256MB Cache 3.5in"))
    assert _value(result, "storage:capacity") == Decimal(4000)
    assert _value(result, "storage:form_factor") == "3.5in"


def test_conflicting_capacity_specs_are_reported() -> None:
    result = _normalize("np_storage@1", ("spec:capacity", "1TB"), ("spec:storage capacity", "2TB"))
    assert _value(result, "storage:capacity") == Decimal(1000)
    assert [p.code for p in result.problems] == [CONFLICTING_CLAIMS]


def test_equal_capacities_in_different_units_agree() -> None:
    result = _normalize("np_storage@1", ("spec:capacity", "1TB"), ("spec:storage capacity", "1,000 GB"))
    assert result.problems == ()


@pytest.mark.parametrize(
    ("text", "interface"),
    [
        ("SATA III 6Gb/s", "sata"),
        ("PCIe Gen 4.0 x4, NVMe 2.0", "nvme"),
        ("USB 3.2 Gen 2", "usb"),
        ("SAS 12Gb/s", "sas"),
        ("Thunderbolt 3", "thunderbolt"),
        ("PCI Express 3.0", "pcie"),
    ],
)
def test_interface_words_map_to_the_enum(text: str, interface: str) -> None:
    assert _value(_normalize("np_storage@1", ("spec:interface", text)), "storage:interface") == interface


@pytest.mark.parametrize(
    ("text", "form_factor"),
    [
        ("M.2 2280", "m.2_2280"),
        ("M.2-2230", "m.2_2230"),
        ('2.5"', "2.5in"),
        ("3.5 inch", "3.5in"),
        ("mSATA", "msata"),
        ("U.2", "u.2"),
        ("M.2", "m.2"),
    ],
)
def test_form_factor_words_map_to_the_enum(text: str, form_factor: str) -> None:
    assert (
        _value(_normalize("np_storage@1", ("spec:form factor", text)), "storage:form_factor") == form_factor
    )


def test_an_unknown_interface_is_a_problem() -> None:
    result = _normalize("np_storage@1", ("spec:interface", "carrier pigeon"))
    assert [(p.attribute, p.code) for p in result.problems] == [("storage:interface", ENUM_UNKNOWN)]


@pytest.mark.parametrize(("text", "mb_s"), [("560 MB/s", 560), ("Up to 7,450 MB/s", 7450), ("7 GB/s", 7000)])
def test_read_speed_is_in_mb_per_second(text: str, mb_s: int) -> None:
    speed = _normalize("np_storage@1", ("spec:Sequential Read", text)).get("storage:read_speed")
    assert speed is not None
    assert (speed.value, speed.unit) == (Decimal(mb_s), "MB/s")


def test_speeds_are_never_read_from_the_title() -> None:
    result = _normalize("np_storage@1", ("core:title", "990 PRO 2TB NVMe up to 7,450MB/s"))
    assert result.get("storage:read_speed") is None


def test_version_2_adds_write_speed_and_version_1_is_unchanged() -> None:
    claims = (("spec:sequential read", "560 MB/s"), ("spec:sequential write", "530 MB/s"))
    v1, v2 = _normalize("np_storage@1", *claims), _normalize("np_storage@2", *claims)
    assert _value(v1, "storage:write_speed") is None
    assert _value(v2, "storage:write_speed") == Decimal(530)
    assert [a for a in v2.attributes if a.key != "storage:write_speed"] == list(v1.attributes)
    assert "storage:write_speed" not in _profiles()["np_storage@1"].definitions
    assert set(_profiles()["np_storage@2"].definitions) - set(_profiles()["np_storage@1"].definitions) == {
        "storage:write_speed"
    }


def test_storage_profiles_include_every_core_definition() -> None:
    core = _profiles()["np_core@1"].definitions
    for pin in ("np_storage@1", "np_storage@2"):
        assert {k: v for k, v in _profiles()[pin].definitions.items() if k in core} == core
        assert _profiles()[pin].identity_keys == (("core:gtin",), ("core:brand", "core:mpn"))

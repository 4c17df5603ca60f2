"""GTIN check digits (GS1 mod 10) and the GTIN-14 canonical form of core:gtin."""

from __future__ import annotations

import pytest
from prw_profiles_core.gtin import check_digit, read_gtin
from prw_profiles_core.problems import GTIN_INVALID_CHECK_DIGIT, GTIN_INVALID_FORMAT
from prw_profiles_core.profiles import CoreProfile

from prw_platform.plugins import Claim

# Published examples: GS1's GTIN-8 example, the UPC-A and EAN-13 examples of their Wikipedia articles, the
# ISBN-13 of Wikipedia's ISBN article, and a GTIN-14 whose check digit was worked by hand
# (1,0,0,1,2,3,4,5,0,0,0,0,1 weighted 3,1,3,... from the right sums to 33, so the check digit is 7).
VALID = {
    "gtin8": ("96385074", "00000096385074"),
    "gtin12_upc_a": ("036000291452", "00036000291452"),
    "gtin13_ean": ("4006381333931", "04006381333931"),
    "gtin13_isbn": ("9780306406157", "09780306406157"),
    "gtin14": ("10012345000017", "10012345000017"),
}


@pytest.mark.parametrize(("text", "gtin14"), VALID.values(), ids=VALID.keys())
def test_valid_gtins_are_normalized_to_gtin14(text: str, gtin14: str) -> None:
    assert read_gtin(text).gtin14 == gtin14


@pytest.mark.parametrize(("text", "gtin14"), VALID.values(), ids=VALID.keys())
def test_a_wrong_last_digit_is_a_check_digit_error(text: str, gtin14: str) -> None:
    wrong = text[:-1] + str((int(text[-1]) + 1) % 10)
    reading = read_gtin(wrong)
    assert reading.gtin14 is None
    assert reading.is_check_digit_error
    assert f"expected {text[-1]}" in (reading.problem or "")


def test_check_digit_weights_count_from_the_right() -> None:
    assert check_digit("9638507") == 4
    assert check_digit("03600029145") == 2
    assert check_digit("00" + "03600029145") == 2  # leading zeros never change it


@pytest.mark.parametrize("text", ["4006-3813-33931", "4006381 333931", "4006.381.333.931"])
def test_separators_between_digits_are_allowed(text: str) -> None:
    assert read_gtin(text).gtin14 == "04006381333931"


@pytest.mark.parametrize("text", ["", "abc", "40063813339", "400638133393100", "4006381333931X", "０３６"])  # noqa: RUF001
def test_wrong_length_or_non_digits_is_a_format_problem(text: str) -> None:
    reading = read_gtin(text)
    assert reading.gtin14 is None
    assert not reading.is_check_digit_error


def test_all_zeros_is_a_placeholder_not_a_gtin() -> None:
    assert read_gtin("0000000000000").gtin14 is None


def test_a_json_number_that_lost_its_leading_zero_is_padded() -> None:
    assert read_gtin(36000291452).gtin14 == "00036000291452"


def test_an_invalid_check_digit_is_a_problem_not_a_value() -> None:
    result = CoreProfile().normalize([Claim("core:gtin", "4006381333932", "/gtin")])
    assert result.get("core:gtin") is None
    assert [(p.attribute, p.code, p.raw_value) for p in result.problems] == [
        ("core:gtin", GTIN_INVALID_CHECK_DIGIT, "4006381333932")
    ]


def test_a_float_gtin_is_a_type_problem() -> None:
    result = CoreProfile().normalize([Claim("core:gtin", 4006381333931.0, "/gtin")])
    assert result.get("core:gtin") is None
    assert result.problems[0].code == "WRONG_VALUE_TYPE"


def test_upc_a_and_ean13_of_the_same_product_are_one_gtin() -> None:
    result = CoreProfile().normalize(
        [Claim("core:gtin", "036000291452", "/a"), Claim("core:gtin", "0036000291452", "/b")]
    )
    attribute = result.get("core:gtin")
    assert attribute is not None
    assert attribute.value == "00036000291452"
    assert attribute.evidence_locators == ("/a", "/b")
    assert result.problems == ()


def test_format_problems_use_their_own_code() -> None:
    result = CoreProfile().normalize([Claim("core:gtin", "12345", "/gtin")])
    assert [p.code for p in result.problems] == [GTIN_INVALID_FORMAT]

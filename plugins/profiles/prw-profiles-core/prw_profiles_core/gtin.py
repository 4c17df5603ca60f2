"""GTIN-8, -12 (UPC-A), -13 (EAN-13, and ISBN-13 / ISMN, which are GTIN-13s) and -14.

Canonical form: GTIN-14, the left-zero-padded 14 digits GS1 recommends for storing any GTIN, so that the same
product read as UPC-A ``036000291452`` and as EAN-13 ``0036000291452`` is one identifier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GTIN_LENGTHS = (8, 12, 13, 14)
_SEPARATORS = re.compile(r"[\s\-.]")


@dataclass(frozen=True, slots=True)
class GtinReading:
    gtin14: str | None
    problem: str | None = None
    is_check_digit_error: bool = False


def check_digit(body: str) -> int:
    """The GS1 mod-10 check digit of the digits before it: weights 3, 1, 3, ... from the right."""
    total = sum(int(digit) * (3 if position % 2 == 0 else 1) for position, digit in enumerate(reversed(body)))
    return (10 - total % 10) % 10


def read_gtin(value: str | int) -> GtinReading:
    """Validate a GTIN and return it as GTIN-14. A text may contain ``-``, ``.`` and spaces between digits. An
    integer (a JSON number lost its leading zeros) is left-padded to 14 digits: leading zeros never change the
    check digit, whose weights count from the right."""
    text = str(value)
    digits = _SEPARATORS.sub("", text)
    if isinstance(value, int) and digits.isdigit() and len(digits) <= 14:
        digits = digits.zfill(14)
    if not digits.isascii() or not digits.isdigit():
        return GtinReading(None, f"{text!r} is not made of digits")
    if len(digits) not in GTIN_LENGTHS:
        return GtinReading(None, f"{text!r} has {len(digits)} digits; a GTIN has 8, 12, 13 or 14")
    if set(digits) == {"0"}:
        return GtinReading(None, f"{text!r} is all zeros, a placeholder rather than a GTIN")
    expected = check_digit(digits[:-1])
    if int(digits[-1]) != expected:
        return GtinReading(
            None,
            f"{text!r} fails the GTIN-{len(digits)} check digit (last digit {digits[-1]}, expected {expected})",
            is_check_digit_error=True,
        )
    return GtinReading(digits.zfill(14))

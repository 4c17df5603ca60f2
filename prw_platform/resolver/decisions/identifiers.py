"""Strong identifiers as keys: a GTIN, or brand + MPN, normalized so that spellings of one identifier are one key.

Pure: the identity table (``resolver.item_identifier``) is owned by ``identity``; commands and plans compute keys
here without touching it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GTIN = "gtin"
BRAND_MPN = "brand_mpn"

_GTIN_SEPARATORS = re.compile(r"[\s\-.]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class IdentifierKey:
    scheme: str
    value: str


def gtin_key(gtin: str) -> str:
    """The profile already normalizes GTINs to GTIN-14; padding again keeps a GTIN-13 and its GTIN-14 one key."""
    digits = _GTIN_SEPARATORS.sub("", gtin)
    return digits.zfill(14) if digits.isdigit() and len(digits) <= 14 else digits


def brand_mpn_key(brand: str, mpn: str) -> str:
    return f"{_SPACES.sub(' ', brand.strip()).casefold()}|{_SPACES.sub('', mpn).upper()}"


def identifier_keys(gtin: str | None, brand: str | None, mpn: str | None) -> tuple[IdentifierKey, ...]:
    keys: list[IdentifierKey] = []
    if gtin and gtin.strip():
        keys.append(IdentifierKey(GTIN, gtin_key(gtin)))
    if brand and brand.strip() and mpn and mpn.strip():
        keys.append(IdentifierKey(BRAND_MPN, brand_mpn_key(brand, mpn)))
    return tuple(keys)

"""Storage quantities and vocabularies read from spec values and titles.

Capacity is stored in decimal gigabytes (1 GB = 10^9 bytes), the unit drive makers print: ``1TB``, ``1000 GB``
and ``1,000GB`` are all 1000 GB. Binary units convert exactly: 1 GiB = 1.073741824 GB, 1 TiB = 1099.511627776 GB
(1.0995 TB). Speeds are stored in MB/s (decimal; 1 GB/s = 1000 MB/s).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

CAPACITY_UNIT = "GB"
SPEED_UNIT = "MB/s"

_GB_PER_UNIT = {
    "kb": Decimal("0.000001"),
    "mb": Decimal("0.001"),
    "gb": Decimal(1),
    "tb": Decimal(1000),
    "pb": Decimal(1000000),
    "kib": Decimal(1024) / Decimal(10**9),
    "mib": Decimal(1024**2) / Decimal(10**9),
    "gib": Decimal("1.073741824"),
    "tib": Decimal("1099.511627776"),
    "pib": Decimal(1024**5) / Decimal(10**9),
}
_MB_S_PER_UNIT = {"mb/s": Decimal(1), "mbps": Decimal(1), "mb/sec": Decimal(1), "gb/s": Decimal(1000)}
_MB_S_PER_UNIT |= {"gbps": Decimal(1000), "gb/sec": Decimal(1000)}

# A number: ``1,000`` and ``1 000`` (thousands), ``1.5`` and ``1,5`` (decimals). It starts where a number
# starts (never inside a run of digits), which also keeps matching linear on long digit runs.
_NUMBER = r"(?<![\d.,])(?P<number>\d{1,3}(?:[,\u00a0\u202f ]\d{3})+(?![\d,.])|\d+(?:[.,]\d+)?)"
_CAPACITY = re.compile(rf"{_NUMBER}\s*-?\s*(?P<unit>[KMGTP]i?B)(?![A-Za-z])", re.IGNORECASE)
_SPEED = re.compile(rf"{_NUMBER}\s*(?P<unit>[MG]B(?:/s(?:ec)?|ps))(?![A-Za-z])", re.IGNORECASE)
_TITLE_CAPACITY_UNITS = frozenset({"gb", "tb", "gib", "tib", "pb"})


@dataclass(frozen=True, slots=True)
class Quantity:
    """A quantity in the canonical unit, and where in the text it was read (``start``, ``end``)."""

    value: Decimal
    start: int
    end: int


def canonical_decimal(value: Decimal) -> Decimal:
    """``1000`` rather than ``1.000E+3``; trailing zeros of a fraction dropped."""
    normalized = value.normalize()
    return normalized.quantize(Decimal(1)) if normalized == normalized.to_integral_value() else normalized


def _number(text: str) -> Decimal | None:
    compact = re.sub(r"[\u00a0\u202f ]", "", text)
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", compact):
        compact = compact.replace(",", "")
    try:
        return Decimal(compact.replace(",", "."))
    except InvalidOperation:
        return None


def _quantities(pattern: re.Pattern[str], factors: dict[str, Decimal], text: str) -> list[Quantity]:
    found = []
    for match in pattern.finditer(text):
        number = _number(match.group("number"))
        factor = factors.get(match.group("unit").lower())
        if number is not None and factor is not None:
            found.append(Quantity(canonical_decimal(number * factor), match.start(), match.end()))
    return found


def read_capacity(text: str, *, from_title: bool = False) -> Quantity | None:
    """The largest capacity in ``text`` (``1TB (2 x 512GB)`` is 1000 GB). In a title only GB and larger count, so
    ``256MB cache`` is never read as a capacity."""
    found = [
        q
        for q in _quantities(_CAPACITY, _GB_PER_UNIT, text)
        if not from_title or _unit_at(text, q) in _TITLE_CAPACITY_UNITS
    ]
    return max(found, key=lambda q: q.value) if found else None


def read_speed(text: str) -> Quantity | None:
    """The largest speed in ``text`` in MB/s (``Up to 7,450 MB/s`` is 7450)."""
    found = _quantities(_SPEED, _MB_S_PER_UNIT, text)
    return max(found, key=lambda q: q.value) if found else None


def _unit_at(text: str, quantity: Quantity) -> str:
    match = _CAPACITY.match(text, quantity.start)
    return match.group("unit").lower() if match else ""


INTERFACES = ("sata", "nvme", "sas", "usb", "thunderbolt", "pcie", "ide", "scsi")
FORM_FACTORS = (
    "1.8in",
    "2.5in",
    "3.5in",
    "m.2",
    "m.2_2230",
    "m.2_2242",
    "m.2_2260",
    "m.2_2280",
    "m.2_22110",
    "msata",
    "u.2",
    "add_in_card",
)

# First match wins: NVMe before PCIe (an NVMe drive is on PCIe), SAS before SATA.
_INTERFACE_PATTERNS = (
    ("nvme", re.compile(r"\bnvme\b", re.IGNORECASE)),
    ("sas", re.compile(r"\bsas\b|serial attached scsi", re.IGNORECASE)),
    ("sata", re.compile(r"\b(?:m?sata|serial ata)(?:\b|[\dIV])", re.IGNORECASE)),
    ("thunderbolt", re.compile(r"\bthunderbolt\b", re.IGNORECASE)),
    ("usb", re.compile(r"\busb", re.IGNORECASE)),
    ("pcie", re.compile(r"\bpci[\s-]?e(?:xpress)?\b|\bpci express\b", re.IGNORECASE)),
    ("ide", re.compile(r"\b(?:ide|pata|eide)\b", re.IGNORECASE)),
    ("scsi", re.compile(r"\bscsi\b", re.IGNORECASE)),
)
_FORM_FACTOR_PATTERNS = (
    ("msata", re.compile(r"\bmsata\b", re.IGNORECASE)),
    ("u.2", re.compile(r"\bu\.2\b", re.IGNORECASE)),
    ("m.2_", re.compile(r"\bm\.?2\b[\s-]*(?:type[\s-]*)?(2230|2242|2260|2280|22110)\b", re.IGNORECASE)),
    ("m.2_", re.compile(r"\b(2230|2242|2260|2280|22110)\b(?=[\s-]*(?:m\.?2|ssd|nvme|form))", re.IGNORECASE)),
    ("m.2", re.compile(r"\bm\.2\b", re.IGNORECASE)),
    ("in", re.compile(r"\b([123]\.[58])\s*(?:\"|''|”|″|-?\s*inch\b|-?\s*in\b|-?\s*zoll\b)", re.IGNORECASE)),
    ("add_in_card", re.compile(r"\badd[\s-]?in[\s-]?card\b|\bhhhl\b|\baic\b", re.IGNORECASE)),
)


@dataclass(frozen=True, slots=True)
class Term:
    value: str
    start: int
    end: int


def read_interface(text: str) -> Term | None:
    for value, pattern in _INTERFACE_PATTERNS:
        if match := pattern.search(text):
            return Term(value, match.start(), match.end())
    return None


def read_form_factor(text: str) -> Term | None:
    for value, pattern in _FORM_FACTOR_PATTERNS:
        if (match := pattern.search(text)) is None:
            continue
        if value == "m.2_":
            return Term(f"m.2_{match.group(1)}", match.start(), match.end())
        if value == "in":
            size = f"{match.group(1)}in"
            if size in FORM_FACTORS:
                return Term(size, match.start(), match.end())
            continue
        return Term(value, match.start(), match.end())
    return None

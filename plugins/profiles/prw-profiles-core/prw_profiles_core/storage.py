"""``np_storage@1`` and ``np_storage@2``: the storage-device class profile.

It includes every ``np_core@1`` definition and adds unit-normalized storage attributes, read from ``spec:*``
claims (schema.org additionalProperty names, spec-table labels: ``capacity``, ``Storage Capacity``, ``Hard
Drive Capacity``, ...). When no spec claim names an attribute, capacity, interface and form factor are read from
the title (``Samsung 870 EVO 1TB 2.5" SATA SSD``); such a value's evidence locator is the title claim's locator
with an RFC 5147 character range (``/title#char=16,19``), so a reviewer sees it came from the title text. Speeds
are never read from titles: a title's ``7,450MB/s`` does not say whether it is the read or the write speed.

Version 2 adds ``storage:write_speed``. Version 1 stays installed unchanged, so a replay pinned to
``np_storage@1`` normalizes exactly as it did (if_replay_job pins the profile version).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from prw_platform.plugins import (
    AttributeDefinition,
    AttributeValue,
    Claim,
    ItemClass,
    Normalization,
    NormalizationProblem,
    NormalizedAttribute,
    claim_confidence,
)
from prw_profiles_core import problems as codes
from prw_profiles_core.core import CORE_DEFINITIONS, CORE_IDENTITY_KEYS, clean_text, normalize_core
from prw_profiles_core.publication import withhold
from prw_profiles_core.selection import Reading, choose, choose_weighed
from prw_profiles_core.units import (
    CAPACITY_UNIT,
    FORM_FACTORS,
    INTERFACES,
    SPEED_UNIT,
    read_capacity,
    read_form_factor,
    read_interface,
    read_speed,
)

STORAGE_DEFINITIONS_V1: dict[str, AttributeDefinition] = {
    d.key: d
    for d in (
        AttributeDefinition(
            "storage:capacity",
            1,
            "quantity",
            "Capacity in decimal gigabytes (10^9 bytes).",
            unit=CAPACITY_UNIT,
        ),
        AttributeDefinition(
            "storage:interface", 1, "enum", "Host interface of the drive.", allowed_values=INTERFACES
        ),
        AttributeDefinition(
            "storage:form_factor", 1, "enum", "Physical form factor.", allowed_values=FORM_FACTORS
        ),
        AttributeDefinition(
            "storage:read_speed", 1, "quantity", "Maximum sequential read speed in MB/s.", unit=SPEED_UNIT
        ),
    )
}
STORAGE_DEFINITIONS_V2: dict[str, AttributeDefinition] = STORAGE_DEFINITIONS_V1 | {
    "storage:write_speed": AttributeDefinition(
        "storage:write_speed", 1, "quantity", "Maximum sequential write speed in MB/s.", unit=SPEED_UNIT
    ),
}

# Spec names, folded (lower case, separators as single spaces, trailing ``:`` and unit brackets dropped).
SPEC_ALIASES: dict[str, tuple[str, ...]] = {
    "storage:capacity": (
        "capacity",
        "storage capacity",
        "hard drive capacity",
        "hard disk capacity",
        "drive capacity",
        "ssd capacity",
        "total capacity",
        "storage size",
    ),
    "storage:interface": (
        "interface",
        "hard drive interface",
        "drive interface",
        "host interface",
        "connectivity",
    ),
    "storage:form_factor": ("form factor", "hard drive form factor", "drive form factor", "ssd form factor"),
    "storage:read_speed": (
        "read speed",
        "sequential read",
        "sequential read speed",
        "max read speed",
        "max sequential read",
        "maximum read speed",
        "read transfer rate",
    ),
    "storage:write_speed": (
        "write speed",
        "sequential write",
        "sequential write speed",
        "max write speed",
        "max sequential write",
        "maximum write speed",
        "write transfer rate",
    ),
}
_SPEC_TO_KEY = {alias: key for key, aliases in SPEC_ALIASES.items() for alias in aliases}
_UNIT_IN_NAME = re.compile(r"\s*[\(\[](?P<unit>[a-z/]+)[\)\]]\s*$")


def spec_name(attribute: str) -> tuple[str, str | None]:
    """``spec:Storage_Capacity (GB):`` -> (``storage capacity``, ``gb``)."""
    name = attribute.partition(":")[2].casefold().strip().rstrip(":").strip()
    unit = None
    if match := _UNIT_IN_NAME.search(name):
        unit, name = match.group("unit"), name[: match.start()]
    name = re.sub(r"[\s_\-]+", " ", name.replace("max.", "max")).strip()
    return name, unit


@dataclass(frozen=True, slots=True)
class _Reader:
    read: Callable[[str], tuple[AttributeValue, int, int] | None]
    unit: str | None
    from_title: bool


def _capacity(text: str) -> tuple[AttributeValue, int, int] | None:
    q = read_capacity(text)
    return None if q is None else (q.value, q.start, q.end)


def _title_capacity(text: str) -> tuple[AttributeValue, int, int] | None:
    q = read_capacity(text, from_title=True)
    return None if q is None else (q.value, q.start, q.end)


def _speed(text: str) -> tuple[AttributeValue, int, int] | None:
    q = read_speed(text)
    return None if q is None else (q.value, q.start, q.end)


def _interface(text: str) -> tuple[AttributeValue, int, int] | None:
    t = read_interface(text)
    return None if t is None else (t.value, t.start, t.end)


def _form_factor(text: str) -> tuple[AttributeValue, int, int] | None:
    t = read_form_factor(text)
    return None if t is None else (t.value, t.start, t.end)


_READERS: dict[str, tuple[_Reader, Callable[[str], tuple[AttributeValue, int, int] | None] | None]] = {
    "storage:capacity": (_Reader(_capacity, CAPACITY_UNIT, True), _title_capacity),
    "storage:interface": (_Reader(_interface, None, True), _interface),
    "storage:form_factor": (_Reader(_form_factor, None, True), _form_factor),
    "storage:read_speed": (_Reader(_speed, SPEED_UNIT, False), None),
    "storage:write_speed": (_Reader(_speed, SPEED_UNIT, False), None),
}


#: The classes the public API filters by (``class=cls_storage_ssd``), from normalized attributes only. A drive
#: on NVMe or in an M.2, mSATA or U.2 form factor is solid-state; a 3.5in drive is a hard disk. A 2.5in SATA
#: drive can be either: it is in ``cls_storage`` only, until a profile version normalizes the medium itself.
STORAGE_CLASSES = (
    ItemClass("cls_storage", "Storage devices: every item normalized by np_storage."),
    ItemClass(
        "cls_storage_ssd",
        "Solid-state drives: NVMe, or an M.2, mSATA or U.2 form factor.",
        any_of=(
            {"storage:interface": ("nvme",)},
            {"storage:form_factor": tuple(f for f in FORM_FACTORS if f.startswith(("m.2", "msata", "u.2")))},
        ),
    ),
    ItemClass(
        "cls_storage_hdd",
        "Hard disk drives: the 3.5in form factor.",
        any_of=({"storage:form_factor": ("3.5in",)},),
    ),
)


class StorageProfile:
    """A storage-device class profile at one version; its definitions are the core ones plus storage ones."""

    name: str = "np_storage"
    version: str
    definitions: Mapping[str, AttributeDefinition]
    identity_keys: tuple[tuple[str, ...], ...] = CORE_IDENTITY_KEYS
    classes: tuple[ItemClass, ...] = STORAGE_CLASSES

    def __init__(
        self,
        version: int,
        storage_definitions: dict[str, AttributeDefinition],
        publication_thresholds: Mapping[str, float] | None = None,
    ) -> None:
        """``publication_thresholds`` (``np_storage@3``): values are chosen by weighed confidence, and an offer
        value under its threshold is withheld, as in ``np_core@2``; without it, ``np_core@1``'s rule."""
        self.version = str(version)
        self.definitions = CORE_DEFINITIONS | storage_definitions
        self._storage_keys = tuple(storage_definitions)
        self._weighed = publication_thresholds is not None
        self.publication_thresholds: Mapping[str, float] = dict(publication_thresholds or {})

    def normalize(self, claims: Sequence[Claim]) -> Normalization:
        problems: list[NormalizationProblem] = []
        attributes = normalize_core(claims, self.definitions, problems, weighed=self._weighed)
        for key in self._storage_keys:
            attribute = self._storage_attribute(key, claims, problems)
            if attribute is not None:
                attributes.append(attribute)
        published, withheld = withhold(attributes, self.publication_thresholds, problems)
        return Normalization(f"{self.name}@{self.version}", published, tuple(problems), withheld)

    def parse_value(self, key: str, text: str) -> NormalizedAttribute | None:
        """A value typed for a storage attribute (a query's ``attr[storage:capacity]=1 TB``) in canonical form,
        read the way a spec value is (1 TB is 1000 GB, ``NVMe`` is ``nvme``); None for another key or text this
        profile cannot read."""
        if key not in self._storage_keys:
            return None
        reader, _title_reader = _READERS[key]
        found = reader.read(clean_text(text))
        if found is None or (isinstance(found[0], Decimal) and found[0] <= 0):
            return None
        definition = self.definitions[key]
        return NormalizedAttribute(key, found[0], definition.version, definition.unit)

    def _storage_attribute(
        self, key: str, claims: Sequence[Claim], problems: list[NormalizationProblem]
    ) -> NormalizedAttribute | None:
        reader, title_reader = _READERS[key]
        specs = [
            (c, unit)
            for c in claims
            if c.attribute.startswith("spec:")
            for name, unit in [spec_name(c.attribute)]
            if _SPEC_TO_KEY.get(name) == key
        ]
        readings: list[Reading] = []
        for claim, unit_in_name in specs:
            reading = self._read_spec(key, reader, claim, unit_in_name, problems)
            if reading is not None:
                readings.append(reading)
        if not specs and title_reader is not None:
            for claim in claims:
                if claim.attribute == "core:title" and isinstance(claim.value, str):
                    text = clean_text(claim.value)
                    if (found := title_reader(text)) is not None:
                        value, start, end = found
                        locator = f"{claim.evidence_locator}#char={start},{end}"
                        readings.append(Reading(value, value, locator, claim.value, claim_confidence(claim)))
        choice = (choose_weighed if self._weighed else choose)(key, readings, problems)
        if choice is None:
            return None
        definition = self.definitions[key]
        return NormalizedAttribute(
            key, choice.value, definition.version, definition.unit, choice.locators, choice.confidence
        )

    @staticmethod
    def _read_spec(
        key: str,
        reader: _Reader,
        claim: Claim,
        unit_in_name: str | None,
        problems: list[NormalizationProblem],
    ) -> Reading | None:
        value = claim.value
        if isinstance(value, bool):
            problems.append(
                NormalizationProblem(key, codes.WRONG_VALUE_TYPE, "a boolean is not a value", value)
            )
            return None
        text = clean_text(str(value))
        if isinstance(value, int | float) and unit_in_name:
            text = f"{value} {unit_in_name}"  # ``spec:Capacity (GB)`` = 500
        elif reader.unit is not None and unit_in_name and re.fullmatch(r"[\d.,\s]+", text):
            text = f"{text} {unit_in_name}"
        if not text:
            problems.append(
                NormalizationProblem(key, codes.EMPTY_VALUE, f"{claim.attribute} is empty", value)
            )
            return None
        found = reader.read(text)
        if found is None or (isinstance(found[0], Decimal) and found[0] <= 0):
            code = codes.QUANTITY_UNPARSEABLE if reader.unit is not None else codes.ENUM_UNKNOWN
            problems.append(
                NormalizationProblem(
                    key, code, f"{claim.attribute}={value!r} is not a known {key} value", value
                )
            )
            return None
        return Reading(found[0], found[0], claim.evidence_locator, value, claim_confidence(claim))

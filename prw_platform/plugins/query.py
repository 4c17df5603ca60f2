"""What the public API's queries learn from the installed profiles (if_product_query: ``class=`` and ``attr[...]``).

A profile may declare product classes (``ItemClass``) and may read a value a user typed for one of its attributes
into canonical form (``parse_value``); both are optional members of ``NormalizationProfile``. ``QueryVocabulary``
gathers them from a registry once, at composition, so a query never walks the plugins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from prw_platform.plugins.registry import PluginRegistry
from prw_platform.plugins.types import AttributeValue, ItemClass, NormalizationProfile, NormalizedAttribute

ValueParser = Callable[[str, str], NormalizedAttribute | None]


@dataclass(frozen=True, slots=True)
class ClassRule:
    """``ItemClass`` bound to the name of the profile that declares it."""

    class_id: str
    description: str
    profile: str
    any_of: tuple[Mapping[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class CanonicalValue:
    """A typed filter value in the form items store it: the value as text and its unit (None: no unit)."""

    text: str
    unit: str | None


def profile_classes(profile: NormalizationProfile) -> tuple[ItemClass, ...]:
    classes = getattr(profile, "classes", ())
    return tuple(c for c in classes if isinstance(c, ItemClass)) if isinstance(classes, tuple) else ()


def profile_value_parser(profile: NormalizationProfile) -> ValueParser | None:
    parse = getattr(profile, "parse_value", None)
    return parse if callable(parse) else None


def value_text(value: AttributeValue) -> str:
    """The JSON text of a canonical value: ``1000`` for Decimal("1E+3"), ``true`` for True."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        normalized = value.normalize()
        integral = normalized == normalized.to_integral_value()
        return str(normalized.quantize(Decimal(1)) if integral else normalized)
    return str(value)


@dataclass(frozen=True)
class QueryVocabulary:
    """The classes and value readers of the installed profiles, newest profile version first."""

    classes: Mapping[str, ClassRule] = field(default_factory=dict)
    #: (profile pin, attribute keys it defines, its reader), newest version of each profile first.
    parsers: tuple[tuple[str, frozenset[str], ValueParser], ...] = ()

    @classmethod
    def from_registry(cls, registry: PluginRegistry) -> QueryVocabulary:
        classes: dict[str, ClassRule] = {}
        parsers: list[tuple[str, frozenset[str], ValueParser]] = []
        for pin in registry.profile_pins:  # by name, newest version first: the newest declaration wins
            profile = registry.profile(pin)
            for item_class in profile_classes(profile):
                classes.setdefault(
                    item_class.class_id,
                    ClassRule(item_class.class_id, item_class.description, profile.name, item_class.any_of),
                )
            if (parse := profile_value_parser(profile)) is not None:
                parsers.append((pin, frozenset(profile.definitions), parse))
        return cls(classes, tuple(parsers))

    def canonical(self, key: str, text: str) -> CanonicalValue | None:
        """``text`` read by the first profile that defines ``key`` and can read it; None when none can."""
        for _pin, keys, parse in self.parsers:
            if key not in keys:
                continue
            attribute = parse(key, text)
            if attribute is not None:
                return CanonicalValue(value_text(attribute.value), attribute.unit)
        return None

"""How one value is chosen when several claims speak about the same attribute.

Rule (documented in the README): claims are normalized first, then grouped by normalized value. The value with
the most claims wins; on a tie, the value whose first claim comes first in the adapter's claim order wins
(adapters list their strongest source first, and the order is deterministic for the same bytes). When more than
one value remains, a CONFLICTING_CLAIMS problem names every value with its evidence locators.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from prw_platform.plugins import DEFAULT_CONFIDENCE, AttributeValue, ClaimValue, NormalizationProblem, weigh
from prw_profiles_core.problems import CONFLICTING_CLAIMS


@dataclass(frozen=True, slots=True)
class Reading:
    """One claim's value in canonical form; ``same_as`` decides which readings agree (casefolded text, ...)."""

    value: AttributeValue
    same_as: Hashable
    locator: str
    raw: ClaimValue | None = None
    #: The claim's confidence (its adapter's rating, else the platform default).
    confidence: float = DEFAULT_CONFIDENCE


@dataclass(frozen=True, slots=True)
class Choice:
    value: AttributeValue
    locators: tuple[str, ...]
    #: The chosen value's weighed confidence (``choose_weighed``); None from ``choose``.
    confidence: float | None = None


def choose(
    attribute: str, readings: Sequence[Reading], problems: list[NormalizationProblem]
) -> Choice | None:
    groups: dict[Hashable, list[Reading]] = {}
    for reading in readings:
        groups.setdefault(reading.same_as, []).append(reading)
    if not groups:
        return None
    ordered = list(groups.values())
    winner = max(ordered, key=len)  # max() keeps the first of equals: the earliest value wins a tie
    if len(ordered) > 1:
        described = "; ".join(
            f"{group[0].value!r} ({len(group)} claim{'s' if len(group) > 1 else ''}: "
            f"{', '.join(r.locator for r in group)})"
            for group in ordered
        )
        problems.append(
            NormalizationProblem(
                attribute,
                CONFLICTING_CLAIMS,
                f"claims disagree: {described}; chose {winner[0].value!r} (most claims, then first claim)",
                raw_value=winner[0].raw,
            )
        )
    return Choice(winner[0].value, tuple(r.locator for r in winner))


def choose_weighed(
    attribute: str, readings: Sequence[Reading], problems: list[NormalizationProblem]
) -> Choice | None:
    """``np_core@2``'s rule: every reading is a witness with its claim's confidence; the value with the highest
    weighed confidence wins (``prw_platform.plugins.weigh``: agreeing claims raise it, claims of other values
    lower it; a tie goes to the value claimed first). Several values are a CONFLICTING_CLAIMS problem naming each
    with its confidence and locators."""
    if not readings:
        return None
    ranked = weigh([(reading.same_as, reading.confidence) for reading in readings])
    winner = ranked[0]
    chosen = [readings[i] for i in winner.witnesses]
    if len(ranked) > 1:
        described = "; ".join(
            f"{_shown(readings[value.witnesses[0]].value)} at {value.confidence:.2f} "
            f"({', '.join(readings[i].locator for i in value.witnesses)})"
            for value in ranked
        )
        problems.append(
            NormalizationProblem(
                attribute,
                CONFLICTING_CLAIMS,
                f"claims disagree: {described}; chose {_shown(chosen[0].value)} (highest weighed confidence)",
                raw_value=chosen[0].raw,
            )
        )
    return Choice(chosen[0].value, tuple(r.locator for r in chosen), winner.confidence)


def _shown(value: AttributeValue) -> str:
    """A value as a reviewer reads it: ``'20.00'``, not ``Decimal('20.00')``."""
    return repr(str(value)) if isinstance(value, Decimal) else repr(value)

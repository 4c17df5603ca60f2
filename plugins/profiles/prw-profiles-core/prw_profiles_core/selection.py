"""How one value is chosen when several claims speak about the same attribute.

Rule (documented in the README): claims are normalized first, then grouped by normalized value. The value with
the most claims wins; on a tie, the value whose first claim comes first in the adapter's claim order wins
(adapters list their strongest source first, and the order is deterministic for the same bytes). When more than
one value remains, a CONFLICTING_CLAIMS problem names every value with its evidence locators.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from prw_platform.plugins import AttributeValue, ClaimValue, NormalizationProblem
from prw_profiles_core.problems import CONFLICTING_CLAIMS


@dataclass(frozen=True, slots=True)
class Reading:
    """One claim's value in canonical form; ``same_as`` decides which readings agree (casefolded text, ...)."""

    value: AttributeValue
    same_as: Hashable
    locator: str
    raw: ClaimValue | None = None


@dataclass(frozen=True, slots=True)
class Choice:
    value: AttributeValue
    locators: tuple[str, ...]


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

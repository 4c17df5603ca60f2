"""Confidence: how far one claim, and a value stated by several claims, can be trusted.

An adapter rates each claim it makes (``Claim.source``, ``Claim.confidence`` in [0, 1]); a claim it does not rate
counts at ``DEFAULT_CONFIDENCE``, so an adapter written before ratings existed is trusted as it was. A profile
weighs the claims of one attribute with ``weigh``: every claim is an independent witness that is right with its
confidence and, when wrong, states some other value. Witnesses that agree raise their value's confidence, witnesses
of other values lower it, and the value nobody contradicts keeps its witness's own confidence.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, get_args

from prw_platform.plugins.types import Claim, EvidenceSource

#: The confidence of a claim whose adapter does not rate it: above the publication thresholds of the bundled
#: profiles, so an unrated adapter's offer is published as before unless its own claims disagree.
DEFAULT_CONFIDENCE = 0.9
EVIDENCE_SOURCES: tuple[str, ...] = get_args(EvidenceSource)
# A witness is never certain: two "certain" witnesses of different values would leave no value possible.
_FLOOR, _CEILING = 0.001, 0.999

K = TypeVar("K", bound=Hashable)


def claim_confidence(claim: Claim) -> float:
    """The claim's own confidence, or the default for a claim its adapter did not rate."""
    return DEFAULT_CONFIDENCE if claim.confidence is None else claim.confidence


def confidence_problem(claim: Claim) -> str | None:
    """Why the claim's rating is not valid, or None. A rated claim has a confidence that is a real number in
    [0, 1], names an evidence source and says where its value is (an evidence locator); an unrated claim (no
    confidence) may still name its source."""
    where = f"{claim.attribute} at {claim.evidence_locator!r}"
    source, confidence = claim.source, claim.confidence
    if source is not None and source not in EVIDENCE_SOURCES:
        return f"{where}: evidence source {source!r} is not one of {', '.join(EVIDENCE_SOURCES)}"
    if confidence is None:
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return f"{where}: confidence {confidence!r} is not a number"
    if not math.isfinite(confidence) or not 0 <= confidence <= 1:
        return f"{where}: confidence {confidence!r} is outside [0, 1]"
    if source is None:
        return f"{where}: confidence {confidence!r} without an evidence source"
    if not (isinstance(claim.evidence_locator, str) and claim.evidence_locator.strip()):
        return f"{claim.attribute}: confidence {confidence!r} without an evidence locator"
    return None


@dataclass(frozen=True, slots=True)
class Weighed(Generic[K]):
    """One value and its confidence after weighing every witness; ``witnesses`` are the positions of the
    statements that state it, in the order given."""

    key: K
    confidence: float
    witnesses: tuple[int, ...]


def weigh(statements: Sequence[tuple[K, float]]) -> list[Weighed[K]]:
    """Every value stated, most trusted first (a tie goes to the value stated first).

    ``statements`` are (value, confidence) pairs from independent witnesses. A value's confidence is the
    probability that it is the right one, given that each witness is right with its confidence and a wrong witness
    states some other value: the product of its witnesses' confidences and of the other witnesses' doubts,
    against the same for every other value and for "none of them" (every witness wrong). One witness alone keeps
    its own confidence; two that agree at 0.85 and 0.7 give 0.93; 0.85 against 0.7 gives 0.63."""
    if not statements:
        return []
    trust = [min(max(float(confidence), _FLOOR), _CEILING) for _, confidence in statements]
    order: dict[K, list[int]] = {}
    for position, (key, _) in enumerate(statements):
        order.setdefault(key, []).append(position)
    everyone_wrong = math.prod(1 - c for c in trust)
    scores = {
        key: math.prod(trust[i] if i in positions else 1 - trust[i] for i in range(len(trust)))
        for key, positions in order.items()
    }
    total = sum(scores.values()) + everyone_wrong
    weighed = [Weighed(key, round(scores[key] / total, 4), tuple(order[key])) for key in order]
    # sorted() is stable: among equal confidences the value stated first stays first.
    return sorted(weighed, key=lambda value: -value.confidence)


def publication_thresholds(profile: object) -> Mapping[str, float]:
    """A profile's optional ``publication_thresholds`` (attribute key -> the confidence a value needs to be
    published automatically), keeping only well-formed entries; empty when the profile declares none."""
    declared = getattr(profile, "publication_thresholds", None)
    if not isinstance(declared, Mapping):
        return {}
    return {
        key: float(value)
        for key, value in declared.items()
        if isinstance(key, str)
        and isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0 <= value <= 1
    }

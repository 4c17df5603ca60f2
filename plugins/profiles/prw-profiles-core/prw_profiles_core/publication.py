"""Publication by confidence (``np_core@2``, ``np_storage@3``): which values become the listing's automatically."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prw_platform.plugins import NormalizationProblem, NormalizedAttribute
from prw_profiles_core.problems import UNCERTAIN_VALUE

#: ``np_core@2`` and ``np_storage@3``: the confidence an offer value needs to become the listing's automatically
#: (README.md, "Publication by confidence"). A value under it is withheld and the listing goes to review.
OFFER_THRESHOLDS: Mapping[str, float] = {"core:price": 0.75, "core:currency": 0.75, "core:availability": 0.75}


def withhold(
    attributes: Sequence[NormalizedAttribute],
    thresholds: Mapping[str, float],
    problems: list[NormalizationProblem],
) -> tuple[tuple[NormalizedAttribute, ...], tuple[NormalizedAttribute, ...]]:
    """(published, withheld): a value whose confidence is under its attribute's threshold is withheld, and an
    UNCERTAIN_VALUE problem says so with both numbers."""
    published: list[NormalizedAttribute] = []
    withheld: list[NormalizedAttribute] = []
    for attribute in attributes:
        threshold = thresholds.get(attribute.key)
        confidence = attribute.confidence
        if threshold is None or (confidence is not None and confidence >= threshold):
            published.append(attribute)
            continue
        withheld.append(attribute)
        problems.append(
            NormalizationProblem(
                attribute.key,
                UNCERTAIN_VALUE,
                f"{str(attribute.value)!r} has confidence {confidence if confidence is not None else 'unknown'}, under "
                f"the publication threshold {threshold} ({', '.join(attribute.evidence_locators)}): withheld for "
                "review",
                raw_value=str(attribute.value),
            )
        )
    return tuple(published), tuple(withheld)

"""The profile objects this distribution registers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prw_platform.plugins import AttributeDefinition, Claim, Normalization, NormalizationProblem
from prw_profiles_core.core import CORE_DEFINITIONS, CORE_IDENTITY_KEYS, normalize_core
from prw_profiles_core.publication import OFFER_THRESHOLDS, withhold


class CoreProfile:
    """``np_core@1``: the attributes every product class shares."""

    name: str = "np_core"
    version: str = "1"
    definitions: Mapping[str, AttributeDefinition] = CORE_DEFINITIONS
    identity_keys: tuple[tuple[str, ...], ...] = CORE_IDENTITY_KEYS

    def normalize(self, claims: Sequence[Claim]) -> Normalization:
        problems: list[NormalizationProblem] = []
        attributes = normalize_core(claims, self.definitions, problems)
        return Normalization(f"{self.name}@{self.version}", tuple(attributes), tuple(problems))


class CoreProfileV2(CoreProfile):
    """``np_core@2``: ``np_core@1``'s definitions, values chosen by weighed confidence, and the offer's values
    published only at ``publication_thresholds``."""

    version: str = "2"
    publication_thresholds: Mapping[str, float] = OFFER_THRESHOLDS

    def normalize(self, claims: Sequence[Claim]) -> Normalization:
        problems: list[NormalizationProblem] = []
        attributes = normalize_core(claims, self.definitions, problems, weighed=True)
        published, withheld = withhold(attributes, self.publication_thresholds, problems)
        return Normalization(f"{self.name}@{self.version}", published, tuple(problems), withheld)

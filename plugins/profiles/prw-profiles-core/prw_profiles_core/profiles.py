"""The profile objects this distribution registers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prw_platform.plugins import AttributeDefinition, Claim, Normalization, NormalizationProblem
from prw_profiles_core.core import CORE_DEFINITIONS, CORE_IDENTITY_KEYS, normalize_core


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

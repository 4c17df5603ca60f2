"""Small, real plugins for the plugin-system tests: registered through pluggy like any installed plugin."""

from __future__ import annotations

import textwrap
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from prw_platform.plugins import (
    PLUGIN_API_VERSION,
    Artifact,
    AttributeDefinition,
    CaptureView,
    Claim,
    Extraction,
    IdentityEvidence,
    IdentityVerdict,
    ListingFields,
    Normalization,
    NormalizationProfile,
    NormalizedAttribute,
    SourceAdapter,
    hookimpl,
)


@dataclass
class FakeAdapter:
    name: str
    version: str
    media_types: tuple[str, ...] = ("text/html",)
    priority: int = 0

    def supports(self, capture: CaptureView) -> bool:
        return capture.media_type in self.media_types

    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        claims = tuple(
            Claim("core:title", a.data.decode("utf-8", "replace"), f"/{a.artifact_id}") for a in artifacts
        )
        return Extraction(f"{self.name}@{self.version}", claims, ListingFields())


@dataclass
class FakeProfile:
    name: str
    version: str
    definitions: Mapping[str, AttributeDefinition] = field(
        default_factory=lambda: {"core:title": AttributeDefinition("core:title", 1, "string", "Title.")}
    )
    identity_keys: tuple[tuple[str, ...], ...] = (("core:title",),)

    def normalize(self, claims: Sequence[Claim]) -> Normalization:
        attributes = tuple(
            NormalizedAttribute("core:title", c.value, 1, None, (c.evidence_locator,))
            for c in claims[:1]
            if c.attribute == "core:title" and isinstance(c.value, str) and c.value.strip()
        )
        return Normalization(f"{self.name}@{self.version}", attributes)


class FakePlugin:
    """A plugin object (pluggy accepts any object with hookimpl-marked attributes, not only modules)."""

    PRW_PLUGIN_API: object = PLUGIN_API_VERSION

    def __init__(
        self, adapters: Iterable[SourceAdapter] = (), profiles: Iterable[NormalizationProfile] = ()
    ) -> None:
        self.adapters = list(adapters)
        self.profiles = list(profiles)

    @hookimpl
    def prw_register_adapters(self) -> list[SourceAdapter]:
        return self.adapters

    @hookimpl
    def prw_register_profiles(self) -> list[NormalizationProfile]:
        return self.profiles


def install_distribution(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    distribution: str,
    version: str,
    module_source: str,
    entry_point: str | None = None,
) -> str:
    """Write a real installed distribution (dist-info with an entry point of group ``prw``, and its module)
    under ``root`` and put it on sys.path, as an installer would. Returns the module name."""
    module = f"prw_test_plugin_{uuid.uuid4().hex[:10]}"
    (root / f"{module}.py").write_text(textwrap.dedent(module_source), encoding="utf-8")
    dist_info = root / f"{distribution.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n", encoding="utf-8"
    )
    (dist_info / "entry_points.txt").write_text(
        f"[prw]\n{entry_point or module} = {module}\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(root))
    return module


@dataclass
class FakeRule:
    """An identity rule that maps the listing to its top candidate when the score reaches ``threshold``."""

    name: str
    version: str
    threshold: float = 0.9

    def decide(self, evidence: IdentityEvidence) -> IdentityVerdict | None:
        top = evidence.candidates[0] if evidence.candidates else None
        if top is None or top.score < self.threshold:
            return None
        return IdentityVerdict(top.item_id, f"top candidate scores {top.score} >= {self.threshold}")


class RulePlugin:
    """A plugin that offers identity rules only."""

    PRW_PLUGIN_API: object = PLUGIN_API_VERSION

    def __init__(self, rules: Iterable[object]) -> None:
        self.rules = list(rules)

    @hookimpl
    def prw_identity_rules(self) -> list[object]:
        return self.rules

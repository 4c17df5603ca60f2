"""The plugin API: hookspecs, the types plugins exchange with the platform, and the manager and registry.

Plugins import from here and nowhere else in ``prw_platform``.
"""

from prw_platform.plugins.hookspecs import hookimpl, hookspec
from prw_platform.plugins.types import (
    PLUGIN_API_VERSION,
    Artifact,
    AttributeDefinition,
    Availability,
    CaptureView,
    Claim,
    ClaimValue,
    DuplicatePin,
    Extraction,
    ExtractionError,
    ListingFields,
    Normalization,
    NormalizationProblem,
    NormalizationProfile,
    NormalizedAttribute,
    PluginApiMismatch,
    PluginError,
    PluginInfo,
    SourceAdapter,
    UnknownAdapterVersion,
    UnknownProfileVersion,
)

__all__ = [
    "PLUGIN_API_VERSION",
    "Artifact",
    "AttributeDefinition",
    "Availability",
    "CaptureView",
    "Claim",
    "ClaimValue",
    "DuplicatePin",
    "Extraction",
    "ExtractionError",
    "ListingFields",
    "Normalization",
    "NormalizationProblem",
    "NormalizationProfile",
    "NormalizedAttribute",
    "PluginApiMismatch",
    "PluginError",
    "PluginInfo",
    "SourceAdapter",
    "UnknownAdapterVersion",
    "UnknownProfileVersion",
    "hookimpl",
    "hookspec",
]

"""The plugin API: hookspecs, the types plugins exchange with the platform, and the manager and registry.

Plugins import from here and nowhere else in ``prw_platform``. (``prw_platform.plugins.testing`` holds the
contract test bases for plugin test suites; it needs pytest, so it is not imported here.)
"""

from prw_platform.plugins.confidence import (
    DEFAULT_CONFIDENCE,
    EVIDENCE_SOURCES,
    Weighed,
    claim_confidence,
    confidence_problem,
    publication_thresholds,
    weigh,
)
from prw_platform.plugins.conformance import conformance_problem
from prw_platform.plugins.hookspecs import hookimpl, hookspec
from prw_platform.plugins.identity import IdentityCandidate, IdentityEvidence, IdentityRule, IdentityVerdict
from prw_platform.plugins.introspection import list_plugins
from prw_platform.plugins.manager import (
    AUTOLOAD_ENV,
    ENTRYPOINT_GROUP,
    get_plugin_manager,
    register_plugin,
)
from prw_platform.plugins.pins import is_adapter_pin, is_profile_pin, is_rule_pin
from prw_platform.plugins.registry import PluginRegistry
from prw_platform.plugins.types import (
    PLUGIN_API_VERSION,
    Artifact,
    AttributeDefinition,
    AttributeValue,
    Availability,
    CaptureView,
    Claim,
    ClaimValue,
    DuplicatePin,
    EvidenceSource,
    Extraction,
    ExtractionError,
    InvalidPin,
    InvalidPluginResult,
    ItemClass,
    ListingFields,
    Normalization,
    NormalizationProblem,
    NormalizationProfile,
    NormalizedAttribute,
    PluginApiMismatch,
    PluginError,
    PluginInfo,
    PluginLoadError,
    SourceAdapter,
    UnknownAdapterVersion,
    UnknownProfileVersion,
    ValueType,
)
from prw_platform.plugins.vocabulary import availability_from_text

__all__ = [
    "AUTOLOAD_ENV",
    "DEFAULT_CONFIDENCE",
    "ENTRYPOINT_GROUP",
    "EVIDENCE_SOURCES",
    "PLUGIN_API_VERSION",
    "Artifact",
    "AttributeDefinition",
    "AttributeValue",
    "Availability",
    "CaptureView",
    "Claim",
    "ClaimValue",
    "DuplicatePin",
    "EvidenceSource",
    "Extraction",
    "ExtractionError",
    "IdentityCandidate",
    "IdentityEvidence",
    "IdentityRule",
    "IdentityVerdict",
    "InvalidPin",
    "InvalidPluginResult",
    "ItemClass",
    "ListingFields",
    "Normalization",
    "NormalizationProblem",
    "NormalizationProfile",
    "NormalizedAttribute",
    "PluginApiMismatch",
    "PluginError",
    "PluginInfo",
    "PluginLoadError",
    "PluginRegistry",
    "SourceAdapter",
    "UnknownAdapterVersion",
    "UnknownProfileVersion",
    "ValueType",
    "Weighed",
    "availability_from_text",
    "claim_confidence",
    "confidence_problem",
    "conformance_problem",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "is_adapter_pin",
    "is_profile_pin",
    "is_rule_pin",
    "list_plugins",
    "publication_thresholds",
    "register_plugin",
    "weigh",
]

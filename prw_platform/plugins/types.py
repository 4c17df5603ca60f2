"""The types a plugin sees. A plugin imports only `prw_platform.plugins` (docs/architecture.md: Layers).

Adapters turn captured bytes into *claims* (what the page says, with where it says it); profiles turn claims into
*normalized attributes* that conform to versioned attribute definitions (INV-02). Nothing here touches a database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal, Protocol, runtime_checkable

from prw_platform.coded_error import CodedError

#: The plugin API this platform serves. A plugin module declares the API it was written for as the module
#: attribute ``PRW_PLUGIN_API``; the manager refuses a mismatch and names the distribution.
PLUGIN_API_VERSION = 1

ClaimValue = str | int | float | bool
AttributeValue = str | int | bool | Decimal


@dataclass(frozen=True, slots=True)
class Artifact:
    """One stored evidence object of a capture, already verified against its sha256 by the caller."""

    artifact_id: str
    sha256: str
    media_type: str
    data: bytes


@dataclass(frozen=True, slots=True)
class CaptureView:
    """What an adapter may know about a capture: never tenant, credentials or other captures."""

    capture_id: str
    source_id: str
    media_type: str
    url: str | None = None
    observed_at: datetime | None = None
    #: The adapter pin the collector or a replay asked for, if any (``name@version``).
    adapter_hint: str | None = None


#: The kind of place a claim was read from: ``structured`` markup (JSON-LD, microdata, RDFa, a feed's fields),
#: ``meta`` tags (OpenGraph, Twitter cards, ``<meta name>``), the visible ``buy_box`` (the price, the buy action
#: and the stock statement a visitor acts on), the capture's ``url``, or a ``text`` pattern elsewhere on the page
#: (a labelled identifier, a statement in the page's prose).
EvidenceSource = Literal["structured", "meta", "buy_box", "url", "text"]


@dataclass(frozen=True, slots=True)
class Claim:
    """One statement read from the evidence. ``attribute`` is namespaced (``core:gtin``, ``spec:capacity``);
    ``value`` is as found (trimmed, not normalized); ``evidence_locator`` says where (a JSON path into a
    structured-data block, a CSS selector, a meta property) so a reviewer can find it again.

    ``source`` and ``confidence`` rate the statement on its own: what kind of place it comes from, and how far
    the adapter trusts it there, in [0, 1]. An adapter that rates nothing leaves both None and its claims count at
    ``DEFAULT_CONFIDENCE`` (``prw_platform.plugins.confidence``). One claim per independent statement: several
    claims of one value from different places raise that value's confidence when a profile weighs them, claims of
    different values lower it."""

    attribute: str
    value: ClaimValue
    evidence_locator: str
    source: EvidenceSource | None = None
    confidence: float | None = None


Availability = Literal[
    "in_stock", "out_of_stock", "preorder", "backorder", "discontinued", "limited", "unknown"
]


@dataclass(frozen=True, slots=True)
class ListingFields:
    """The listing as the merchant presents it (the offer), separate from product identity claims."""

    title: str | None = None
    url: str | None = None
    price: Decimal | None = None
    currency: str | None = None
    availability: Availability | None = None


@dataclass(frozen=True, slots=True)
class RuleFired:
    """A named rule of the adapter changed what it claims: ``price.sale`` took the sale price where the markup's
    price is shown struck out. ``before`` and ``after`` are the attribute's chosen value without and with the rule
    (None: no value)."""

    rule: str
    attribute: str
    before: ClaimValue | None
    after: ClaimValue | None


@dataclass(frozen=True, slots=True)
class Extraction:
    """The result of one adapter run. ``diagnostics`` are human-readable notes (malformed JSON-LD skipped,
    markup price differs from the visible price, ...); they never change a claim. ``rules_fired`` lists the
    adapter's named rules that changed a value on this capture, for measuring them (``prw eval extraction
    --rules``); it is not stored (a diagnostic says the same in words)."""

    adapter: str
    claims: tuple[Claim, ...]
    listing: ListingFields
    diagnostics: tuple[str, ...] = ()
    rules_fired: tuple[RuleFired, ...] = ()


@runtime_checkable
class SourceAdapter(Protocol):
    """A source adapter, pinned as ``name@version`` (``pa_schemaorg@1.0.0``).

    An adapter may also carry an optional ``priority: int`` attribute (default 0). Automatic selection tries
    adapters by priority, highest first (see ``PluginRegistry.select_adapter``); generic adapters that accept a
    broad media type declare a negative priority so that specific ones win without declaring anything."""

    name: str
    version: str

    def supports(self, capture: CaptureView) -> bool:
        """True when this adapter can read the capture (media type, source, URL pattern). Must not raise."""
        ...

    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        """Read claims and listing fields from the artifacts. Deterministic for the same bytes: a replay of
        stored evidence with the same pin gives the same claims. Raises ``ExtractionError`` when it cannot."""
        ...


ValueType = Literal["string", "integer", "decimal", "boolean", "enum", "quantity", "identifier"]


@dataclass(frozen=True, slots=True)
class AttributeDefinition:
    """A versioned attribute definition (INV-02: a value conforms to its definition at the pinned version).

    ``unit`` is the canonical unit of a ``quantity`` (values are stored in it); ``allowed_values`` bounds an
    ``enum``."""

    key: str
    version: int
    value_type: ValueType
    description: str
    unit: str | None = None
    allowed_values: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class NormalizedAttribute:
    """A value in canonical form (a quantity in the definition's unit, a decimal price, an ISO 4217 code)."""

    key: str
    value: AttributeValue
    definition_version: int
    unit: str | None = None
    #: Where the value came from: the evidence locators of the claims it was normalized from.
    evidence_locators: tuple[str, ...] = ()
    #: How far the value can be trusted, in [0, 1], weighed from its claims (None: the profile does not say).
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class NormalizationProblem:
    """A claim the profile could not normalize, or claims that disagree. Problems never raise."""

    attribute: str
    code: str
    message: str
    raw_value: ClaimValue | None = None


@dataclass(frozen=True, slots=True)
class Normalization:
    """``withheld``: values the profile read but holds back because their confidence is under its publication
    threshold for that attribute (an offer's price, currency or availability); they are not the listing's until a
    reviewer confirms one (resolution opens an ``offer_uncertain`` case)."""

    profile: str
    attributes: tuple[NormalizedAttribute, ...]
    problems: tuple[NormalizationProblem, ...] = ()
    withheld: tuple[NormalizedAttribute, ...] = ()

    def get(self, key: str) -> NormalizedAttribute | None:
        return next((a for a in self.attributes if a.key == key), None)


@dataclass(frozen=True, slots=True)
class ItemClass:
    """A product class a profile declares for the public API's ``class=`` filter (if_product_query example:
    ``class=cls_storage_ssd``). An item belongs to the class when its profile has the declaring profile's name
    (any version) and its attributes satisfy one of ``any_of``: every key of that alternative has one of the
    listed canonical values. The default, one empty alternative, takes every item of the profile."""

    class_id: str
    description: str
    any_of: tuple[Mapping[str, tuple[str, ...]], ...] = field(default_factory=lambda: ({},))


@runtime_checkable
class NormalizationProfile(Protocol):
    """A normalization profile, pinned as ``name@version`` (``np_storage@4``).

    Two optional members serve the public API's queries (``prw_platform.plugins.query``): ``classes``, a tuple
    of ``ItemClass`` (default none), and ``parse_value(key, text) -> NormalizedAttribute | None``, which reads a
    value a user typed for attribute ``key`` (``"1 TB"``) into the canonical form items are stored in (1000 GB),
    or None when it cannot (the filter then compares the text as typed).

    A third optional member decides what is published automatically: ``publication_thresholds``, a mapping of
    attribute key to the confidence a value needs to become part of the listing's offer (default none: every value
    is published). A value under its threshold goes to ``Normalization.withheld``
    (``prw_platform.plugins.confidence.publication_thresholds`` reads the member)."""

    name: str
    version: str
    #: The attribute definitions this profile produces, by key.
    definitions: Mapping[str, AttributeDefinition]
    #: Sets of attribute keys that are each enough to identify an item (``("core:gtin",)``,
    #: ``("core:brand", "core:mpn")``); identity may create an item automatically only when one set is present.
    identity_keys: tuple[tuple[str, ...], ...]

    def normalize(self, claims: Sequence[Claim]) -> Normalization:
        """Normalize claims into attributes that conform to ``definitions``; report what does not as problems."""
        ...


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One registered plugin, as ``prw plugins`` shows it."""

    name: str
    distribution: str | None
    distribution_version: str | None
    kinds: tuple[str, ...]
    pins: tuple[str, ...]
    hooks: tuple[str, ...]
    api_version: int | None = field(default=None)


class PluginError(CodedError):
    """Base of the typed plugin errors. ``code`` is a seed error code where one exists."""

    code = "PLUGIN_ERROR"


class ExtractionError(PluginError):
    code = "EXTRACTION_FAILED"


class UnknownAdapterVersion(PluginError):
    """if_replay_job: 422 UNKNOWN_ADAPTER_VERSION; a pin that is not installed."""

    code = "UNKNOWN_ADAPTER_VERSION"
    status = 422


class UnknownProfileVersion(PluginError):
    code = "UNKNOWN_PROFILE_VERSION"
    status = 422


class PluginApiMismatch(PluginError):
    code = "PLUGIN_API_MISMATCH"


class DuplicatePin(PluginError):
    """Two plugins (or one plugin twice) provide the same ``name@version``; the message names both."""

    code = "DUPLICATE_PIN"


class InvalidPin(PluginError):
    """A plugin offers an adapter or profile whose ``name@version`` is not well formed
    (``pa_<name>@MAJOR.MINOR.PATCH`` for adapters, ``np_<name>@N`` for profiles)."""

    code = "INVALID_PIN"


class InvalidPluginResult(PluginError):
    """A hook returned something that is not what its spec promises (not a list, not an adapter, ...)."""

    code = "INVALID_PLUGIN_RESULT"


class PluginLoadError(PluginError):
    """An entry point of the ``prw`` group could not be imported, or two distributions use the same
    entry-point name; the message names the distribution."""

    code = "PLUGIN_LOAD_FAILED"

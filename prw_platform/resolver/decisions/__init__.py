"""The resolver's decision write path (AW-01): commands, the decision service and identity lookups.

``decide(cmd, db, stream)`` runs one decision in its own READ COMMITTED transaction; ``apply_decision(conn, ...)``
runs it inside a caller's transaction (the resolution consumer commits its inbox row with it).
"""

from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import StreamKey
from prw_platform.resolver.decisions.catalog_decisions import (
    AuthorizeRelease,
    ItemRetired,
    PendingRelease,
    ReleaseAuthorized,
    ReleasePolicyChange,
    RetireItem,
    SetReleasePolicy,
)
from prw_platform.resolver.decisions.commands import (
    Candidate,
    Command,
    CreateItemAndMap,
    DecideCase,
    DecisionResult,
    EventRef,
    ItemFacts,
    ListingObservation,
    MapListing,
    OpenReviewCase,
)
from prw_platform.resolver.decisions.errors import (
    CaseNotFound,
    CatalogNotFound,
    CrossCatalogItems,
    DecisionError,
    IdempotencyConflict,
    IdentifierConflict,
    InvalidMerchantFact,
    InvariantViolation,
    ItemAlreadyRetired,
    ItemExists,
    ItemNotFound,
    ListingNotOnItem,
    MerchantNotFound,
    MergeIntoItself,
    NothingToRelease,
    NothingToSplit,
    SourceNotInCatalog,
    StaleCaseRevision,
)
from prw_platform.resolver.decisions.identity import AmbiguousIdentity, ItemMatch, find_item_by_identifiers
from prw_platform.resolver.decisions.item_merges import ItemsMerged, ItemSplit, MergeItems, SplitItem
from prw_platform.resolver.decisions.merchant_service import MerchantService
from prw_platform.resolver.decisions.merchants import MerchantSpec, ShippingPolicySpec
from prw_platform.resolver.decisions.provenance import DecisionDetail, DecisionEvent
from prw_platform.resolver.decisions.records import DecisionRecord, find_decision_by_key, get_decision
from prw_platform.resolver.decisions.review import (
    REVIEW_ACTIONS,
    InvalidReviewDecision,
    ReviewAction,
    ReviewDecision,
)
from prw_platform.resolver.decisions.service import DecisionService, apply_decision, decide
from prw_platform.resolver.decisions.writer import StreamLocator
from prw_platform.resolver.stream.errors import HistoryEpochFenced, StreamNotOpen, StreamUnavailable

__all__ = [
    "REVIEW_ACTIONS",
    "AmbiguousIdentity",
    "AuthorizeRelease",
    "Candidate",
    "CaseNotFound",
    "CatalogNotFound",
    "Clock",
    "Command",
    "CreateItemAndMap",
    "CrossCatalogItems",
    "DecideCase",
    "DecisionDetail",
    "DecisionError",
    "DecisionEvent",
    "DecisionRecord",
    "DecisionResult",
    "DecisionService",
    "EventRef",
    "HistoryEpochFenced",
    "IdempotencyConflict",
    "IdentifierConflict",
    "InvalidMerchantFact",
    "InvalidReviewDecision",
    "InvariantViolation",
    "ItemAlreadyRetired",
    "ItemExists",
    "ItemFacts",
    "ItemMatch",
    "ItemNotFound",
    "ItemRetired",
    "ItemSplit",
    "ItemsMerged",
    "ListingNotOnItem",
    "ListingObservation",
    "MapListing",
    "MerchantNotFound",
    "MerchantService",
    "MerchantSpec",
    "MergeIntoItself",
    "MergeItems",
    "NothingToRelease",
    "NothingToSplit",
    "OpenReviewCase",
    "PendingRelease",
    "ReleaseAuthorized",
    "ReleasePolicyChange",
    "RetireItem",
    "ReviewAction",
    "ReviewDecision",
    "SetReleasePolicy",
    "ShippingPolicySpec",
    "SourceNotInCatalog",
    "SplitItem",
    "StaleCaseRevision",
    "StreamKey",
    "StreamLocator",
    "StreamNotOpen",
    "StreamUnavailable",
    "apply_decision",
    "decide",
    "find_decision_by_key",
    "find_item_by_identifiers",
    "get_decision",
    "utc_now",
]

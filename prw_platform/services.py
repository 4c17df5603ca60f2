"""The services the composition root builds (``Platform``) and the values an edge parses requests into and
renders responses from. Part of the core's public surface (docs/architecture.md): an edge names these types, it
never reaches into the modules that implement them.
"""

from prw_platform.auth import (
    ClientSpec,
    CollectorAuthService,
    CollectorClients,
    CollectorPrincipal,
    ProvisionedClient,
)
from prw_platform.auth.operators import (
    ROLES,
    Access,
    OpenedSession,
    OperatorIdentity,
    OperatorSession,
    OperatorSessions,
    Role,
)
from prw_platform.auth.scopes import COLLECTOR_SCOPES, EXPORTS_READ, PRODUCT_SCOPES
from prw_platform.auth.tokens import IssuedToken
from prw_platform.fencing import FenceRefused, FenceResult
from prw_platform.operations import AdminReads
from prw_platform.plugins import UnknownAdapterVersion
from prw_platform.product.consumer.driver import ProductApply
from prw_platform.product.public.catalog import DEFAULT_CATALOG_ID, DEFAULT_TENANT_ID, PublicCatalog
from prw_platform.product.public.classes import (
    ClassDetail,
    ClassPage,
    serialize_class,
    serialize_class_page,
)
from prw_platform.product.public.items import (
    DEFAULT_PAGE_SIZE,
    MAX_FACETS,
    MAX_PAGE_SIZE,
    Detail,
    ItemDetail,
    ItemFilters,
    ItemPage,
    Page,
    PublicItem,
    Release,
    SourceSummary,
    serialize_item,
    serialize_page,
    serialize_source,
)
from prw_platform.product.public.merchants import (
    ItemListings,
    MerchantDetail,
    MerchantPage,
    serialize_item_listings,
    serialize_merchant,
    serialize_merchant_page,
)
from prw_platform.product.public.pictures import LinkWindow, PictureBytes, PictureLinks, SignedPictures
from prw_platform.product.public.shipping import (
    MAX_BASKET_LINES,
    BasketLine,
    ShippingEvaluation,
    serialize_evaluation,
)
from prw_platform.product.ratelimit import RateLimiter, TokenBucketLimiter
from prw_platform.product.rebuild import RebuildFailed, RebuildResult
from prw_platform.provisioning import CatalogProvisioning, CatalogSpec, ProvisionedCatalog, SourceSpec
from prw_platform.queues.operations import (
    DeadLetterOperations,
    DeadLetterSummary,
    RedriveRefused,
    UnknownDeadLetter,
    UnknownQueue,
)
from prw_platform.queues.port import DeadLetter
from prw_platform.reports import OperatorReports
from prw_platform.resolver.assist import Advice as LlmAdvice
from prw_platform.resolver.assist import Proposal as LlmProposal
from prw_platform.resolver.decisions import (
    REVIEW_ACTIONS,
    AuthorizeRelease,
    DecisionDetail,
    DecisionEvent,
    DecisionResult,
    DecisionService,
    ItemRetired,
    ItemsMerged,
    ItemSplit,
    MerchantService,
    MerchantSpec,
    MergeItems,
    PendingRelease,
    ReleaseAuthorized,
    ReleasePolicyChange,
    RetireItem,
    ReviewAction,
    ReviewDecision,
    SetReleasePolicy,
    ShippingPolicySpec,
    SplitItem,
)
from prw_platform.resolver.exports.events import MAX_EXPORT_LIMIT, ExportPage, ExportService
from prw_platform.resolver.exports.snapshots import AGGREGATES as EXPORT_AGGREGATES
from prw_platform.resolver.exports.snapshots import ExportSnapshot, ExportView, SnapshotExports
from prw_platform.resolver.files.lifecycle import STATES as FILE_STATES
from prw_platform.resolver.files.service import (
    KEEP,
    CatalogFiles,
    ClassView,
    FileView,
    ItemPictures,
)
from prw_platform.resolver.files.sources import (
    ArtifactSource,
    ExistingFile,
    PictureSource,
    UploadSource,
    UrlSource,
)
from prw_platform.resolver.files.store import CatalogFile
from prw_platform.resolver.improvements import (
    IMPROVEMENT_STATUSES,
    Improvement,
    ImprovementPage,
    InvalidPageCursor,
)
from prw_platform.resolver.improvements.replays import ReplayRequested, ReplayService, ReplayView
from prw_platform.resolver.improvements.service import (
    ImprovementDraft,
    ImprovementService,
    Selection,
)
from prw_platform.resolver.improvements.service import ImprovementView as ImprovementRecord
from prw_platform.resolver.improvements.store import ImprovementStatus
from prw_platform.resolver.intake import (
    CaptureSubmission,
    Egress,
    ExecutionRegion,
    IntakeService,
    PendingJobSweeper,
    Receipt,
    ReceiptStatus,
    TenantReceipt,
    UploadDeclaration,
)
from prw_platform.resolver.intake.fleet import CollectorStatus
from prw_platform.resolver.intake.requests import Heartbeat, Registration, RunReport
from prw_platform.resolver.intake.workers import (
    CollectorService,
    HeartbeatAck,
    Lease,
    LeaseState,
    Registered,
    WorkerPolicy,
)
from prw_platform.resolver.resolution.batch import ResolutionConsumer
from prw_platform.resolver.resolution.dry_run import AUTO, DryRun, DryRunRequest
from prw_platform.resolver.resolution.matching import (
    AutomaticMapping,
    ListingIdentity,
    MatchingBench,
    RankedRecord,
    Record,
)
from prw_platform.resolver.review import (
    Candidate,
    CaseSummary,
    CaseView,
    EvidenceLink,
    EvidenceObject,
    HistoryEntry,
    ReviewCounts,
    ReviewFilters,
    ReviewPage,
    ReviewQueue,
)
from prw_platform.resolver.stream.relay import Relay
from prw_platform.resolver.stream.retention import PruneReport, RetentionStatus

__all__ = [
    "AUTO",
    "COLLECTOR_SCOPES",
    "DEFAULT_CATALOG_ID",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_TENANT_ID",
    "EXPORTS_READ",
    "EXPORT_AGGREGATES",
    "FILE_STATES",
    "IMPROVEMENT_STATUSES",
    "KEEP",
    "MAX_BASKET_LINES",
    "MAX_EXPORT_LIMIT",
    "MAX_FACETS",
    "MAX_PAGE_SIZE",
    "PRODUCT_SCOPES",
    "REVIEW_ACTIONS",
    "ROLES",
    "Access",
    "AdminReads",
    "ArtifactSource",
    "AuthorizeRelease",
    "AutomaticMapping",
    "BasketLine",
    "Candidate",
    "CaptureSubmission",
    "CaseSummary",
    "CaseView",
    "CatalogFile",
    "CatalogFiles",
    "CatalogProvisioning",
    "CatalogSpec",
    "ClassDetail",
    "ClassPage",
    "ClassView",
    "ClientSpec",
    "CollectorAuthService",
    "CollectorClients",
    "CollectorPrincipal",
    "CollectorService",
    "CollectorStatus",
    "DeadLetter",
    "DeadLetterOperations",
    "DeadLetterSummary",
    "DecisionDetail",
    "DecisionEvent",
    "DecisionResult",
    "DecisionService",
    "Detail",
    "DryRun",
    "DryRunRequest",
    "Egress",
    "EvidenceLink",
    "EvidenceObject",
    "ExecutionRegion",
    "ExistingFile",
    "ExportPage",
    "ExportService",
    "ExportSnapshot",
    "ExportView",
    "FenceRefused",
    "FenceResult",
    "FileView",
    "Heartbeat",
    "HeartbeatAck",
    "HistoryEntry",
    "Improvement",
    "ImprovementDraft",
    "ImprovementPage",
    "ImprovementRecord",
    "ImprovementService",
    "ImprovementStatus",
    "IntakeService",
    "InvalidPageCursor",
    "IssuedToken",
    "ItemDetail",
    "ItemFilters",
    "ItemListings",
    "ItemPage",
    "ItemPictures",
    "ItemRetired",
    "ItemSplit",
    "ItemsMerged",
    "Lease",
    "LeaseState",
    "LinkWindow",
    "ListingIdentity",
    "LlmAdvice",
    "LlmProposal",
    "MatchingBench",
    "MerchantDetail",
    "MerchantPage",
    "MerchantService",
    "MerchantSpec",
    "MergeItems",
    "OpenedSession",
    "OperatorIdentity",
    "OperatorReports",
    "OperatorSession",
    "OperatorSessions",
    "Page",
    "PendingJobSweeper",
    "PendingRelease",
    "PictureBytes",
    "PictureLinks",
    "PictureSource",
    "ProductApply",
    "ProvisionedCatalog",
    "ProvisionedClient",
    "PruneReport",
    "PublicCatalog",
    "PublicItem",
    "RankedRecord",
    "RateLimiter",
    "RebuildFailed",
    "RebuildResult",
    "Receipt",
    "ReceiptStatus",
    "Record",
    "RedriveRefused",
    "Registered",
    "Registration",
    "Relay",
    "Release",
    "ReleaseAuthorized",
    "ReleasePolicyChange",
    "ReplayRequested",
    "ReplayService",
    "ReplayView",
    "ResolutionConsumer",
    "RetentionStatus",
    "RetireItem",
    "ReviewAction",
    "ReviewCounts",
    "ReviewDecision",
    "ReviewFilters",
    "ReviewPage",
    "ReviewQueue",
    "Role",
    "RunReport",
    "Selection",
    "SetReleasePolicy",
    "ShippingEvaluation",
    "ShippingPolicySpec",
    "SignedPictures",
    "SnapshotExports",
    "SourceSpec",
    "SourceSummary",
    "SplitItem",
    "TenantReceipt",
    "TokenBucketLimiter",
    "UnknownAdapterVersion",
    "UnknownDeadLetter",
    "UnknownQueue",
    "UploadDeclaration",
    "UploadSource",
    "UrlSource",
    "WorkerPolicy",
    "serialize_class",
    "serialize_class_page",
    "serialize_evaluation",
    "serialize_item",
    "serialize_item_listings",
    "serialize_merchant",
    "serialize_merchant_page",
    "serialize_page",
    "serialize_source",
]

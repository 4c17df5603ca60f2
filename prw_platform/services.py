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
from prw_platform.product.catalog import DEFAULT_CATALOG_ID, DEFAULT_TENANT_ID, PublicCatalog
from prw_platform.product.consumer.driver import ProductApply
from prw_platform.product.merchant_queries import (
    ItemListings,
    MerchantDetail,
    MerchantPage,
    serialize_item_listings,
    serialize_merchant,
    serialize_merchant_page,
)
from prw_platform.product.queries import (
    DEFAULT_PAGE_SIZE,
    MAX_FACETS,
    MAX_PAGE_SIZE,
    ItemDetail,
    ItemFilters,
    ItemPage,
    PublicItem,
    Release,
    SourceSummary,
    serialize_item,
    serialize_page,
    serialize_source,
)
from prw_platform.product.ratelimit import RateLimiter, TokenBucketLimiter
from prw_platform.product.shipping import (
    MAX_BASKET_LINES,
    BasketLine,
    ShippingEvaluation,
    serialize_evaluation,
)
from prw_platform.provisioning import CatalogProvisioning, CatalogSpec, ProvisionedCatalog, SourceSpec
from prw_platform.reports import OperatorReports
from prw_platform.resolver.decisions import (
    REVIEW_ACTIONS,
    DecisionResult,
    DecisionService,
    MerchantService,
    MerchantSpec,
    ReviewAction,
    ReviewDecision,
    ShippingPolicySpec,
)
from prw_platform.resolver.exports import MAX_EXPORT_LIMIT, ExportPage, ExportService
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
from prw_platform.resolver.intake.requests import Heartbeat, Registration, RunReport
from prw_platform.resolver.intake.workers import (
    CollectorService,
    HeartbeatAck,
    Lease,
    LeaseState,
    Registered,
    WorkerPolicy,
)
from prw_platform.resolver.relay import Relay
from prw_platform.resolver.resolution.batch import ResolutionConsumer

__all__ = [
    "COLLECTOR_SCOPES",
    "DEFAULT_CATALOG_ID",
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_TENANT_ID",
    "EXPORTS_READ",
    "MAX_BASKET_LINES",
    "MAX_EXPORT_LIMIT",
    "MAX_FACETS",
    "MAX_PAGE_SIZE",
    "PRODUCT_SCOPES",
    "REVIEW_ACTIONS",
    "ROLES",
    "Access",
    "BasketLine",
    "CaptureSubmission",
    "CatalogProvisioning",
    "CatalogSpec",
    "ClientSpec",
    "CollectorAuthService",
    "CollectorClients",
    "CollectorPrincipal",
    "CollectorService",
    "DecisionResult",
    "DecisionService",
    "Egress",
    "ExecutionRegion",
    "ExportPage",
    "ExportService",
    "Heartbeat",
    "HeartbeatAck",
    "IntakeService",
    "IssuedToken",
    "ItemDetail",
    "ItemFilters",
    "ItemListings",
    "ItemPage",
    "Lease",
    "LeaseState",
    "MerchantDetail",
    "MerchantPage",
    "MerchantService",
    "MerchantSpec",
    "OpenedSession",
    "OperatorIdentity",
    "OperatorReports",
    "OperatorSession",
    "OperatorSessions",
    "PendingJobSweeper",
    "ProductApply",
    "ProvisionedCatalog",
    "ProvisionedClient",
    "PublicCatalog",
    "PublicItem",
    "RateLimiter",
    "Receipt",
    "ReceiptStatus",
    "Registered",
    "Registration",
    "Relay",
    "Release",
    "ResolutionConsumer",
    "ReviewAction",
    "ReviewDecision",
    "Role",
    "RunReport",
    "ShippingEvaluation",
    "ShippingPolicySpec",
    "SourceSpec",
    "SourceSummary",
    "TenantReceipt",
    "TokenBucketLimiter",
    "UploadDeclaration",
    "WorkerPolicy",
    "serialize_evaluation",
    "serialize_item",
    "serialize_item_listings",
    "serialize_merchant",
    "serialize_merchant_page",
    "serialize_page",
    "serialize_source",
]

"""The contracts shared by the resolver and the product side: the queue message models, the accepted-change
payload models and vocabulary, and their JSON Schemas.

ARCHITECTURE.md: "The two sides share only the event contract (schemas/*.json and the pydantic models generated
from or checked against them) and the queue." Both ``prw_platform.resolver`` and ``prw_platform.product`` import
from here. ``schemas/product.accepted-change.v1.json`` and the tables of docs/events.md are generated from
``payloads.py`` and ``vocabulary.py`` by ``python -m prw_platform.contracts.generate``.
"""

from prw_platform.contracts.messages import (
    ACCEPTED_CHANGE_SCHEMA_VERSION,
    RESOLUTION_JOB_SCHEMA_VERSION,
    AcceptedChange,
    AggregateRevision,
    ArtifactRef,
    JobPins,
    ResolutionJob,
)
from prw_platform.contracts.payloads import (
    EventPayload,
    Identifiers,
    ItemAttribute,
    ItemFields,
    ItemPayload,
    ListingPayload,
    MappingPayload,
    MerchantPayload,
    MerchantSourcePayload,
    ReleasedItem,
    ReleasedListing,
    ReleasedMerchant,
    ReleasedMerchantSource,
    ReleasedShippingPolicy,
    ReleasePayload,
    RetiredItem,
    ShippingPolicyPayload,
    ShippingRate,
    decimal_string,
    utc_timestamp,
)
from prw_platform.contracts.schemas import SchemaViolation, load_schema, validate
from prw_platform.contracts.vocabulary import (
    CATALOG_ITEM,
    LISTING,
    LISTING_MAPPING,
    MERCHANT,
    MERCHANT_SOURCE,
    RELEASE,
    SHIPPING_POLICY,
    VOCABULARY,
    EventType,
    Revisions,
)

__all__ = [
    "ACCEPTED_CHANGE_SCHEMA_VERSION",
    "CATALOG_ITEM",
    "LISTING",
    "LISTING_MAPPING",
    "MERCHANT",
    "MERCHANT_SOURCE",
    "RELEASE",
    "RESOLUTION_JOB_SCHEMA_VERSION",
    "SHIPPING_POLICY",
    "VOCABULARY",
    "AcceptedChange",
    "AggregateRevision",
    "ArtifactRef",
    "EventPayload",
    "EventType",
    "Identifiers",
    "ItemAttribute",
    "ItemFields",
    "ItemPayload",
    "JobPins",
    "ListingPayload",
    "MappingPayload",
    "MerchantPayload",
    "MerchantSourcePayload",
    "ReleasePayload",
    "ReleasedItem",
    "ReleasedListing",
    "ReleasedMerchant",
    "ReleasedMerchantSource",
    "ReleasedShippingPolicy",
    "ResolutionJob",
    "RetiredItem",
    "Revisions",
    "SchemaViolation",
    "ShippingPolicyPayload",
    "ShippingRate",
    "decimal_string",
    "load_schema",
    "utc_timestamp",
    "validate",
]

"""The contracts shared by the resolver and the product side: the queue message models and their JSON Schemas.

ARCHITECTURE.md: "The two sides share only the event contract (schemas/*.json and the pydantic models checked
against them) and the queue." Both ``prw_platform.resolver`` and ``prw_platform.product`` import from here.
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
from prw_platform.contracts.schemas import SchemaViolation, load_schema, validate

__all__ = [
    "ACCEPTED_CHANGE_SCHEMA_VERSION",
    "RESOLUTION_JOB_SCHEMA_VERSION",
    "AcceptedChange",
    "AggregateRevision",
    "ArtifactRef",
    "JobPins",
    "ResolutionJob",
    "SchemaViolation",
    "load_schema",
    "validate",
]

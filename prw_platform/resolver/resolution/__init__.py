"""The resolution job consumer (if_resolution_job): a stored capture becomes claims, normalized attributes and
an identity decision or a review case. docs/operators/resolution.md is the operator's guide.

``handle_resolution_job(services, message)`` handles one message body; ``process_resolution_jobs(queue, services)``
receives a batch and settles each delivery after its transaction committed.
"""

from prw_platform.resolver.decisions import StreamLocator
from prw_platform.resolver.resolution.batch import BatchReport, process_resolution_jobs
from prw_platform.resolver.resolution.consumer import handle_resolution_job
from prw_platform.resolver.resolution.identity import (
    RULE_CREATE,
    RULE_MAP,
    RULE_REVIEW,
    idempotency_key,
)
from prw_platform.resolver.resolution.outcomes import (
    CAPTURE_WITHOUT_ARTIFACTS,
    DEAD_LETTERED,
    DIGEST_MISMATCH,
    IGNORED_DUPLICATE,
    INTERNAL_ERROR,
    PREVIOUS_STAGE_MISSING,
    RETRY_LATER,
    REVIEW_CASE_OPENED,
    SCHEMA_INVALID,
    STAGE_COMPLETED,
    TENANT_MISMATCH,
    UNKNOWN_ADAPTER_VERSION,
    UNKNOWN_PROFILE_VERSION,
    Disposition,
    JobRejected,
    Outcome,
)
from prw_platform.resolver.resolution.profiles import ProfilePolicy
from prw_platform.resolver.resolution.services import (
    CONSUMER,
    ResolutionServices,
)
from prw_platform.retry import RetryPolicy

__all__ = [
    "CAPTURE_WITHOUT_ARTIFACTS",
    "CONSUMER",
    "DEAD_LETTERED",
    "DIGEST_MISMATCH",
    "IGNORED_DUPLICATE",
    "INTERNAL_ERROR",
    "PREVIOUS_STAGE_MISSING",
    "RETRY_LATER",
    "REVIEW_CASE_OPENED",
    "RULE_CREATE",
    "RULE_MAP",
    "RULE_REVIEW",
    "SCHEMA_INVALID",
    "STAGE_COMPLETED",
    "TENANT_MISMATCH",
    "UNKNOWN_ADAPTER_VERSION",
    "UNKNOWN_PROFILE_VERSION",
    "BatchReport",
    "Disposition",
    "JobRejected",
    "Outcome",
    "ProfilePolicy",
    "ResolutionServices",
    "RetryPolicy",
    "StreamLocator",
    "handle_resolution_job",
    "idempotency_key",
    "process_resolution_jobs",
]

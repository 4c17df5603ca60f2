"""Capture intake (AW-02): collector registration and heartbeats, artifact uploads, capture submission, receipts,
and the pending-job sweeper.

No web framework here: ``prw_api`` authenticates, parses and renders; these functions decide and persist.
"""

from prw_platform.resolver.intake.captures import SubmittedCapture, submit_capture
from prw_platform.resolver.intake.context import EpochSource, IntakeContext
from prw_platform.resolver.intake.errors import (
    ArtifactNotStored,
    ArtifactTooLarge,
    AttributionDenied,
    DigestMismatch,
    IdempotencyConflict,
    InstanceScopeDenied,
    IntakeError,
    IntakeUnavailable,
    NotFound,
    SourceScopeDenied,
    TenantScopeDenied,
    ValidationFailed,
)
from prw_platform.resolver.intake.jobs import (
    SWEEPER_ROLE,
    JobEnqueuer,
    PendingJobSweeper,
    QueueJobEnqueuer,
    SweepReport,
    sweep_pending_jobs,
)
from prw_platform.resolver.intake.limits import IntakeLimits
from prw_platform.resolver.intake.receipts import Receipt, ReceiptStatus, TenantReceipt, get_receipt
from prw_platform.resolver.intake.requests import (
    ArtifactSelector,
    CaptureSubmission,
    Egress,
    ExecutionRegion,
    UploadDeclaration,
)
from prw_platform.resolver.intake.service import IntakeService, control_plane_epochs
from prw_platform.resolver.intake.settings import IntakeSettings
from prw_platform.resolver.intake.uploads import DeclaredUpload, StoredUpload, UploadBody, UploadTarget
from prw_platform.resolver.intake.workers import CollectorService, LeaseState, WorkerPolicy

__all__ = [
    "SWEEPER_ROLE",
    "ArtifactNotStored",
    "ArtifactSelector",
    "ArtifactTooLarge",
    "AttributionDenied",
    "CaptureSubmission",
    "CollectorService",
    "DeclaredUpload",
    "DigestMismatch",
    "Egress",
    "EpochSource",
    "ExecutionRegion",
    "IdempotencyConflict",
    "InstanceScopeDenied",
    "IntakeContext",
    "IntakeError",
    "IntakeLimits",
    "IntakeService",
    "IntakeSettings",
    "IntakeUnavailable",
    "JobEnqueuer",
    "LeaseState",
    "NotFound",
    "PendingJobSweeper",
    "QueueJobEnqueuer",
    "Receipt",
    "ReceiptStatus",
    "SourceScopeDenied",
    "StoredUpload",
    "SubmittedCapture",
    "SweepReport",
    "TenantReceipt",
    "TenantScopeDenied",
    "UploadBody",
    "UploadDeclaration",
    "UploadTarget",
    "ValidationFailed",
    "WorkerPolicy",
    "control_plane_epochs",
    "get_receipt",
    "submit_capture",
    "sweep_pending_jobs",
]

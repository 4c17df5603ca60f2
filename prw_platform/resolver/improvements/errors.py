"""Errors of the improvement lifecycle, each with the status and code the admin origin answers."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class ImprovementError(CodedError):
    code = "VALIDATION_FAILED"
    status = 422


class ImprovementNotFound(ImprovementError):
    """404 NOT_FOUND: no such improvement in the active tenant (another tenant's is unknown, INV-06)."""

    code = "NOT_FOUND"
    status = 404


class InvalidImprovementTransition(ImprovementError):
    """409 INVALID_TRANSITION: draft → reviewer_approved → applied, or draft / reviewer_approved → abandoned;
    nothing else."""

    code = "INVALID_TRANSITION"
    status = 409


class SelfApproval(ImprovementError):
    """403 FORBIDDEN: the author of an improvement cannot approve it (a second pair of eyes)."""

    code = "FORBIDDEN"
    status = 403


class ImprovementIdempotencyConflict(ImprovementError):
    """409 IDEMPOTENCY_CONFLICT: the Idempotency-Key created another improvement."""

    code = "IDEMPOTENCY_CONFLICT"
    status = 409


class EmptySelection(ImprovementError):
    """422 VALIDATION_FAILED: the selection matches no stored capture of the catalog."""


class UnknownCatalog(ImprovementError):
    code = "NOT_FOUND"
    status = 404


class ReplayForbidden(ImprovementError):
    """if_replay_job Authorization: "mode=apply needs a reviewer-approved improvement" (403 FORBIDDEN)."""

    code = "FORBIDDEN"
    status = 403


class ReplayInProgress(ImprovementError):
    """409 REPLAY_IN_PROGRESS: "Same improvement+pins already running"."""

    code = "REPLAY_IN_PROGRESS"
    status = 409


class UnknownDefinitionVersion(ImprovementError):
    """422 UNKNOWN_DEFINITION_VERSION: a pinned attribute definition version that the pinned profile does not
    define (definitions are versioned inside a profile: ``np_storage@4`` carries ``storage:capacity`` at 2)."""

    code = "UNKNOWN_DEFINITION_VERSION"
    status = 422


class UnknownIdentityGeneration(ImprovementError):
    """422 UNKNOWN_IDENTITY_GENERATION: the catalog has no such identity generation (``prw identity calibrate``
    proposes them; 1 is the installed rules' own)."""

    code = "UNKNOWN_IDENTITY_GENERATION"

"""Intake errors with the seed's codes verbatim (if_artifact_upload, if_capture_submit, if_receipt_get,
if_collector_bootstrap, if_heartbeat)."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class IntakeError(CodedError):
    code = "INTAKE_ERROR"
    status = 400


class ValidationFailed(IntakeError):
    """if_capture_submit: 422 VALIDATION_FAILED, do not retry. Nothing persisted."""

    code = "VALIDATION_FAILED"
    status = 422


class ArtifactNotStored(IntakeError):
    """if_artifact_upload: a capture citing an unstored ref gets 422 ARTIFACT_NOT_STORED."""

    code = "ARTIFACT_NOT_STORED"
    status = 422


class ArtifactTooLarge(IntakeError):
    """if_artifact_upload: 413 ARTIFACT_TOO_LARGE, do not retry. Above the configured limit."""

    code = "ARTIFACT_TOO_LARGE"
    status = 413


class DigestMismatch(IntakeError):
    """if_artifact_upload: 422 DIGEST_MISMATCH, not retryable without re-reading the source bytes."""

    code = "DIGEST_MISMATCH"
    status = 422


class IdempotencyConflict(IntakeError):
    """if_capture_submit: same Idempotency-Key, different body: 409, nothing persisted."""

    code = "IDEMPOTENCY_CONFLICT"
    status = 409


class TenantScopeDenied(IntakeError):
    code = "TENANT_SCOPE_DENIED"
    status = 403


class SourceScopeDenied(IntakeError):
    code = "SOURCE_SCOPE_DENIED"
    status = 403


class AttributionDenied(IntakeError):
    """Missing source selector, or a supplied worker/instance that is not the token's."""

    code = "ATTRIBUTION_DENIED"
    status = 403


class InstanceScopeDenied(IntakeError):
    """Another stable instance owns the upload or the receipt."""

    code = "INSTANCE_SCOPE_DENIED"
    status = 403


class NotFound(IntakeError):
    code = "NOT_FOUND"
    status = 404


class UnknownInstance(IntakeError):
    """if_heartbeat: 404 UNKNOWN_INSTANCE, do not retry. "Register first"."""

    code = "UNKNOWN_INSTANCE"
    status = 404


class IntakeUnavailable(IntakeError):
    """The catalog's stream is not provisioned (no current history epoch): retry once an operator fixed it."""

    code = "UNAVAILABLE"
    status = 503
    retryable = True

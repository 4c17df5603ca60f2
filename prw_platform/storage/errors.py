"""Object storage errors with the seed's codes (if_object_storage, if_artifact_upload)."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class StorageError(CodedError):
    code = "STORAGE_ERROR"


class StorageUnavailable(StorageError):
    """if_object_storage: 503 STORAGE_UNAVAILABLE, retry with the same digest and metadata (a put is idempotent
    by its content-addressed key)."""

    code = "STORAGE_UNAVAILABLE"
    status = 503
    retryable = True


class ImmutableMetadataConflict(StorageError):
    """if_object_storage: 409 IMMUTABLE_METADATA_CONFLICT, do not retry; never overwrite or reinterpret the
    bytes already stored under the key (INV-05)."""

    code = "IMMUTABLE_METADATA_CONFLICT"
    status = 409


class DigestMismatch(StorageError):
    """if_artifact_upload: 422 DIGEST_MISMATCH, not retryable without re-reading the source bytes.

    Also raised by a verifying read when the stored bytes no longer hash to their digest (corruption)."""

    code = "DIGEST_MISMATCH"
    status = 422


class ObjectNotFound(StorageError):
    code = "OBJECT_NOT_FOUND"
    status = 404


class InvalidObjectKey(StorageError, ValueError):
    """A bucket, tenant id, digest or ``r2://`` ref that cannot name an object (path traversal, bad hex)."""

    code = "INVALID_OBJECT_KEY"
    status = 422


class InvalidMediaType(StorageError, ValueError):
    code = "INVALID_MEDIA_TYPE"
    status = 422


class TenantScopeDenied(StorageError):
    """if_object_storage: "Reads check that the object's tenant prefix equals the caller's tenant" (INV-06)."""

    code = "TENANT_SCOPE_DENIED"
    status = 403


class ObjectImmutable(StorageError):
    """INV-05: stored evidence is immutable; ``delete`` refuses keys in a protected (evidence) bucket."""

    code = "OBJECT_IMMUTABLE"
    status = 409

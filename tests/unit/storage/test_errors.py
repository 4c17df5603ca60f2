"""The error table of if_object_storage and if_artifact_upload: code, HTTP status and retry advice verbatim."""

from __future__ import annotations

import pytest

from prw_platform.storage import (
    DigestMismatch,
    ImmutableMetadataConflict,
    InvalidMediaType,
    InvalidObjectKey,
    ObjectImmutable,
    ObjectNotFound,
    StorageError,
    StorageUnavailable,
    TenantScopeDenied,
)


@pytest.mark.parametrize(
    ("error", "code", "status", "retryable"),
    [
        (ImmutableMetadataConflict, "IMMUTABLE_METADATA_CONFLICT", 409, False),
        (StorageUnavailable, "STORAGE_UNAVAILABLE", 503, True),
        (DigestMismatch, "DIGEST_MISMATCH", 422, False),
        (TenantScopeDenied, "TENANT_SCOPE_DENIED", 403, False),
        (ObjectNotFound, "OBJECT_NOT_FOUND", 404, False),
        (InvalidObjectKey, "INVALID_OBJECT_KEY", 422, False),
        (InvalidMediaType, "INVALID_MEDIA_TYPE", 422, False),
        (ObjectImmutable, "OBJECT_IMMUTABLE", 409, False),
    ],
)
def test_storage_errors_carry_the_seed_code_status_and_retry_advice(
    error: type[StorageError], code: str, status: int, retryable: bool
) -> None:
    raised = error("message")

    assert isinstance(raised, StorageError)
    assert (raised.code, raised.status, raised.retryable) == (code, status, retryable)


def test_validation_errors_are_value_errors() -> None:
    assert issubclass(InvalidObjectKey, ValueError)
    assert issubclass(InvalidMediaType, ValueError)

"""The ObjectStore port (if_object_storage) and the values it exchanges.

Semantics every backend keeps (the shared contract suite in ``tests/integration/storage`` checks them):

* ``put_if_absent`` atomically commits bytes and immutable metadata (sha256, size, media_type) together.
  Repeating it with the same digest, size and media type is success with ``stored=False`` ("already stored");
  anything else under that key is ``ImmutableMetadataConflict`` (409) and the stored object is left untouched.
* Before anything is written, the key must end in ``sha256`` and the bytes must hash to it, else
  ``DigestMismatch`` (422) and nothing persists.
* ``get`` returns the whole object (the seed: "streaming/ranged reads need a separate future port").
* ``delete`` exists for export objects and retention only. Evidence is immutable (INV-05): callers never delete
  evidence, and the stores built by ``build_object_store`` refuse to (``ObjectImmutable``).
* A backend that cannot be reached raises ``StorageUnavailable`` (503, retryable).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from prw_platform.storage.errors import DigestMismatch, ObjectImmutable
from prw_platform.storage.keys import ObjectKey, validate_media_type, validate_sha256

#: S3 refuses presigned URLs valid for longer than seven days.
MAX_PRESIGN_TTL = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class PutResult:
    #: True only for the call that created the object; False means "already stored" (same metadata).
    stored: bool
    etag: str
    size: int


@dataclass(frozen=True, slots=True)
class ObjectMetadata:
    sha256: str
    size: int
    media_type: str
    etag: str


@dataclass(frozen=True, slots=True)
class StoredObject:
    data: bytes
    sha256: str
    size: int
    media_type: str
    etag: str


@dataclass(frozen=True, slots=True)
class PresignedPut:
    """An upload capability for one key and one content length (if_artifact_upload).

    The uploader must send exactly ``headers`` (they are part of the signature) with the PUT."""

    url: str
    method: str
    headers: dict[str, str]
    expires_at: datetime


class ObjectStore(Protocol):
    def put_if_absent(self, key: ObjectKey, data: bytes, sha256: str, media_type: str) -> PutResult: ...

    def get(self, key: ObjectKey, *, verify: bool = False) -> StoredObject: ...

    def head(self, key: ObjectKey) -> ObjectMetadata: ...

    def exists(self, key: ObjectKey) -> bool: ...

    def delete(self, key: ObjectKey) -> None:
        """Remove an export object; idempotent (a missing object is not an error). Never for evidence."""
        ...

    def presign_put(
        self, key: ObjectKey, sha256: str, size: int, media_type: str, ttl: timedelta
    ) -> PresignedPut | None:
        """A presigned PUT target, or None when the backend cannot presign (the filesystem store)."""
        ...


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_declared_digest(key: ObjectKey, sha256: str) -> None:
    """The key must end in the declared digest: content addressing is what makes a put idempotent."""
    validate_sha256(sha256)
    if key.sha256 != sha256:
        raise DigestMismatch(f"key {key} does not end in the declared sha256 {sha256}")


def check_put(key: ObjectKey, data: bytes, sha256: str, media_type: str) -> None:
    """if_artifact_upload: "Verify the digest before marking stored". Runs before a backend writes anything."""
    check_declared_digest(key, sha256)
    validate_media_type(media_type)
    actual = sha256_hex(data)
    if actual != sha256:
        raise DigestMismatch(f"bytes hash to {actual}, not the declared sha256 {sha256}")


def check_presign(key: ObjectKey, sha256: str, size: int, media_type: str, ttl: timedelta) -> None:
    check_declared_digest(key, sha256)
    validate_media_type(media_type)
    if size < 0:
        raise ValueError(f"size must not be negative, got {size}")
    if not timedelta(0) < ttl <= MAX_PRESIGN_TTL:
        raise ValueError(f"presign ttl must be within (0, {MAX_PRESIGN_TTL}], got {ttl}")


def check_deletable(key: ObjectKey, protected_buckets: frozenset[str]) -> None:
    if key.bucket in protected_buckets:
        raise ObjectImmutable(f"{key} is in the immutable bucket {key.bucket!r} (INV-05)")


def conflict_reason(
    existing: ObjectMetadata, sha256: str, size: int, media_type: str, *, key: ObjectKey
) -> str | None:
    """Why a stored object cannot be the one being put again, or None when digest, size and type agree."""
    if existing.sha256 != sha256 or existing.size != size:
        return f"{key} holds sha256={existing.sha256} size={existing.size}, not sha256={sha256} size={size}"
    if existing.media_type != media_type:
        return f"{key} is stored as {existing.media_type!r}, not {media_type!r}"
    return None

"""The ObjectStore port (if_object_storage) and its two backends: filesystem (embedded default) and S3.

``build_object_store(settings)`` is the one place a backend is chosen; nothing connects at import time. The S3
backend (and boto3, slow to import: bench/README.md) loads only when it is asked for, so the embedded default
starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from prw_platform.config import Settings
from prw_platform.storage.errors import (
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
from prw_platform.storage.filesystem import FilesystemObjectStore
from prw_platform.storage.keys import (
    EVIDENCE_BUCKET,
    EXPORTS_BUCKET,
    ObjectKey,
    evidence_key,
    export_key,
    format_ref,
    parse_ref,
    parse_tenant_ref,
)
from prw_platform.storage.port import ObjectMetadata, ObjectStore, PresignedPut, PutResult, StoredObject

if TYPE_CHECKING:
    from prw_platform.storage.s3 import S3ObjectStore, build_s3_client

_LAZY_S3_NAMES = frozenset({"S3ObjectStore", "build_s3_client"})

__all__ = [
    "EVIDENCE_BUCKET",
    "EXPORTS_BUCKET",
    "DigestMismatch",
    "FilesystemObjectStore",
    "ImmutableMetadataConflict",
    "InvalidMediaType",
    "InvalidObjectKey",
    "ObjectImmutable",
    "ObjectKey",
    "ObjectMetadata",
    "ObjectNotFound",
    "ObjectStore",
    "PresignedPut",
    "PutResult",
    "S3ObjectStore",
    "StorageError",
    "StorageUnavailable",
    "StoredObject",
    "TenantScopeDenied",
    "build_object_store",
    "build_s3_client",
    "evidence_key",
    "export_key",
    "format_ref",
    "parse_ref",
    "parse_tenant_ref",
]


def build_object_store(settings: Settings) -> ObjectStore:
    # INV-05: evidence is immutable, so the evidence bucket is protected from ``delete``.
    protected = frozenset({settings.evidence_bucket})
    if settings.object_store == "s3":
        from prw_platform.storage.s3 import S3ObjectStore, build_s3_client

        return S3ObjectStore(build_s3_client(settings.s3), protected_buckets=protected)
    return FilesystemObjectStore(settings.object_store_root, protected_buckets=protected)


def __getattr__(name: str) -> object:
    if name in _LAZY_S3_NAMES:
        return getattr(importlib.import_module("prw_platform.storage.s3"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

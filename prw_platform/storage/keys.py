"""Content-addressed object keys: ``<bucket>/<tenant>/<sha256>`` and their ``r2://`` ref form.

if_artifact_upload / if_object_storage: "Object keys are derived from authenticated tenant + digest" and
"Identical bytes in different tenants remain different objects" (INV-06). A key is therefore never taken from a
client: callers build it with ``evidence_key(tenant_id, sha256)`` from the authenticated tenant, and every part is
validated here so that no key can escape its bucket/tenant directory on a filesystem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prw_platform.inputs import InvalidInput, check_media_type
from prw_platform.storage.errors import InvalidMediaType, InvalidObjectKey, TenantScopeDenied

#: R2 bucket names of the seed (if_object_storage: "evidence-private, exports-private (PROP name)").
EVIDENCE_BUCKET = "evidence-private"
EXPORTS_BUCKET = "exports-private"

REF_SCHEME = "r2://"

_SHA256 = re.compile(r"[0-9a-f]{64}")
# S3/R2 bucket naming rules, which also make a safe directory name.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
# A tenant id is one path segment: no "/", no "..", no leading dot (temp files start with a dot).
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def validate_sha256(sha256: str) -> str:
    if not _SHA256.fullmatch(sha256):
        raise InvalidObjectKey(f"sha256 must be 64 lowercase hex characters, got {sha256!r}")
    return sha256


def validate_tenant_id(tenant_id: str) -> str:
    if not _TENANT.fullmatch(tenant_id) or ".." in tenant_id:
        raise InvalidObjectKey(f"tenant id {tenant_id!r} is not a single safe path segment")
    return tenant_id


def validate_bucket(bucket: str) -> str:
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise InvalidObjectKey(f"bucket {bucket!r} is not a valid bucket name")
    return bucket


def validate_media_type(media_type: str) -> str:
    """RFC 9110 ``type/subtype`` with optional parameters, printable US-ASCII only, because S3 user metadata must
    be ASCII and the filesystem envelope header is one line (``prw_platform.inputs.media_types``)."""
    try:
        return check_media_type(media_type)
    except InvalidInput as error:
        raise InvalidMediaType(str(error)) from error


@dataclass(frozen=True, slots=True)
class ObjectKey:
    """One immutable object: ``<bucket>/<tenant>/<sha256>``. Construction validates every part."""

    bucket: str
    tenant_id: str
    sha256: str

    def __post_init__(self) -> None:
        validate_bucket(self.bucket)
        validate_tenant_id(self.tenant_id)
        validate_sha256(self.sha256)

    @property
    def path(self) -> str:
        """``<bucket>/<tenant>/<sha256>``, the ``key`` of the seed's putIfAbsent example."""
        return f"{self.bucket}/{self.tenant_id}/{self.sha256}"

    @property
    def object_name(self) -> str:
        """The name inside the bucket: ``<tenant>/<sha256>`` (the S3 ``Key``)."""
        return f"{self.tenant_id}/{self.sha256}"

    @property
    def ref(self) -> str:
        return format_ref(self)

    def __str__(self) -> str:
        return self.path


def evidence_key(tenant_id: str, sha256: str, *, bucket: str = EVIDENCE_BUCKET) -> ObjectKey:
    """The key of a collector artifact, derived server-side from the authenticated tenant and the digest."""
    return ObjectKey(bucket=bucket, tenant_id=tenant_id, sha256=sha256)


def export_key(tenant_id: str, sha256: str, *, bucket: str = EXPORTS_BUCKET) -> ObjectKey:
    """The key of a checksummed snapshot export object (if_object_storage: the export job writes these)."""
    return ObjectKey(bucket=bucket, tenant_id=tenant_id, sha256=sha256)


def format_ref(key: ObjectKey) -> str:
    """``r2://<bucket>/<tenant>/<sha256>``, the form if_artifact_upload and resolution.job carry."""
    return f"{REF_SCHEME}{key.path}"


def parse_ref(ref: str) -> ObjectKey:
    if not ref.startswith(REF_SCHEME):
        raise InvalidObjectKey(f"object ref {ref!r} does not start with {REF_SCHEME}")
    parts = ref[len(REF_SCHEME) :].split("/")
    if len(parts) != 3:
        raise InvalidObjectKey(f"object ref {ref!r} is not r2://<bucket>/<tenant>/<sha256>")
    bucket, tenant_id, sha256 = parts
    return ObjectKey(bucket=bucket, tenant_id=tenant_id, sha256=sha256)


def parse_tenant_ref(ref: str, tenant_id: str) -> ObjectKey:
    """Parse a ref a caller presents and check it is in the caller's tenant.

    if_object_storage: "Reads check that the object's tenant prefix equals the caller's tenant" (INV-06)."""
    key = parse_ref(ref)
    if key.tenant_id != tenant_id:
        raise TenantScopeDenied(f"object ref {ref!r} is outside tenant {tenant_id!r}")
    return key

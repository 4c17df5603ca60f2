"""Artifact upload (if_artifact_upload): declare, then receive the bytes streamed through the resolver, or let
the collector PUT them to a presigned URL.

AW-02 "Put artifact: content-addressed, put-if-absent in the evidence bucket (before the tx)": the bytes are
verified (size and sha256) and written with ``put_if_absent`` first; only then does a short transaction insert
the immutable artifact row and mark the upload stored. A crash in between leaves an object without a row, which
the next declare or capture adopts after checking its stored metadata (``adopt_stored_object``); a presigned
upload reaches "stored" the same way, since the object store verified its signed checksum.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import ARTIFACTS_WRITE
from prw_platform.db.database import Connection
from prw_platform.resolver.intake import artifacts
from prw_platform.resolver.intake.artifacts import StoredArtifact, Upload
from prw_platform.resolver.intake.context import IntakeContext
from prw_platform.resolver.intake.errors import (
    ArtifactTooLarge,
    DigestMismatch,
    InstanceScopeDenied,
    NotFound,
    ValidationFailed,
)
from prw_platform.resolver.intake.grants import check_attribution, check_upload_source
from prw_platform.resolver.intake.requests import UploadDeclaration
from prw_platform.storage.errors import ImmutableMetadataConflict, InvalidMediaType, ObjectNotFound
from prw_platform.storage.keys import ObjectKey, evidence_key, validate_media_type


@dataclass(frozen=True, slots=True)
class UploadTarget:
    method: str
    headers: dict[str, str]
    #: The presigned URL; None means the streamed endpoint of ``upload_id`` (the edge renders its URL).
    url: str | None


@dataclass(frozen=True, slots=True)
class DeclaredUpload:
    status: Literal["pending", "already_stored"]
    ref: str
    sha256: str
    upload_id: str | None = None
    target: UploadTarget | None = None
    expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class StoredUpload:
    upload_id: str
    ref: str
    sha256: str
    artifact_id: str
    size: int
    status: Literal["stored"] = "stored"


def declare_upload(
    ctx: IntakeContext, principal: CollectorPrincipal, declaration: UploadDeclaration
) -> DeclaredUpload:
    principal.require_scope(ARTIFACTS_WRITE)
    check_attribution(principal, declaration)
    try:
        validate_media_type(declaration.media_type)
    except InvalidMediaType as error:
        raise ValidationFailed(str(error)) from error
    if declaration.size > ctx.limits.max_artifact_bytes:
        raise ArtifactTooLarge(
            f"{declaration.size} bytes is above the limit of {ctx.limits.max_artifact_bytes}"
        )
    tenant = principal.tenant_id
    key = evidence_key(tenant, declaration.sha256, bucket=ctx.evidence_bucket)

    def existing(conn: Connection) -> StoredArtifact | None:
        check_upload_source(conn, principal, declaration.source_id)
        return artifacts.find_artifacts(conn, tenant, [declaration.sha256]).get(declaration.sha256)

    stored = ctx.db.run(existing, tenant_id=tenant, read_only=True)
    if stored is None:
        stored = adopt_stored_object(ctx, key, declaration.size, declaration.media_type)
    if stored is not None:
        artifacts.check_same_metadata(stored, declaration.size, declaration.media_type)
        # if_artifact_upload: "an existing tenant digest returns already_stored" (skip the PUT).
        return DeclaredUpload("already_stored", stored.ref, stored.sha256)

    expires_at = ctx.clock() + ctx.limits.upload_ttl
    source_id = declaration.source_id
    assert source_id is not None  # check_upload_source refused a missing selector

    def pending(conn: Connection) -> Upload:
        upload = artifacts.reusable_upload(
            conn,
            tenant,
            principal.instance_id,
            source_id,
            declaration.sha256,
            declaration.size,
            declaration.media_type,
        )
        if upload is not None:
            artifacts.extend_upload(conn, tenant, upload.upload_id, expires_at)
            return upload
        upload = Upload(
            tenant_id=tenant,
            upload_id=artifacts.new_upload_id(),
            sha256=declaration.sha256,
            size=declaration.size,
            media_type=declaration.media_type,
            source_id=source_id,
            worker_id=principal.worker_id,
            instance_id=principal.instance_id,
            status="pending",
            expires_at=expires_at,
        )
        artifacts.insert_upload(conn, upload)
        return upload

    upload = ctx.db.run(pending, tenant_id=tenant)
    target = _target(ctx, key, declaration)
    return DeclaredUpload("pending", key.ref, upload.sha256, upload.upload_id, target, expires_at)


def _target(ctx: IntakeContext, key: ObjectKey, declaration: UploadDeclaration) -> UploadTarget:
    if declaration.mode == "presigned":
        presigned = ctx.store.presign_put(
            key, declaration.sha256, declaration.size, declaration.media_type, ctx.limits.upload_ttl
        )
        if presigned is not None:
            return UploadTarget(presigned.method, dict(presigned.headers), presigned.url)
    # The filesystem store cannot presign: the bytes stream through PUT /v1/artifacts/uploads/{upload_id}.
    headers = {"Content-Type": declaration.media_type, "Content-Length": str(declaration.size)}
    return UploadTarget("PUT", headers, None)


def open_upload(ctx: IntakeContext, principal: CollectorPrincipal, upload_id: str) -> Upload:
    """The upload a streamed PUT writes to. if_artifact_upload: "the latter resolves ownership from stored upload
    metadata": the owner is the stable instance, so a rotated credential of the same instance keeps access."""
    principal.require_scope(ARTIFACTS_WRITE)
    upload = ctx.db.run(
        lambda conn: artifacts.load_upload(conn, principal.tenant_id, upload_id),
        tenant_id=principal.tenant_id,
        read_only=True,
    )
    if upload is None:
        raise NotFound(f"no upload {upload_id}")
    if upload.instance_id != principal.instance_id:
        raise InstanceScopeDenied("another collector instance owns this upload")
    if upload.status == "pending" and upload.expires_at <= ctx.clock():
        # "Retry the PUT with the same upload_id until expires_at, then declare again."
        raise NotFound(f"upload {upload_id} expired at {upload.expires_at.isoformat()}: declare again")
    return upload


class UploadBody:
    """The streamed bytes of one upload, checked as they arrive: never more than the declared size (itself at
    most the configured limit) is held in memory."""

    def __init__(self, upload: Upload, *, limit: int, announced_length: int | None = None) -> None:
        self._upload = upload
        self._limit = limit
        self._hash = hashlib.sha256()
        self._data = bytearray()
        if announced_length is not None:
            self._check_length(announced_length)

    def feed(self, chunk: bytes) -> None:
        self._check_length(len(self._data) + len(chunk))
        self._hash.update(chunk)
        self._data.extend(chunk)

    def finish(self) -> bytes:
        size, declared = len(self._data), self._upload.size
        if size != declared:
            raise DigestMismatch(f"received {size} bytes, declared {declared}")
        actual = self._hash.hexdigest()
        if actual != self._upload.sha256:
            raise DigestMismatch(f"the bytes hash to {actual}, not the declared sha256 {self._upload.sha256}")
        return bytes(self._data)

    def _check_length(self, length: int) -> None:
        if length > self._limit:
            raise ArtifactTooLarge(f"more than the limit of {self._limit} bytes")
        if length > self._upload.size:
            raise DigestMismatch(f"more than the declared {self._upload.size} bytes")


def complete_upload(
    ctx: IntakeContext, principal: CollectorPrincipal, upload: Upload, data: bytes
) -> StoredUpload:
    """Store verified bytes (put-if-absent, before the transaction), then record the artifact. Repeating the same
    bytes is harmless: the put reports "already stored" and the row exists."""
    key = evidence_key(principal.tenant_id, upload.sha256, bucket=ctx.evidence_bucket)
    ctx.store.put_if_absent(key, data, upload.sha256, upload.media_type)
    artifact = _record(ctx, key, upload.size, upload.media_type)
    return StoredUpload(upload.upload_id, artifact.ref, artifact.sha256, artifact.artifact_id, artifact.size)


def adopt_stored_object(
    ctx: IntakeContext, key: ObjectKey, size: int, media_type: str
) -> StoredArtifact | None:
    """Record an artifact for an object that is in the store without a row (a presigned PUT, or a crash between
    the put and the row). None when the store does not have it."""
    try:
        metadata = ctx.store.head(key)
    except ObjectNotFound:
        return None
    if metadata.sha256 != key.sha256 or metadata.size != size:
        # if_object_storage: never reinterpret the bytes already stored under a key.
        raise ImmutableMetadataConflict(
            f"{key} is stored with {metadata.size} bytes, not the declared {size}"
        )
    return _record(ctx, key, metadata.size, metadata.media_type)


def adopt_pending_uploads(
    ctx: IntakeContext, tenant_id: str, digests: list[str]
) -> dict[str, StoredArtifact]:
    """The artifacts of pending uploads whose bytes did reach the store (presigned uploads), now recorded."""
    uploads = ctx.db.run(
        lambda conn: artifacts.pending_uploads(conn, tenant_id, digests), tenant_id=tenant_id, read_only=True
    )
    adopted: dict[str, StoredArtifact] = {}
    for upload in uploads:
        key = evidence_key(tenant_id, upload.sha256, bucket=ctx.evidence_bucket)
        artifact = adopt_stored_object(ctx, key, upload.size, upload.media_type)
        if artifact is not None:
            adopted[artifact.sha256] = artifact
    return adopted


def _record(ctx: IntakeContext, key: ObjectKey, size: int, media_type: str) -> StoredArtifact:
    now = ctx.clock()

    def work(conn: Connection) -> StoredArtifact:
        artifact = artifacts.record_artifact(conn, key.tenant_id, key.sha256, size, media_type, key.ref, now)
        artifacts.mark_uploads_stored(conn, key.tenant_id, key.sha256)
        return artifact

    return ctx.db.run(work, tenant_id=key.tenant_id)

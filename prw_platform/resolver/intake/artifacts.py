"""The artifact and artifact_upload tables (0001): this module is their only reader and writer.

An upload is mutable (pending -> stored); a stored artifact is immutable (INV-05) and unique per
(tenant_id, sha256): identical bytes in two tenants are two artifacts (if_artifact_upload, INV-06).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from prw_platform.db.database import Connection
from prw_platform.storage.errors import ImmutableMetadataConflict


@dataclass(frozen=True, slots=True)
class StoredArtifact:
    artifact_id: str
    sha256: str
    size: int
    media_type: str
    ref: str


@dataclass(frozen=True, slots=True)
class Upload:
    tenant_id: str
    upload_id: str
    sha256: str
    size: int
    media_type: str
    source_id: str
    worker_id: str
    instance_id: str
    status: str
    expires_at: datetime


def new_upload_id() -> str:
    return f"upl_{secrets.token_hex(12)}"


def new_artifact_id() -> str:
    return f"art_{secrets.token_hex(12)}"


def find_artifacts(conn: Connection, tenant_id: str, digests: Sequence[str]) -> dict[str, StoredArtifact]:
    return send_find_artifacts(conn, tenant_id, digests)()


def send_find_artifacts(
    conn: Connection, tenant_id: str, digests: Sequence[str]
) -> Callable[[], dict[str, StoredArtifact]]:
    """``find_artifacts`` in two steps: the query is sent now and its rows read when the returned function is
    called (in pipeline mode, together with every statement sent in between)."""
    cur = conn.cursor(row_factory=class_row(StoredArtifact))
    cur.execute(
        """SELECT artifact_id, sha256, size_bytes AS size, media_type, ref FROM resolver.artifact
           WHERE tenant_id = %s AND sha256 = ANY(%s)""",
        (tenant_id, list(digests)),
    )

    def rows() -> dict[str, StoredArtifact]:
        with cur:
            return {artifact.sha256: artifact for artifact in cur.fetchall()}

    return rows


def artifacts_by_id(
    conn: Connection, tenant_id: str, artifact_ids: Sequence[str]
) -> dict[str, StoredArtifact]:
    """The stored artifacts of the transaction's tenant by id (another tenant's are invisible: RLS, INV-06)."""
    with conn.cursor(row_factory=class_row(StoredArtifact)) as cur:
        rows = cur.execute(
            """SELECT artifact_id, sha256, size_bytes AS size, media_type, ref FROM resolver.artifact
               WHERE tenant_id = %s AND artifact_id = ANY(%s)""",
            (tenant_id, list(artifact_ids)),
        ).fetchall()
    return {artifact.artifact_id: artifact for artifact in rows}


def record_artifact(
    conn: Connection, tenant_id: str, sha256: str, size: int, media_type: str, ref: str, stored_at: datetime
) -> StoredArtifact:
    """Insert the artifact row once per (tenant, sha256); a second writer of the same bytes gets the first row.
    Different size or media type under the same digest is if_object_storage's IMMUTABLE_METADATA_CONFLICT."""
    conn.execute(
        """INSERT INTO resolver.artifact (tenant_id, artifact_id, sha256, size_bytes, media_type, ref, stored_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, sha256) DO NOTHING""",
        (tenant_id, new_artifact_id(), sha256, size, media_type, ref, stored_at),
    )
    artifact = find_artifacts(conn, tenant_id, [sha256])[sha256]
    check_same_metadata(artifact, size, media_type)
    return artifact


def check_same_metadata(artifact: StoredArtifact, size: int, media_type: str) -> None:
    if artifact.size != size or artifact.media_type != media_type:
        raise ImmutableMetadataConflict(
            f"sha256 {artifact.sha256} is stored with {artifact.size} bytes as {artifact.media_type!r}, "
            f"not {size} bytes as {media_type!r}"
        )


def insert_upload(conn: Connection, upload: Upload) -> None:
    conn.execute(
        """INSERT INTO resolver.artifact_upload (tenant_id, upload_id, sha256, size_bytes, media_type, source_id,
               worker_id, instance_id, status, expires_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            upload.tenant_id,
            upload.upload_id,
            upload.sha256,
            upload.size,
            upload.media_type,
            upload.source_id,
            upload.worker_id,
            upload.instance_id,
            upload.status,
            upload.expires_at,
        ),
    )


def reusable_upload(
    conn: Connection,
    tenant_id: str,
    instance_id: str,
    source_id: str,
    sha256: str,
    size: int,
    media_type: str,
) -> Upload | None:
    """The caller's own pending upload of the same declaration, locked so that its expiry can be extended."""
    with conn.cursor(row_factory=class_row(Upload)) as cur:
        return cur.execute(
            """SELECT tenant_id, upload_id, sha256, size_bytes AS size, media_type, source_id, worker_id,
                      instance_id, status, expires_at
               FROM resolver.artifact_upload
               WHERE tenant_id = %s AND sha256 = %s AND instance_id = %s AND status = 'pending'
                 AND source_id = %s AND size_bytes = %s AND media_type = %s
               ORDER BY created_at DESC LIMIT 1 FOR UPDATE""",
            (tenant_id, sha256, instance_id, source_id, size, media_type),
        ).fetchone()


def extend_upload(conn: Connection, tenant_id: str, upload_id: str, expires_at: datetime) -> None:
    conn.execute(
        """UPDATE resolver.artifact_upload SET expires_at = greatest(expires_at, %s)
           WHERE tenant_id = %s AND upload_id = %s""",
        (expires_at, tenant_id, upload_id),
    )


def load_upload(conn: Connection, tenant_id: str, upload_id: str) -> Upload | None:
    with conn.cursor(row_factory=class_row(Upload)) as cur:
        return cur.execute(
            """SELECT tenant_id, upload_id, sha256, size_bytes AS size, media_type, source_id, worker_id,
                      instance_id, status, expires_at
               FROM resolver.artifact_upload WHERE tenant_id = %s AND upload_id = %s""",
            (tenant_id, upload_id),
        ).fetchone()


def pending_uploads(conn: Connection, tenant_id: str, digests: Sequence[str]) -> list[Upload]:
    with conn.cursor(row_factory=class_row(Upload)) as cur:
        return cur.execute(
            """SELECT DISTINCT ON (sha256) tenant_id, upload_id, sha256, size_bytes AS size, media_type, source_id,
                      worker_id, instance_id, status, expires_at
               FROM resolver.artifact_upload
               WHERE tenant_id = %s AND sha256 = ANY(%s) AND status = 'pending'
               ORDER BY sha256, created_at DESC""",
            (tenant_id, list(digests)),
        ).fetchall()


def mark_uploads_stored(conn: Connection, tenant_id: str, sha256: str) -> None:
    """Every pending upload of these bytes is done: the artifact exists, whoever uploaded it."""
    conn.execute(
        """UPDATE resolver.artifact_upload SET status = 'stored'
           WHERE tenant_id = %s AND sha256 = %s AND status = 'pending'""",
        (tenant_id, sha256),
    )

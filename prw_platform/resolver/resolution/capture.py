"""The committed capture a job points at, re-read as the truth (if_resolution_job: "The consumer re-reads the
capture row"; "tenant_id and catalog_id are copied from the committed capture row, never from collector input").

Intake (``prw_platform.resolver.intake``) writes capture, capture_artifact and artifact; they are immutable
(INV-05), and this module only reads them, inside a transaction whose ``app.tenant_id`` is the message's tenant:
row-level security makes another tenant's capture invisible, which is exactly a tenant mismatch (INV-06).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prw_platform.db.database import Connection


@dataclass(frozen=True, slots=True)
class CapturedArtifact:
    """An artifact row of the capture: its sha256, size and media type are the immutable truth its stored bytes
    are checked against (if_object_storage)."""

    artifact_id: str
    sha256: str
    size: int
    media_type: str
    ref: str


@dataclass(frozen=True, slots=True)
class CaptureRecord:
    tenant_id: str
    capture_id: str
    catalog_id: str
    source_id: str
    native_record_id: str | None
    url: str | None
    observed_at: datetime
    #: The collector's non-binding adapter preference (a name or a pin), from the stored capture body.
    adapter_hint: str | None
    #: In the collector's order (``capture_artifact.ordinal``).
    artifacts: tuple[CapturedArtifact, ...]

    @property
    def media_type(self) -> str:
        """What an adapter's ``supports`` sees: the media type of the capture's first artifact."""
        return self.artifacts[0].media_type if self.artifacts else "application/octet-stream"


def load_capture(conn: Connection, tenant_id: str, capture_id: str) -> CaptureRecord | None:
    """The capture in the transaction's tenant, or None (absent, or another tenant's: RLS hides it)."""
    row = conn.execute(
        """SELECT tenant_id, capture_id, catalog_id, source_id, native_record_id, url, observed_at, body
           FROM resolver.capture WHERE tenant_id = %s AND capture_id = %s""",
        (tenant_id, capture_id),
    ).fetchone()
    if row is None:
        return None
    artifacts = conn.execute(
        """SELECT a.artifact_id, a.sha256, a.size_bytes, a.media_type, a.ref
           FROM resolver.capture_artifact ca
           JOIN resolver.artifact a USING (tenant_id, artifact_id)
           WHERE ca.tenant_id = %s AND ca.capture_id = %s
           ORDER BY ca.ordinal""",
        (tenant_id, capture_id),
    ).fetchall()
    return CaptureRecord(
        tenant_id=str(row["tenant_id"]),
        capture_id=str(row["capture_id"]),
        catalog_id=str(row["catalog_id"]),
        source_id=str(row["source_id"]),
        native_record_id=_optional(row["native_record_id"]),
        url=_optional(row["url"]),
        observed_at=row["observed_at"],  # type: ignore[arg-type]  # timestamptz: an aware datetime
        adapter_hint=_hint(row["body"]),
        artifacts=tuple(
            CapturedArtifact(
                artifact_id=str(a["artifact_id"]),
                sha256=str(a["sha256"]),
                size=int(str(a["size_bytes"])),
                media_type=str(a["media_type"]),
                ref=str(a["ref"]),
            )
            for a in artifacts
        ),
    )


def _optional(value: object) -> str | None:
    return None if value is None else str(value)


def _hint(body: Any) -> str | None:
    hint = body.get("adapter_hint") if isinstance(body, dict) else None
    return hint if isinstance(hint, str) and hint else None

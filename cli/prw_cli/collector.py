"""The collector ``prw demo`` plays: a thin wrapper over the platform's collector client (``prw_cli.collect``),
submitting pages held in memory. It speaks HTTP only: it knows nothing of the platform's internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType

from prw_cli.collect import CollectorClient, IntakeError

__all__ = ["Collector", "IntakeError", "Submitted"]


@dataclass(frozen=True, slots=True)
class Submitted:
    """One POST /v1/captures: the HTTP status (202 stored, 200 idempotent replay) and the receipt."""

    status: int
    receipt_id: str
    capture_id: str
    receipt_status: str
    upload: str  # "uploaded" or "already_stored"


class Collector:
    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        worker_id: str,
        timeout: float | None = None,
    ) -> None:
        self.client = CollectorClient(base_url, client_id, client_secret, timeout=timeout)
        self.worker_id = worker_id

    def __enter__(self) -> Collector:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.client.close()

    def token(self) -> str:
        return self.client.token()

    def upload(self, source_id: str, data: bytes, media_type: str) -> tuple[str, str]:
        """Declare the artifact and PUT its bytes unless already stored; returns (sha256, how)."""
        uploaded = self.client.upload(source_id, data, media_type, presigned=False)
        return uploaded.sha256, uploaded.how

    def submit(
        self,
        *,
        source_id: str,
        native_record_id: str,
        observed_at: str,
        data: bytes,
        media_type: str = "text/html",
        url: str | None = None,
    ) -> Submitted:
        """Upload the page and submit its capture under the idempotency key worker:record:observed_at (the demo's
        key since its first version, so a demo database of an earlier version replays too)."""
        sha256, how = self.upload(source_id, data, media_type)
        captured = self.client.capture(
            source_id=source_id,
            native_record_id=native_record_id,
            observed_at=observed_at,
            artifacts=[sha256],
            url=url,
            idempotency_key=f"{self.worker_id}:{native_record_id}:{observed_at}",
        )
        return Submitted(
            status=captured.status,
            receipt_id=captured.receipt_id,
            capture_id=captured.capture_id,
            receipt_status=captured.receipt_status,
            upload=how,
        )

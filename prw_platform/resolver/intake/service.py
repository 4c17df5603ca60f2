"""The intake service the edge calls: one object over the intake functions, built by the composition root."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.db.database import Database
from prw_platform.resolver.catalogs import StreamNotProvisioned, current_stream
from prw_platform.resolver.intake import captures, receipts, uploads
from prw_platform.resolver.intake.artifacts import Upload
from prw_platform.resolver.intake.context import EpochSource, IntakeContext
from prw_platform.resolver.intake.errors import IntakeUnavailable
from prw_platform.resolver.intake.receipts import Receipt
from prw_platform.resolver.intake.requests import CaptureSubmission, UploadDeclaration

#: How long a readiness probe waits for the database (a connection and ``SELECT 1``).
READINESS_TIMEOUT_SECONDS = 2.0


class IntakeService:
    def __init__(self, context: IntakeContext) -> None:
        self.context = context

    @property
    def max_artifact_bytes(self) -> int:
        """if_artifact_upload: above this an upload is 413 ARTIFACT_TOO_LARGE (the edge refuses a PUT announcing
        more before authenticating it)."""
        return self.context.limits.max_artifact_bytes

    def ready(self, timeout_s: float = READINESS_TIMEOUT_SECONDS) -> None:
        """Readiness of the intake API: its database pool answers ``SELECT 1`` within ``timeout_s``; else
        ``DatabaseUnavailable`` (503 STORAGE_UNAVAILABLE, retry later)."""
        self.context.db.ready(timeout_s)

    def declare_upload(
        self, principal: CollectorPrincipal, declaration: UploadDeclaration
    ) -> uploads.DeclaredUpload:
        return uploads.declare_upload(self.context, principal, declaration)

    def open_upload(self, principal: CollectorPrincipal, upload_id: str) -> Upload:
        return uploads.open_upload(self.context, principal, upload_id)

    def upload_body(self, upload: Upload, announced_length: int | None) -> uploads.UploadBody:
        return uploads.UploadBody(
            upload, limit=self.context.limits.max_artifact_bytes, announced_length=announced_length
        )

    def complete_upload(
        self, principal: CollectorPrincipal, upload: Upload, body: uploads.UploadBody
    ) -> uploads.StoredUpload:
        return uploads.complete_upload(self.context, principal, upload, body.finish())

    def submit_capture(
        self,
        principal: CollectorPrincipal,
        idempotency_key: str | None,
        submission: CaptureSubmission,
        send_check: captures.SendCredentialCheck | None = None,
    ) -> captures.SubmittedCapture:
        """if_capture_submit. ``send_check`` (``CollectorAuthService.send_credential_check``) runs the
        revocation check of a principal from ``CollectorAuthService.verify_token`` inside the capture's own
        transaction; without it the principal must come from ``authenticate``."""
        return captures.submit_capture(self.context, principal, idempotency_key, submission, send_check)

    def get_receipt(self, principal: CollectorPrincipal, receipt_id: str) -> Receipt:
        return receipts.get_receipt(self.context, principal, receipt_id)


def control_plane_epochs(
    control: Database, *, cache_seconds: float = 0.0, monotonic: Callable[[], float] = time.monotonic
) -> EpochSource:
    """The catalog's current history epoch from the control plane (``prw_platform.epochs``), reused for
    ``cache_seconds`` after it was read (0: read on every call).

    The bound: for at most ``cache_seconds`` after a new epoch is issued, a capture's resolution job may carry
    the previous epoch's id (``ResolutionJob.history_epoch``, a provenance stamp). Fencing stays correct: the
    job's epoch decides nothing; the decision that resolution commits re-reads the current epoch and locks the
    stream cursor of that epoch, refusing a superseded one (``HISTORY_EPOCH_FENCED``, retried on the next
    delivery), so no event is ever written under an old epoch (seed 003 "Fence restored history": writers are
    paused while the new epoch is issued anyway). A catalog without an epoch yet is never cached."""
    cache: dict[tuple[str, str], tuple[str, float]] = {}
    lock = threading.Lock()

    def current(tenant_id: str, catalog_id: str) -> str:
        key = (tenant_id, catalog_id)
        if cache_seconds > 0:
            with lock:
                cached = cache.get(key)
            if cached is not None and monotonic() - cached[1] < cache_seconds:
                return cached[0]
        read_at = monotonic()
        try:
            epoch = current_stream(control, tenant_id, catalog_id).history_epoch
        except StreamNotProvisioned as error:
            raise IntakeUnavailable(f"catalog {catalog_id} has no open stream yet: {error}") from error
        if cache_seconds > 0:
            with lock:
                cache[key] = (epoch, read_at)
        return epoch

    return current

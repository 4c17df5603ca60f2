"""The intake service the edge calls: one object over the intake functions, built by the composition root."""

from __future__ import annotations

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
        self, principal: CollectorPrincipal, idempotency_key: str | None, submission: CaptureSubmission
    ) -> captures.SubmittedCapture:
        return captures.submit_capture(self.context, principal, idempotency_key, submission)

    def get_receipt(self, principal: CollectorPrincipal, receipt_id: str) -> Receipt:
        return receipts.get_receipt(self.context, principal, receipt_id)


def control_plane_epochs(control: Database) -> EpochSource:
    """The catalog's current history epoch from the control plane (``prw_platform.epochs``)."""

    def current(tenant_id: str, catalog_id: str) -> str:
        try:
            return current_stream(control, tenant_id, catalog_id).history_epoch
        except StreamNotProvisioned as error:
            raise IntakeUnavailable(f"catalog {catalog_id} has no open stream yet: {error}") from error

    return current

"""Read a capture's stored bytes and verify them (if_resolution_job step "verify artifact sha256";
if_object_storage: "Reads check that the object's tenant prefix equals the caller's tenant").

The store's verifying read checks that the bytes hash to the object's own sha256; this module checks that this
sha256 and the size are the ones the capture's artifact row recorded. Either failing is DIGEST_MISMATCH, a
terminal error (DLQ): the evidence is not what was captured, and a retry reads the same bytes.
``StorageUnavailable`` passes through (retryable: the batch driver retries the delivery later).
"""

from __future__ import annotations

from prw_platform.plugins import Artifact
from prw_platform.resolver.intake.captures import CaptureRecord
from prw_platform.resolver.resolution.outcomes import (
    CAPTURE_WITHOUT_ARTIFACTS,
    DIGEST_MISMATCH,
    JobRejected,
)
from prw_platform.storage import ObjectStore, parse_tenant_ref


def read_evidence(store: ObjectStore, capture: CaptureRecord) -> tuple[Artifact, ...]:
    """Every artifact of the capture, in its order, verified against its artifact row."""
    if not capture.artifacts:
        raise JobRejected(CAPTURE_WITHOUT_ARTIFACTS, f"capture {capture.capture_id} has no artifact rows")
    artifacts: list[Artifact] = []
    for row in capture.artifacts:
        # INV-06: TENANT_SCOPE_DENIED when the row's ref names another tenant's object.
        key = parse_tenant_ref(row.ref, capture.tenant_id)
        if key.sha256 != row.sha256:
            raise JobRejected(
                DIGEST_MISMATCH, f"artifact {row.artifact_id}: ref {row.ref} is not {row.sha256}"
            )
        stored = store.get(key, verify=True)
        if stored.sha256 != row.sha256 or len(stored.data) != row.size:
            raise JobRejected(
                DIGEST_MISMATCH,
                f"artifact {row.artifact_id}: stored object is sha256={stored.sha256} with {len(stored.data)} "
                f"bytes, the capture recorded sha256={row.sha256} with {row.size} bytes",
            )
        # The media type is the artifact row's (immutable metadata), not whatever the store reports.
        artifacts.append(Artifact(row.artifact_id, row.sha256, row.media_type, stored.data))
    return tuple(artifacts)

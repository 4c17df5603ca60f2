"""if_capture_submit and AW-02 on the core services: one transaction for capture + receipt + job, idempotency,
enqueue after commit, and the seed's error rows ("Nothing persisted")."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import pytest

from prw_platform.auth.errors import MissingScope
from prw_platform.auth.scopes import ARTIFACTS_WRITE, RECEIPTS_READ
from prw_platform.contracts import ResolutionJob, validate
from prw_platform.db.database import Database
from prw_platform.epochs import current_epoch
from prw_platform.resolver.intake import (
    ArtifactNotStored,
    AttributionDenied,
    CaptureSubmission,
    IdempotencyConflict,
    IntakeContext,
    IntakeService,
    IntakeUnavailable,
    SubmittedCapture,
    TenantScopeDenied,
    UploadDeclaration,
    ValidationFailed,
)
from prw_platform.storage import evidence_key
from tests.integration.intake.helpers import (
    CATALOG,
    INSTANCE,
    PAGE,
    PAGE_SHA256,
    SOURCE,
    UNGRANTED_SOURCE,
    WORKER,
    RecordingEnqueuer,
    World,
    job_rows,
)

KEY = f"{WORKER}:p5-1t-hs:2026-10-10T03:31:55Z"


def stored_page(intake: IntakeService, world: World, data: bytes = PAGE, **who: Any) -> str:
    caller = world.principal(**who)
    declared = intake.declare_upload(
        caller,
        UploadDeclaration.model_validate(
            {
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
                "media_type": "text/html",
                "source_id": SOURCE,
            }
        ),
    )
    if declared.upload_id is not None:
        upload = intake.open_upload(caller, declared.upload_id)
        body = intake.upload_body(upload, announced_length=len(data))
        body.feed(data)
        intake.complete_upload(caller, upload, body)
    return declared.sha256


def submission(**overrides: Any) -> CaptureSubmission:
    fields: dict[str, Any] = {
        "schema_version": "capture/1",
        "source_id": SOURCE,
        "native_record_id": "p5-1t-hs",
        "url": "https://lumen.example/p/p5-1t-hs",
        "observed_at": "2026-10-10T03:31:55Z",
        "artifacts": [{"sha256": PAGE_SHA256}],
    }
    fields.update(overrides)
    return CaptureSubmission.model_validate(fields)


def submit(intake: IntakeService, world: World, key: str | None = KEY, **overrides: Any) -> SubmittedCapture:
    return intake.submit_capture(world.principal(), key, submission(**overrides))


def test_a_capture_stores_capture_artifacts_receipt_and_a_pending_job_then_enqueues_it(
    world: World, intake: IntakeService, enqueuer: RecordingEnqueuer, owner_db: Database, control_db: Database
) -> None:
    stored_page(intake, world)

    submitted = submit(intake, world)

    assert not submitted.replayed
    assert submitted.enqueued is True
    receipt = submitted.receipt
    assert receipt.status == "stored"
    assert receipt.instance_id == INSTANCE
    counts = world.counts(owner_db)
    assert (counts["capture"], counts["capture_artifact"], counts["receipt"], counts["resolution_job"]) == (
        1,
        1,
        1,
        1,
    )
    [job] = enqueuer.sent
    assert job.job_id == f"{receipt.capture_id}:extract:1"
    assert (job.tenant_id, job.catalog_id, job.source_id, job.receipt_id) == (
        world.tenant,
        CATALOG,
        SOURCE,
        receipt.receipt_id,
    )
    epoch = current_epoch(control_db, world.tenant, CATALOG)
    assert epoch is not None
    assert job.history_epoch == epoch.epoch_id
    assert [(a.sha256, a.ref, a.bytes) for a in job.artifacts] == [
        (PAGE_SHA256, evidence_key(world.tenant, PAGE_SHA256).ref, len(PAGE))
    ]
    [row] = job_rows(owner_db, world.tenant)
    assert row["status"] == "enqueued"
    assert row["enqueued_at"] is not None
    validate("resolution.job.v1.json", row["message"])
    assert ResolutionJob.from_message(row["message"]) == job


def test_the_capture_row_carries_attribution_from_the_token_not_the_request(
    world: World, intake: IntakeService, owner_db: Database
) -> None:
    stored_page(intake, world)

    submitted = submit(intake, world, worker_id=WORKER, instance_id=INSTANCE, tenant_id=world.tenant)

    with owner_db.transaction(read_only=True) as conn:
        row = conn.execute(
            "SELECT tenant_id, catalog_id, worker_id, instance_id, body FROM resolver.capture WHERE capture_id = %s",
            (submitted.receipt.capture_id,),
        ).fetchone()
    assert row is not None
    assert (row["tenant_id"], row["catalog_id"], row["worker_id"], row["instance_id"]) == (
        world.tenant,
        CATALOG,
        WORKER,
        INSTANCE,
    )
    assert row["body"]["artifacts"] == [{"sha256": PAGE_SHA256}]


def test_same_key_and_same_body_returns_the_existing_receipt(
    world: World, intake: IntakeService, enqueuer: RecordingEnqueuer, owner_db: Database
) -> None:
    stored_page(intake, world)
    first = submit(intake, world)

    again = submit(intake, world)

    assert again.replayed
    assert again.receipt == first.receipt
    assert world.counts(owner_db)["capture"] == 1
    assert len(enqueuer.sent) == 1


def test_the_same_body_written_differently_is_the_same_body(world: World, intake: IntakeService) -> None:
    stored_page(intake, world)
    first = submit(intake, world)

    again = submit(
        intake,
        world,
        observed_at="2026-10-10T05:31:55+02:00",
        artifacts=[{"ref": evidence_key(world.tenant, PAGE_SHA256).ref}],
        worker_id=WORKER,
    )

    assert again.replayed
    assert again.receipt.receipt_id == first.receipt.receipt_id


def test_same_key_and_another_body_is_409_and_persists_nothing(
    world: World, intake: IntakeService, owner_db: Database
) -> None:
    stored_page(intake, world)
    submit(intake, world)
    before = world.counts(owner_db)

    with pytest.raises(IdempotencyConflict):
        submit(intake, world, native_record_id="p5-2t-hs")

    assert world.counts(owner_db) == before


def test_the_same_key_from_another_instance_is_a_conflict_not_a_replay(
    world: World, intake: IntakeService
) -> None:
    stored_page(intake, world)
    submit(intake, world)

    with pytest.raises(IdempotencyConflict):
        intake.submit_capture(world.principal(instance_id="ci_lumen_fra_02"), KEY, submission())


def test_two_identical_submits_racing_store_one_capture(
    world: World, intake: IntakeService, owner_db: Database
) -> None:
    stored_page(intake, world)
    start = threading.Barrier(4)
    results: list[SubmittedCapture] = []
    errors: list[BaseException] = []

    def racer() -> None:
        start.wait()
        try:
            results.append(submit(intake, world))
        except BaseException as error:  # surfaced by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=racer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert len({r.receipt.receipt_id for r in results}) == 1
    assert sorted(r.replayed for r in results) == [False, True, True, True]
    assert world.counts(owner_db)["capture"] == 1


def test_the_idempotency_key_is_unique_per_tenant_not_globally(world: World, intake: IntakeService) -> None:
    stored_page(intake, world)
    stored_page(intake, world, tenant_id=world.other_tenant)
    mine = submit(intake, world)

    theirs = intake.submit_capture(world.principal(tenant_id=world.other_tenant), KEY, submission())

    assert not theirs.replayed
    assert theirs.receipt.receipt_id != mine.receipt.receipt_id


def test_an_artifact_that_was_never_uploaded_is_artifact_not_stored_and_persists_nothing(
    world: World, intake: IntakeService, owner_db: Database
) -> None:
    with pytest.raises(ArtifactNotStored):
        submit(intake, world)

    assert world.counts(owner_db) == dict.fromkeys(world.counts(owner_db), 0)


def test_a_declared_but_not_uploaded_artifact_is_artifact_not_stored(
    world: World, intake: IntakeService
) -> None:
    intake.declare_upload(
        world.principal(),
        UploadDeclaration.model_validate(
            {"sha256": PAGE_SHA256, "bytes": len(PAGE), "media_type": "text/html", "source_id": SOURCE}
        ),
    )

    with pytest.raises(ArtifactNotStored):
        submit(intake, world)


def test_a_presigned_upload_that_reached_the_store_is_adopted_by_the_capture(
    world: World, context: IntakeContext, intake: IntakeService, owner_db: Database
) -> None:
    declared = intake.declare_upload(
        world.principal(),
        UploadDeclaration.model_validate(
            {"sha256": PAGE_SHA256, "bytes": len(PAGE), "media_type": "text/html", "source_id": SOURCE}
        ),
    )
    # What the collector's PUT to a presigned URL does: the store itself verifies the signed checksum.
    context.store.put_if_absent(evidence_key(world.tenant, PAGE_SHA256), PAGE, PAGE_SHA256, "text/html")

    submitted = submit(intake, world)

    assert not submitted.replayed
    with owner_db.transaction(read_only=True) as conn:
        upload = conn.execute(
            "SELECT status FROM resolver.artifact_upload WHERE tenant_id = %s AND upload_id = %s",
            (world.tenant, declared.upload_id),
        ).fetchone()
    assert upload == {"status": "stored"}


def test_a_failed_enqueue_leaves_the_job_pending_and_the_receipt_durable(
    world: World, intake: IntakeService, enqueuer: RecordingEnqueuer, owner_db: Database
) -> None:
    stored_page(intake, world)
    enqueuer.failing = True

    submitted = submit(intake, world)

    assert submitted.enqueued is False
    assert intake.get_receipt(world.principal(), submitted.receipt.receipt_id) == submitted.receipt
    [row] = job_rows(owner_db, world.tenant)
    assert (row["status"], row["enqueued_at"]) == ("pending", None)


def test_a_source_that_is_not_granted_is_tenant_scope_denied_and_persists_nothing(
    world: World, intake: IntakeService, owner_db: Database
) -> None:
    stored_page(intake, world)
    before = world.counts(owner_db)

    with pytest.raises(TenantScopeDenied):
        submit(intake, world, source_id=UNGRANTED_SOURCE)

    assert world.counts(owner_db) == before


@pytest.mark.parametrize("field", ["tenant_id", "catalog_id"])
def test_a_supplied_tenant_or_catalog_that_is_not_the_tokens_is_tenant_scope_denied(
    world: World, intake: IntakeService, field: str
) -> None:
    stored_page(intake, world)

    with pytest.raises(TenantScopeDenied):
        submit(intake, world, **{field: "cat_elsewhere" if field == "catalog_id" else world.other_tenant})


@pytest.mark.parametrize("field", ["worker_id", "instance_id"])
def test_a_conflicting_worker_or_instance_is_attribution_denied(
    world: World, intake: IntakeService, owner_db: Database, field: str
) -> None:
    stored_page(intake, world)
    before = world.counts(owner_db)

    with pytest.raises(AttributionDenied):
        submit(intake, world, **{field: "ci_not_me"})

    assert world.counts(owner_db) == before


def test_an_artifact_ref_of_another_tenant_is_tenant_scope_denied(
    world: World, intake: IntakeService
) -> None:
    stored_page(intake, world, tenant_id=world.other_tenant)

    with pytest.raises(TenantScopeDenied):
        submit(intake, world, artifacts=[{"ref": evidence_key(world.other_tenant, PAGE_SHA256).ref}])


@pytest.mark.parametrize("key", [None, "", "has space", "k" * 256])
def test_a_missing_or_malformed_idempotency_key_is_validation_failed(
    world: World, intake: IntakeService, key: str | None
) -> None:
    stored_page(intake, world)

    with pytest.raises(ValidationFailed):
        submit(intake, world, key=key)


def test_an_artifact_listed_twice_is_validation_failed(world: World, intake: IntakeService) -> None:
    stored_page(intake, world)

    with pytest.raises(ValidationFailed):
        submit(
            intake,
            world,
            artifacts=[{"sha256": PAGE_SHA256}, {"ref": evidence_key(world.tenant, PAGE_SHA256).ref}],
        )


def test_without_captures_write_the_submit_is_missing_scope(world: World, intake: IntakeService) -> None:
    stored_page(intake, world)

    with pytest.raises(MissingScope):
        intake.submit_capture(
            world.principal(scopes=frozenset({ARTIFACTS_WRITE, RECEIPTS_READ})), KEY, submission()
        )


def test_a_catalog_without_an_open_stream_is_unavailable_and_persists_nothing(
    world: World, context: IntakeContext, owner_db: Database
) -> None:
    def no_epoch(tenant_id: str, catalog_id: str) -> str:
        raise IntakeUnavailable(f"{catalog_id} has no open stream")

    intake = IntakeService(
        IntakeContext(db=context.db, store=context.store, epochs=no_epoch, enqueuer=context.enqueuer)
    )
    stored_page(intake, world)
    before = world.counts(owner_db)

    with pytest.raises(IntakeUnavailable) as raised:
        submit(intake, world)

    assert raised.value.retryable
    assert world.counts(owner_db) == before

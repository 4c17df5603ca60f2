"""if_artifact_upload on the core services: declare, streamed PUT, put-if-absent, and the seed's error rows."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from prw_platform.auth.errors import MissingScope
from prw_platform.auth.scopes import CAPTURES_WRITE, RECEIPTS_READ
from prw_platform.db.database import Database
from prw_platform.resolver.intake import (
    ArtifactTooLarge,
    AttributionDenied,
    DigestMismatch,
    InstanceScopeDenied,
    IntakeContext,
    IntakeService,
    NotFound,
    SourceScopeDenied,
    StoredUpload,
    TenantScopeDenied,
    UploadDeclaration,
    ValidationFailed,
)
from prw_platform.storage import (
    EVIDENCE_BUCKET,
    FilesystemObjectStore,
    ImmutableMetadataConflict,
    evidence_key,
)
from tests.integration.intake.conftest import MAX_ARTIFACT_BYTES
from tests.integration.intake.helpers import (
    OTHER_TENANT_SOURCE,
    PAGE,
    PAGE_SHA256,
    SOURCE,
    UNGRANTED_SOURCE,
    World,
    row_counts,
)


def declaration(data: bytes = PAGE, **overrides: object) -> UploadDeclaration:
    fields: dict[str, object] = {
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "media_type": "text/html",
        "source_id": SOURCE,
    }
    fields.update(overrides)
    return UploadDeclaration.model_validate(fields)


def put(intake: IntakeService, world: World, upload_id: str, data: bytes, **who: object) -> StoredUpload:
    caller = world.principal(**who)  # type: ignore[arg-type]
    upload = intake.open_upload(caller, upload_id)
    body = intake.upload_body(upload, announced_length=None)
    for start in range(0, len(data), 7):
        body.feed(data[start : start + 7])
    return intake.complete_upload(caller, upload, body)


def test_declare_returns_a_streamed_target_when_the_store_cannot_presign(
    world: World, intake: IntakeService
) -> None:
    declared = intake.declare_upload(world.principal(), declaration(mode="presigned"))

    assert declared.status == "pending"
    assert declared.upload_id is not None
    assert declared.upload_id.startswith("upl_")
    assert declared.ref == f"r2://evidence-private/{world.tenant}/{PAGE_SHA256}"
    assert declared.target is not None
    assert declared.target.url is None
    assert declared.target.method == "PUT"
    assert declared.target.headers == {"Content-Type": "text/html", "Content-Length": str(len(PAGE))}


def test_streamed_upload_stores_the_bytes_and_the_artifact_row(
    world: World, intake: IntakeService, store: FilesystemObjectStore, owner_db: Database
) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None

    stored = put(intake, world, declared.upload_id, PAGE)

    assert stored.status == "stored"
    assert stored.ref == declared.ref
    assert stored.size == len(PAGE)
    assert store.get(evidence_key(world.tenant, PAGE_SHA256), verify=True).data == PAGE
    with owner_db.transaction(read_only=True) as conn:
        upload = conn.execute(
            "SELECT status FROM resolver.artifact_upload WHERE tenant_id = %s", (world.tenant,)
        ).fetchone()
        artifact = conn.execute(
            "SELECT artifact_id, ref FROM resolver.artifact WHERE tenant_id = %s", (world.tenant,)
        ).fetchone()
    assert upload == {"status": "stored"}
    assert artifact == {"artifact_id": stored.artifact_id, "ref": declared.ref}


def test_declaring_a_stored_digest_again_is_already_stored(
    world: World, intake: IntakeService, owner_db: Database
) -> None:
    first = intake.declare_upload(world.principal(), declaration())
    assert first.upload_id is not None
    put(intake, world, first.upload_id, PAGE)

    again = intake.declare_upload(world.principal(), declaration())

    assert (again.status, again.ref, again.upload_id, again.target) == (
        "already_stored",
        first.ref,
        None,
        None,
    )
    assert world.counts(owner_db)["artifact_upload"] == 1


def test_a_repeated_declare_returns_the_same_upload_and_ref(world: World, intake: IntakeService) -> None:
    first = intake.declare_upload(world.principal(), declaration())
    second = intake.declare_upload(world.principal(), declaration())

    assert (second.upload_id, second.ref) == (first.upload_id, first.ref)


def test_a_repeated_put_of_the_same_bytes_is_harmless(
    world: World, intake: IntakeService, owner_db: Database
) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None
    first = put(intake, world, declared.upload_id, PAGE)

    second = put(intake, world, declared.upload_id, PAGE)

    assert second == first
    assert world.counts(owner_db)["artifact"] == 1


def test_bytes_that_do_not_hash_to_the_declared_sha256_are_digest_mismatch_and_store_nothing(
    world: World, intake: IntakeService, store: FilesystemObjectStore, owner_db: Database
) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None
    tampered = PAGE.replace(b"Lumen", b"Lumex")

    with pytest.raises(DigestMismatch):
        put(intake, world, declared.upload_id, tampered)

    assert not store.exists(evidence_key(world.tenant, PAGE_SHA256))
    assert world.counts(owner_db)["artifact"] == 0


def test_more_bytes_than_declared_is_digest_mismatch(world: World, intake: IntakeService) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None

    with pytest.raises(DigestMismatch, match="more than the declared"):
        put(intake, world, declared.upload_id, PAGE + b"\n")


def test_fewer_bytes_than_declared_is_digest_mismatch(world: World, intake: IntakeService) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None

    with pytest.raises(DigestMismatch, match="declared"):
        put(intake, world, declared.upload_id, PAGE[:-1])


def test_declaring_more_than_the_limit_is_artifact_too_large_and_persists_nothing(
    world: World, intake: IntakeService, owner_db: Database
) -> None:
    big = b"x" * (MAX_ARTIFACT_BYTES + 1)

    with pytest.raises(ArtifactTooLarge):
        intake.declare_upload(world.principal(), declaration(big))

    assert world.counts(owner_db)["artifact_upload"] == 0


def test_an_announced_length_above_the_limit_is_refused_before_reading(
    world: World, intake: IntakeService
) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None
    upload = intake.open_upload(world.principal(), declared.upload_id)

    with pytest.raises(ArtifactTooLarge):
        intake.upload_body(upload, announced_length=MAX_ARTIFACT_BYTES + 1)


def test_a_missing_source_selector_is_attribution_denied(world: World, intake: IntakeService) -> None:
    with pytest.raises(AttributionDenied, match="source_id"):
        intake.declare_upload(world.principal(), declaration(source_id=None))


def test_a_source_of_the_tenant_that_is_not_granted_is_source_scope_denied(
    world: World, intake: IntakeService
) -> None:
    with pytest.raises(SourceScopeDenied):
        intake.declare_upload(world.principal(), declaration(source_id=UNGRANTED_SOURCE))


def test_a_source_of_another_tenant_is_tenant_scope_denied(world: World, intake: IntakeService) -> None:
    with pytest.raises(TenantScopeDenied):
        intake.declare_upload(world.principal(), declaration(source_id=OTHER_TENANT_SOURCE))


def test_a_supplied_tenant_that_is_not_the_tokens_is_tenant_scope_denied(
    world: World, intake: IntakeService
) -> None:
    with pytest.raises(TenantScopeDenied):
        intake.declare_upload(world.principal(), declaration(tenant_id=world.other_tenant))


@pytest.mark.parametrize("field", ["worker_id", "instance_id"])
def test_conflicting_worker_or_instance_is_attribution_denied(
    world: World, intake: IntakeService, field: str
) -> None:
    with pytest.raises(AttributionDenied):
        intake.declare_upload(world.principal(), declaration(**{field: "ci_someone_else"}))


def test_matching_supplied_attribution_is_accepted(world: World, intake: IntakeService) -> None:
    caller = world.principal()
    declared = intake.declare_upload(
        caller,
        declaration(worker_id=caller.worker_id, instance_id=caller.instance_id, tenant_id=world.tenant),
    )
    assert declared.status == "pending"


def test_without_artifacts_write_the_declare_is_missing_scope(world: World, intake: IntakeService) -> None:
    with pytest.raises(MissingScope):
        intake.declare_upload(
            world.principal(scopes=frozenset({CAPTURES_WRITE, RECEIPTS_READ})), declaration()
        )


def test_a_media_type_that_is_not_type_slash_subtype_is_validation_failed(
    world: World, intake: IntakeService
) -> None:
    with pytest.raises(ValidationFailed):
        intake.declare_upload(world.principal(), declaration(media_type="html page"))


def test_another_instance_cannot_put_to_the_upload(world: World, intake: IntakeService) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None

    with pytest.raises(InstanceScopeDenied):
        put(intake, world, declared.upload_id, PAGE, instance_id="ci_lumen_fra_02")


def test_a_rotated_credential_of_the_same_instance_keeps_access_to_the_upload(
    world: World, intake: IntakeService
) -> None:
    declared = intake.declare_upload(world.principal(client_id="cc_00000000000000000001"), declaration())
    assert declared.upload_id is not None

    stored = put(intake, world, declared.upload_id, PAGE, client_id="cc_00000000000000000002")

    assert stored.status == "stored"


def test_another_tenants_upload_is_not_found(world: World, intake: IntakeService) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None

    with pytest.raises(NotFound):
        put(
            intake, world, declared.upload_id, PAGE, tenant_id=world.other_tenant, sources=frozenset({SOURCE})
        )


def test_an_expired_upload_is_not_found_so_the_collector_declares_again(
    world: World, context: IntakeContext, intake: IntakeService
) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None
    assert declared.expires_at is not None
    later = IntakeService(
        IntakeContext(
            db=context.db,
            store=context.store,
            epochs=context.epochs,
            enqueuer=context.enqueuer,
            limits=context.limits,
            clock=lambda: declared.expires_at + timedelta(seconds=1),  # type: ignore[operator]
        )
    )

    with pytest.raises(NotFound, match="declare again"):
        later.open_upload(world.principal(), declared.upload_id)


def test_identical_bytes_in_two_tenants_are_two_objects_and_two_artifacts(
    world: World, intake: IntakeService, store: FilesystemObjectStore, owner_db: Database
) -> None:
    for tenant in (world.tenant, world.other_tenant):
        declared = intake.declare_upload(world.principal(tenant_id=tenant), declaration())
        assert declared.status == "pending"
        assert declared.upload_id is not None
        put(intake, world, declared.upload_id, PAGE, tenant_id=tenant)

    assert store.exists(evidence_key(world.tenant, PAGE_SHA256))
    assert store.exists(evidence_key(world.other_tenant, PAGE_SHA256))
    assert row_counts(owner_db, world.tenant)["artifact"] == 1
    assert row_counts(owner_db, world.other_tenant)["artifact"] == 1


def test_declaring_a_stored_digest_with_another_media_type_is_immutable_metadata_conflict(
    world: World,
    intake: IntakeService,
) -> None:
    declared = intake.declare_upload(world.principal(), declaration())
    assert declared.upload_id is not None
    put(intake, world, declared.upload_id, PAGE)

    with pytest.raises(ImmutableMetadataConflict):
        intake.declare_upload(world.principal(), declaration(media_type="text/plain"))


def test_an_object_stored_without_its_row_is_adopted_by_the_next_declare(
    world: World, intake: IntakeService, store: FilesystemObjectStore, owner_db: Database
) -> None:
    # A crash between put_if_absent and the artifact row (AW-02 puts the artifact before the transaction).
    store.put_if_absent(
        evidence_key(world.tenant, PAGE_SHA256, bucket=EVIDENCE_BUCKET), PAGE, PAGE_SHA256, "text/html"
    )

    declared = intake.declare_upload(world.principal(), declaration())

    assert declared.status == "already_stored"
    assert world.counts(owner_db)["artifact"] == 1

"""if_capture_submit over HTTP: 202 with a durable receipt, 200 on an idempotent replay, and one test per error
row of the seed's table; a refused request persists nothing."""

from __future__ import annotations

import httpx

from prw_api.intake import create_app
from prw_api.server import BackgroundServer
from prw_platform.auth import ProvisionedClient, revoke_client
from prw_platform.auth.scopes import ARTIFACTS_WRITE, RECEIPTS_READ
from prw_platform.config import Settings
from prw_platform.contracts import ResolutionJob
from prw_platform.db.database import Database
from prw_platform.queues.postgres import PostgresQueue
from prw_platform.resolver.intake import IntakeContext, IntakeService, QueueJobEnqueuer
from prw_platform.storage import evidence_key
from tests.e2e.intake.conftest import Collector, IntakeApiServices, SwitchableStore, token_for
from tests.e2e.intake.flows import capture, error_of, submit, upload
from tests.integration.intake.helpers import PAGE_SHA256, SOURCE, UNGRANTED_SOURCE, World, job_rows


def test_a_capture_is_202_with_a_receipt_and_its_job_is_queued_after_commit(
    world: World, collector: Collector, queue: PostgresQueue, owner_db: Database
) -> None:
    ref = upload(collector)

    response = submit(collector, capture(ref))

    assert response.status_code == 202
    receipt = response.json()
    assert receipt["status"] == "stored"
    assert receipt["links"]["receipt"] == f"/v1/receipts/{receipt['receipt_id']}"
    assert response.headers["location"] == receipt["links"]["receipt"]
    [row] = job_rows(owner_db, world.tenant)
    assert row["status"] == "enqueued"
    [message] = queue.receive(1)
    job = ResolutionJob.from_message(message.json())
    assert job.job_id == message.message_id == f"{receipt['capture_id']}:extract:1"
    assert (job.tenant_id, job.receipt_id, job.source_id) == (world.tenant, receipt["receipt_id"], SOURCE)
    assert [a.ref for a in job.artifacts] == [ref]


def test_same_key_and_same_body_is_200_with_the_existing_receipt(
    world: World, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    first = submit(collector, capture(ref))

    again = submit(collector, capture(ref))

    assert again.status_code == 200
    assert again.json() == first.json()
    assert world.counts(owner_db)["capture"] == 1


def test_same_key_and_another_body_is_409_idempotency_conflict_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    submit(collector, capture(ref))
    before = world.counts(owner_db)

    response = submit(collector, capture(ref, native_record_id="p5-2t-hs"))

    assert error_of(response) == (409, "IDEMPOTENCY_CONFLICT", False)
    assert world.counts(owner_db) == before


def test_an_invalid_body_is_422_validation_failed_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    before = world.counts(owner_db)
    body = capture(ref)
    del body["observed_at"]

    for invalid in (body, capture(ref, schema_version="capture/2"), capture(ref, artifacts=[])):
        response = submit(collector, invalid)
        assert error_of(response) == (422, "VALIDATION_FAILED", False)
    not_json = collector.http.post(
        "/v1/captures",
        content=b"{not json",
        headers={**collector.headers, "Idempotency-Key": "k1", "Content-Type": "application/json"},
    )
    assert error_of(not_json) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == before


def test_a_missing_idempotency_key_is_422_validation_failed(
    world: World, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    before = world.counts(owner_db)

    response = submit(collector, capture(ref), key=None)

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert "Idempotency-Key" in response.json()["error"]["message"]
    assert world.counts(owner_db) == before


def test_an_unstored_artifact_is_422_artifact_not_stored_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database
) -> None:
    response = submit(collector, capture(evidence_key(world.tenant, PAGE_SHA256).ref))

    assert error_of(response) == (422, "ARTIFACT_NOT_STORED", False)
    assert world.counts(owner_db) == dict.fromkeys(world.counts(owner_db), 0)


def test_an_ungranted_source_is_403_tenant_scope_denied_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    before = world.counts(owner_db)

    response = submit(collector, capture(ref, source_id=UNGRANTED_SOURCE))

    assert error_of(response) == (403, "TENANT_SCOPE_DENIED", False)
    assert world.counts(owner_db) == before


def test_a_supplied_tenant_of_another_tenant_is_403_tenant_scope_denied(
    world: World, collector: Collector
) -> None:
    ref = upload(collector)

    response = submit(collector, capture(ref, tenant_id=world.other_tenant))

    assert error_of(response) == (403, "TENANT_SCOPE_DENIED", False)


def test_a_conflicting_instance_is_403_attribution_denied_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    before = world.counts(owner_db)

    response = submit(collector, capture(ref, instance_id="ci_not_me"))

    assert error_of(response) == (403, "ATTRIBUTION_DENIED", False)
    assert world.counts(owner_db) == before


def test_no_token_or_a_bad_token_is_401_invalid_token(
    world: World, http: httpx.Client, owner_db: Database
) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-jwt"}, {"Authorization": "Basic abc"}):
        response = http.post(
            "/v1/captures", json=capture("r2://x"), headers={**headers, "Idempotency-Key": "k"}
        )
        assert error_of(response) == (401, "INVALID_TOKEN", False)
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert world.counts(owner_db) == dict.fromkeys(world.counts(owner_db), 0)


def test_a_revoked_client_is_401_credential_revoked_and_persists_nothing(
    world: World, collector: Collector, client: ProvisionedClient, resolver_db: Database, owner_db: Database
) -> None:
    ref = upload(collector)
    before = world.counts(owner_db)
    revoke_client(resolver_db, world.tenant, client.client_id)

    response = submit(collector, capture(ref))

    assert error_of(response) == (401, "CREDENTIAL_REVOKED", False)
    assert world.counts(owner_db) == before


def test_a_revoked_client_with_a_malformed_body_is_still_401_credential_revoked(
    world: World, collector: Collector, client: ProvisionedClient, resolver_db: Database, owner_db: Database
) -> None:
    # The credential answers before the body: with a valid client the same body is a 422.
    malformed = {"schema_version": "capture/1", "source_id": SOURCE}
    assert error_of(submit(collector, malformed, key="m1"))[:2] == (422, "VALIDATION_FAILED")
    before = world.counts(owner_db)
    revoke_client(resolver_db, world.tenant, client.client_id)

    response = submit(collector, malformed, key="m2")

    assert error_of(response) == (401, "CREDENTIAL_REVOKED", False)
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert world.counts(owner_db) == before


def test_without_captures_write_the_submit_is_403_missing_scope(
    world: World, http: httpx.Client, client: ProvisionedClient, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    narrow = Collector(http, token_for(http, client, f"{ARTIFACTS_WRITE} {RECEIPTS_READ}"))
    before = world.counts(owner_db)

    response = submit(narrow, capture(ref))

    assert error_of(response) == (403, "MISSING_SCOPE", False)
    assert world.counts(owner_db) == before


def test_a_database_outage_is_503_storage_unavailable_with_retry_after(
    world: World,
    settings: Settings,
    services: IntakeApiServices,
    store: SwitchableStore,
    queue: PostgresQueue,
    client: ProvisionedClient,
) -> None:
    # The collector authenticates (its token service reaches the database), but the intake's database pool
    # cannot get a connection: a server that is down.
    unreachable = Database(
        "postgresql://prw@127.0.0.1:9/prw?connect_timeout=1", role="resolver_app", pool_timeout_s=0.5
    ).open(wait=False)
    down = IntakeService(
        IntakeContext(
            db=unreachable,
            store=store,
            epochs=services.intake.context.epochs,
            enqueuer=QueueJobEnqueuer(queue),
        )
    )
    try:
        with (
            BackgroundServer(create_app(settings, down, services.auth, services.collectors)) as server,
            httpx.Client(base_url=server.url, timeout=10) as http,
        ):
            collector = Collector(http, token_for(http, client))
            response = submit(collector, capture(evidence_key(world.tenant, PAGE_SHA256).ref))
    finally:
        unreachable.close()

    assert error_of(response) == (503, "STORAGE_UNAVAILABLE", True)
    assert int(response.headers["retry-after"]) > 0


def test_execution_region_and_egress_are_accepted_and_stored_on_the_capture(
    world: World, collector: Collector, owner_db: Database
) -> None:
    region = {"country": "DE", "label": "Frankfurt regional host", "declared_by": "operator"}
    egress = {"country": "DE", "verified": False}

    response = submit(collector, capture(upload(collector), execution_region=region, egress=egress))

    assert response.status_code == 202, response.text
    with owner_db.transaction(read_only=True) as conn:
        row = conn.execute(
            "SELECT execution_region, egress FROM resolver.capture WHERE capture_id = %s",
            (response.json()["capture_id"],),
        ).fetchone()
    assert row is not None
    assert (row["execution_region"], row["egress"]) == (region, egress)


def test_a_malformed_egress_is_422_validation_failed_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    before = world.counts(owner_db)

    response = submit(collector, capture(ref, egress={"country": "Germany", "verified": False}))

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == before

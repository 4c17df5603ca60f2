"""if_receipt_get over HTTP: a collector reads the receipts of its own stable instance."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from prw_platform.auth import ClientSpec, ProvisionedClient, create_client, revoke_client
from prw_platform.auth.scopes import ARTIFACTS_WRITE, CAPTURES_WRITE
from prw_platform.db.database import Database
from prw_platform.resolver.intake.receipts import record_failure
from tests.e2e.intake.conftest import Collector, token_for
from tests.e2e.intake.flows import capture, error_of, submit, upload
from tests.integration.intake.helpers import CATALOG, INSTANCE, OTHER_TENANT_SOURCE, SOURCE, WORKER, World


@pytest.fixture
def receipt(collector: Collector) -> dict[str, str]:
    response = submit(collector, capture(upload(collector)))
    assert response.status_code == 202
    body: dict[str, str] = response.json()
    return body


def test_a_collector_reads_its_own_receipt(collector: Collector, receipt: dict[str, str]) -> None:
    response = collector.http.get(f"/v1/receipts/{receipt['receipt_id']}", headers=collector.headers)

    assert response.status_code == 200
    assert response.json() == receipt


def test_a_rotated_credential_of_the_same_instance_reads_the_receipt(
    world: World, http: httpx.Client, resolver_db: Database, receipt: dict[str, str]
) -> None:
    rotated = create_client(
        resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, (SOURCE,)), supersede=True
    )
    fresh = Collector(http, token_for(http, rotated))

    response = fresh.http.get(f"/v1/receipts/{receipt['receipt_id']}", headers=fresh.headers)

    assert response.status_code == 200


def test_another_instance_is_403_instance_scope_denied(
    world: World, http: httpx.Client, resolver_db: Database, receipt: dict[str, str]
) -> None:
    sibling = create_client(
        resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, "ci_lumen_fra_02", (SOURCE,))
    )
    other = Collector(http, token_for(http, sibling))

    response = other.http.get(f"/v1/receipts/{receipt['receipt_id']}", headers=other.headers)

    assert error_of(response) == (403, "INSTANCE_SCOPE_DENIED", False)


def test_another_tenant_is_403_tenant_scope_denied(
    world: World, http: httpx.Client, resolver_db: Database, receipt: dict[str, str]
) -> None:
    foreign = create_client(
        resolver_db, ClientSpec(world.other_tenant, CATALOG, WORKER, INSTANCE, (OTHER_TENANT_SOURCE,))
    )
    other = Collector(http, token_for(http, foreign))

    response = other.http.get(f"/v1/receipts/{receipt['receipt_id']}", headers=other.headers)

    assert error_of(response) == (403, "TENANT_SCOPE_DENIED", False)


def test_an_unknown_receipt_is_404_not_found(collector: Collector) -> None:
    response = collector.http.get("/v1/receipts/rcpt_000000000000000000000000", headers=collector.headers)

    assert error_of(response) == (404, "NOT_FOUND", False)


def test_without_receipts_read_the_lookup_is_403_missing_scope(
    http: httpx.Client, client: ProvisionedClient, receipt: dict[str, str]
) -> None:
    narrow = Collector(http, token_for(http, client, f"{ARTIFACTS_WRITE} {CAPTURES_WRITE}"))

    response = narrow.http.get(f"/v1/receipts/{receipt['receipt_id']}", headers=narrow.headers)

    assert error_of(response) == (403, "MISSING_SCOPE", False)


def test_the_openapi_document_has_stable_operation_ids_and_the_collector_oauth2_scheme(
    http: httpx.Client,
) -> None:
    document = http.get("/openapi.json").json()

    operations = {op["operationId"] for path in document["paths"].values() for op in path.values()}
    assert operations == {
        "issueToken",
        "registerWorker",
        "workerHeartbeat",
        "declareArtifactUpload",
        "uploadArtifactBytes",
        "submitCapture",
        "getReceipt",
        "getExportEvents",
        "reportExportProgress",
    }
    assert "collectorOAuth2" in document["components"]["securitySchemes"]


def test_an_unknown_route_gets_the_platform_error_body(http: httpx.Client) -> None:
    assert error_of(http.get("/v1/nothing-here")) == (404, "NOT_FOUND", False)


def test_a_revoked_client_is_401_credential_revoked(
    world: World,
    collector: Collector,
    client: ProvisionedClient,
    resolver_db: Database,
    receipt: dict[str, str],
) -> None:
    revoke_client(resolver_db, world.tenant, client.client_id)

    response = collector.http.get(f"/v1/receipts/{receipt['receipt_id']}", headers=collector.headers)

    assert error_of(response) == (401, "CREDENTIAL_REVOKED", False)


def test_a_stored_receipt_has_no_reason_and_a_failed_one_shows_its_dead_letter_code(
    world: World, collector: Collector, resolver_db: Database, receipt: dict[str, str]
) -> None:
    assert receipt["status"] == "stored"
    assert "reason" not in receipt
    # What the resolution consumer does when the capture's job is dead-lettered (tests/integration/resolution).
    resolver_db.run(
        lambda conn: record_failure(
            conn, world.tenant, receipt["capture_id"], "DIGEST_MISMATCH", datetime.now(UTC)
        ),
        tenant_id=world.tenant,
    )

    response = collector.http.get(f"/v1/receipts/{receipt['receipt_id']}", headers=collector.headers)

    assert response.status_code == 200
    assert response.json() == receipt | {"status": "failed", "reason": "DIGEST_MISMATCH"}

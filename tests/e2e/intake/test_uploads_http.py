"""if_artifact_upload over HTTP: declare, streamed PUT, and one test per error row of the seed's table."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import httpx

from prw_platform.auth import ClientSpec, ProvisionedClient, create_client, revoke_client
from prw_platform.auth.scopes import CAPTURES_WRITE, RECEIPTS_READ
from prw_platform.db.database import Database
from prw_platform.storage import FilesystemObjectStore, evidence_key
from tests.e2e.intake.conftest import MAX_ARTIFACT_BYTES, Collector, SwitchableStore, token_for
from tests.e2e.intake.flows import declare, error_of, put_bytes
from tests.integration.intake.helpers import (
    CATALOG,
    OTHER_TENANT_SOURCE,
    PAGE,
    PAGE_SHA256,
    SOURCE,
    UNGRANTED_SOURCE,
    WORKER,
    World,
)


def test_declare_then_streamed_put_stores_the_artifact(
    world: World, collector: Collector, store: FilesystemObjectStore, owner_db: Database
) -> None:
    declared = declare(collector)

    assert declared.status_code == 201
    body = declared.json()
    assert body["status"] == "pending"
    assert body["ref"] == f"r2://evidence-private/{world.tenant}/{PAGE_SHA256}"
    assert body["target"]["method"] == "PUT"
    assert body["target"]["url"].endswith(f"/v1/artifacts/uploads/{body['upload_id']}")
    assert body["target"]["headers"] == {"Content-Type": "text/html", "Content-Length": str(len(PAGE))}

    stored = put_bytes(collector, body["target"]["url"], PAGE, body["target"]["headers"])

    assert stored.status_code == 200
    assert stored.json()["status"] == "stored"
    assert stored.json()["bytes"] == len(PAGE)
    assert store.get(evidence_key(world.tenant, PAGE_SHA256), verify=True).data == PAGE
    assert world.counts(owner_db)["artifact"] == 1


def test_a_chunked_body_without_content_length_is_streamed_and_stored(collector: Collector) -> None:
    data = bytes(range(256)) * 200  # 51,200 bytes, in 4 KiB chunks
    url = declare(collector, data).json()["target"]["url"]

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(data), 4096):
            yield data[start : start + 4096]

    stored = collector.http.put(url, content=chunks(), headers=collector.headers)

    assert stored.status_code == 200
    assert stored.json()["sha256"] == hashlib.sha256(data).hexdigest()


def test_declaring_stored_bytes_again_is_200_already_stored(collector: Collector) -> None:
    body = declare(collector).json()
    put_bytes(collector, body["target"]["url"], PAGE)

    again = declare(collector)

    assert again.status_code == 200
    assert again.json() == {"status": "already_stored", "ref": body["ref"], "sha256": PAGE_SHA256}


def test_wrong_bytes_are_422_digest_mismatch_and_store_nothing(
    world: World, collector: Collector, owner_db: Database
) -> None:
    url = declare(collector).json()["target"]["url"]

    response = put_bytes(collector, url, PAGE.replace(b"Lumen", b"Lumex"))

    assert error_of(response) == (422, "DIGEST_MISMATCH", False)
    assert world.counts(owner_db)["artifact"] == 0


def test_a_streamed_body_longer_than_declared_is_refused_with_422_digest_mismatch(
    world: World, collector: Collector, owner_db: Database
) -> None:
    url = declare(collector).json()["target"]["url"]

    def chunks() -> Iterator[bytes]:
        yield PAGE
        yield b"<!-- and more than was declared -->" * 100

    response = collector.http.put(url, content=chunks(), headers=collector.headers)

    assert error_of(response) == (422, "DIGEST_MISMATCH", False)
    assert world.counts(owner_db)["artifact"] == 0


def test_declaring_more_than_the_limit_is_413_artifact_too_large_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database
) -> None:
    response = declare(collector, b"x" * (MAX_ARTIFACT_BYTES + 1))

    assert error_of(response) == (413, "ARTIFACT_TOO_LARGE", False)
    assert world.counts(owner_db)["artifact_upload"] == 0


def test_a_put_announcing_more_than_the_limit_is_413_before_the_body_is_read(collector: Collector) -> None:
    url = declare(collector).json()["target"]["url"]

    response = put_bytes(collector, url, b"x" * (MAX_ARTIFACT_BYTES + 1))

    assert error_of(response) == (413, "ARTIFACT_TOO_LARGE", False)


def test_a_missing_source_selector_is_403_attribution_denied(
    world: World, collector: Collector, owner_db: Database
) -> None:
    response = declare(collector, source_id=None)

    assert error_of(response) == (403, "ATTRIBUTION_DENIED", False)
    assert world.counts(owner_db)["artifact_upload"] == 0


def test_a_conflicting_worker_is_403_attribution_denied(collector: Collector) -> None:
    assert error_of(declare(collector, worker_id="cw_someone_else")) == (403, "ATTRIBUTION_DENIED", False)


def test_an_ungranted_source_is_403_source_scope_denied(
    world: World, collector: Collector, owner_db: Database
) -> None:
    response = declare(collector, source_id=UNGRANTED_SOURCE)

    assert error_of(response) == (403, "SOURCE_SCOPE_DENIED", False)
    assert world.counts(owner_db)["artifact_upload"] == 0


def test_another_tenants_source_is_403_tenant_scope_denied(collector: Collector) -> None:
    assert error_of(declare(collector, source_id=OTHER_TENANT_SOURCE)) == (403, "TENANT_SCOPE_DENIED", False)


def test_without_artifacts_write_the_declare_is_403_missing_scope(
    http: httpx.Client, client: ProvisionedClient
) -> None:
    narrow = Collector(http, token_for(http, client, f"{CAPTURES_WRITE} {RECEIPTS_READ}"))

    response = declare(narrow)

    assert error_of(response) == (403, "MISSING_SCOPE", False)
    assert "insufficient_scope" in response.headers["www-authenticate"]


def test_a_revoked_client_is_401_credential_revoked(
    world: World, collector: Collector, client: ProvisionedClient, resolver_db: Database, owner_db: Database
) -> None:
    revoke_client(resolver_db, world.tenant, client.client_id)

    response = declare(collector)

    assert error_of(response) == (401, "CREDENTIAL_REVOKED", False)
    assert world.counts(owner_db)["artifact_upload"] == 0


def test_another_instances_upload_is_403_instance_scope_denied(
    world: World, http: httpx.Client, collector: Collector, resolver_db: Database
) -> None:
    url = declare(collector).json()["target"]["url"]
    sibling = create_client(
        resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, "ci_lumen_fra_02", (SOURCE,))
    )

    response = put_bytes(Collector(http, token_for(http, sibling)), url, PAGE)

    assert error_of(response) == (403, "INSTANCE_SCOPE_DENIED", False)


def test_an_unknown_upload_is_404_not_found(collector: Collector) -> None:
    response = put_bytes(collector, "/v1/artifacts/uploads/upl_000000000000000000000000", PAGE)

    assert error_of(response) == (404, "NOT_FOUND", False)


def test_a_storage_outage_is_503_storage_unavailable_with_retry_after_and_the_retry_succeeds(
    collector: Collector, store: SwitchableStore
) -> None:
    url = declare(collector).json()["target"]["url"]
    store.available = False

    response = put_bytes(collector, url, PAGE)

    assert error_of(response) == (503, "STORAGE_UNAVAILABLE", True)
    assert int(response.headers["retry-after"]) > 0
    store.available = True
    assert put_bytes(collector, url, PAGE).status_code == 200

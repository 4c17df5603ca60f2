"""Snapshot exports and the leased export stream (seed 003 if_projection_bootstrap) on real
parts: decisions (AW-01), the relay (AW-03), the pruner, the ``exports`` stage, the intake origin on loopback and
a product principal with scope exports:read. One test per error row of the seed's table (202 pending, 401
CREDENTIAL_REVOKED, 403 TENANT_SCOPE_DENIED, 410 EXPORT_EXPIRED, 503 UNAVAILABLE), and the 410 rows of the
export stream (a stale cursor, an expired lease)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
import psycopg
import pytest

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.auth import TokenSettings
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Database
from prw_platform.epochs import issue_epoch
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.exports.snapshots import AGGREGATES, ExportLinks, SnapshotExports
from prw_platform.resolver.stream.retention import LIVE_CONSUMER, RetentionStatus, RetentionUnavailable
from prw_platform.runtime import Budget, run_stage
from prw_platform.services import COLLECTOR_SCOPES, PRODUCT_SCOPES, ClientSpec, ProvisionedClient
from tests.e2e.product.decisions import create_and_map
from tests.support.postgres import fresh_deployment_settings

TENANT = "ten_snap"
LEASE_TTL = 600


@dataclass
class MovableClock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def advance(self, by: timedelta) -> None:
        self.now += by


@dataclass
class World:
    """The module's platform and intake origin (one per module: the suite's budget)."""

    platform: Platform
    clock: MovableClock
    url: str
    catalogs: int = 0


@dataclass
class Deployment:
    """One test's catalog (provisioned for it, automatic release policy) on the module's platform."""

    platform: Platform
    clock: MovableClock
    url: str
    catalog: str
    source: str
    product: ProvisionedClient
    collector: ProvisionedClient
    stream: StreamKey

    def decide(self, items: int, start: int = 1) -> None:
        for n in range(start, start + items):
            self.platform.decisions.decide(
                create_and_map(self.catalog, self.source, self.catalog, n), TENANT, self.catalog
            )

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)


@pytest.fixture(scope="module")
def world(
    pg_admin_url: str, pg_templates: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    # Tokens are checked against the wall clock; the retention clock starts there and the tests move it.
    clock = MovableClock(datetime.now(UTC))
    with fresh_deployment_settings(
        pg_admin_url,
        pg_templates,
        tmp_path_factory.mktemp("prw-snap"),
        "prw_snap",
        retention_age_seconds=3600,
        retention_lease_ttl_seconds=LEASE_TTL,
    ) as settings:
        # The tests move the platform clock by hours; tokens (verified by PyJWT on the wall clock too) tolerate it.
        tokens = TokenSettings(ttl_seconds=86_400, leeway_seconds=86_400)
        with (
            bootstrap(settings, clock=clock, token_settings=tokens) as platform,
            BackgroundServer(compose.intake_app(platform)) as intake,
        ):
            yield World(platform, clock, intake.url)


@pytest.fixture
def deployment(world: World) -> Deployment:
    # Exports an earlier test left pending are built first, so a test counts only its own.
    while run_stage(world.platform, "exports").counts:
        pass
    world.catalogs += 1
    catalog, source = f"cat_snap_{world.catalogs}", f"src_snap_{world.catalogs}"
    platform = world.platform
    provisioned = platform.catalogs.provision(
        CatalogSpec(TENANT, catalog, "Snap", "automatic", (SourceSpec(source, "Snap web"),))
    )
    product = platform.clients.create(
        ClientSpec(TENANT, catalog, "product", "product_live", (), PRODUCT_SCOPES)
    )
    collector = platform.clients.create(
        ClientSpec(TENANT, catalog, "cw_snap", f"ci_snap_{world.catalogs:02d}", (source,), COLLECTOR_SCOPES)
    )
    return Deployment(
        platform, world.clock, world.url, catalog, source, product, collector, provisioned.stream
    )


def status_of(deployment: Deployment) -> RetentionStatus:
    """The retention status of the test's own catalog."""
    return next(s for s in deployment.platform.retention_status() if s.catalog_id == deployment.catalog)


def bearer(http: httpx.Client, client: ProvisionedClient) -> dict[str, str]:
    response = http.post(
        "/v1/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": client.client_id,
            "client_secret": client.client_secret,
        },
    )
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def request_export(http: httpx.Client, headers: dict[str, str], key: str, **body: object) -> httpx.Response:
    return http.post("/v1/exports/snapshots", json=body, headers={**headers, "Idempotency-Key": key})


def test_an_export_is_pending_then_ready_at_the_committed_cursor_with_one_checksummed_object_per_type(
    deployment: Deployment,
) -> None:
    platform = deployment.platform
    deployment.decide(3)  # each: item, listing, mapping (+ release.authorized: automatic policy)
    committed = status_of(deployment).committed_position
    with deployment.http() as http:
        headers = bearer(http, deployment.product)
        first = request_export(http, headers, "rebuild-1", tenant_id=TENANT, catalog_id=deployment.catalog)
        again = request_export(http, headers, "rebuild-1", tenant_id=TENANT, catalog_id=deployment.catalog)
        assert (first.status_code, again.status_code) == (202, 202)
        export_id = first.json()["export_id"]
        assert again.json()["export_id"] == export_id
        assert first.json()["status"] == "pending"
        polled = http.get(f"/v1/exports/snapshots/{export_id}", headers=headers)
        assert (polled.status_code, polled.json()["status"]) == (202, "pending")

        assert run_stage(platform, "exports").counts == {"ready": 1}

        ready = http.get(f"/v1/exports/snapshots/{export_id}", headers=headers)
        assert ready.status_code == 200, ready.text
        manifest = ready.json()
        assert (manifest["status"], manifest["position"]) == ("ready", committed)
        assert manifest["history_epoch"] == deployment.stream.history_epoch
        assert [o["aggregate"] for o in manifest["objects"]] == list(AGGREGATES)
        contents = {}
        for obj in manifest["objects"]:
            body = httpx.get(obj["url"], timeout=30)  # the signed link is the credential: no bearer
            assert body.status_code == 200, body.text
            assert hashlib.sha256(body.content).hexdigest() == obj["sha256"]
            lines = [json.loads(line) for line in body.content.decode().splitlines()]
            assert len(lines) == obj["count"]
            contents[obj["aggregate"]] = lines
        assert [line["aggregate"]["revision"] for line in contents["catalog_item"]] == [1, 1, 1]
        assert {line["payload"]["item"] for line in contents["listing_mapping"]} == {
            line["aggregate"]["id"] for line in contents["catalog_item"]
        }
        assert contents["release"][0]["publication_revision"] == 3

        # The lease pins the stream at W: the retained tail after W is served under it.
        deployment.decide(1, start=4)
        tail = http.get(
            "/v1/exports/events",
            params={
                "after": committed,
                "history_epoch": manifest["history_epoch"],
                "lease_id": manifest["lease_id"],
            },
            headers=headers,
        )
        assert tail.status_code == 200, tail.text
        assert next(e["sequence"] for e in tail.json()["events"]) == committed + 1
    (lease,) = status_of(deployment).leases
    assert (lease.lease_id, lease.pinned_at) == (manifest["lease_id"], committed)


def test_the_snapshot_reads_accepted_state_not_the_outbox(deployment: Deployment) -> None:
    """After pruning, the outbox holds almost nothing: the export still carries every item at W."""
    platform = deployment.platform
    deployment.decide(3)
    run_stage(platform, "relay", Budget(batches=5))
    committed = status_of(deployment).committed_position
    platform.retention.report_progress(deployment.stream, LIVE_CONSUMER, committed)
    deployment.clock.advance(timedelta(hours=2))
    assert run_stage(platform, "prune").taken == committed - 1
    with deployment.http() as http:
        headers = bearer(http, deployment.product)
        export_id = request_export(http, headers, "after-prune", aggregates=["catalog_item"]).json()[
            "export_id"
        ]
        run_stage(platform, "exports")
        manifest = http.get(f"/v1/exports/snapshots/{export_id}", headers=headers).json()
        (obj,) = manifest["objects"]
        assert (manifest["position"], obj["count"]) == (committed, 3)
    # The lease was pinned after P (committed - 1), then advanced to W.
    assert status_of(deployment).leases[0].pinned_at == committed


def test_an_export_aborts_when_the_history_epoch_changes(deployment: Deployment) -> None:
    platform = deployment.platform
    deployment.decide(1)
    with deployment.http() as http:
        headers = bearer(http, deployment.product)
        export_id = request_export(http, headers, "fenced").json()["export_id"]
        issue_epoch(platform.control_db, TENANT, deployment.catalog, "a restore is being fenced")
        assert run_stage(platform, "exports").counts == {"failed": 1}
        failed = http.get(f"/v1/exports/snapshots/{export_id}", headers=headers)
    assert failed.status_code == 410
    assert failed.json()["error"]["code"] == "EXPORT_EXPIRED"
    # Its lease was released: it pins nothing.
    assert status_of(deployment).leases == ()


def test_a_ready_export_whose_lease_expired_is_gone_and_renewal_keeps_it(deployment: Deployment) -> None:
    platform = deployment.platform
    deployment.decide(1)
    with deployment.http() as http:
        headers = bearer(http, deployment.product)
        export_id = request_export(http, headers, "renewed").json()["export_id"]
        run_stage(platform, "exports")
        deployment.clock.advance(timedelta(seconds=LEASE_TTL - 60))
        renewed = http.post(f"/v1/exports/snapshots/{export_id}/lease", headers=headers)
        assert renewed.status_code == 200, renewed.text
        deployment.clock.advance(timedelta(seconds=LEASE_TTL - 60))
        assert http.get(f"/v1/exports/snapshots/{export_id}", headers=headers).status_code == 200
        deployment.clock.advance(timedelta(seconds=120))
        expired = http.get(f"/v1/exports/snapshots/{export_id}", headers=headers)
        again = http.post(f"/v1/exports/snapshots/{export_id}/lease", headers=headers)
    assert (expired.status_code, expired.json()["error"]["code"]) == (410, "EXPORT_EXPIRED")
    assert (again.status_code, again.json()["error"]["code"]) == (410, "EXPORT_EXPIRED")


def test_an_object_link_is_scoped_to_its_export_and_object(deployment: Deployment) -> None:
    platform = deployment.platform
    deployment.decide(1)
    with deployment.http() as http:
        headers = bearer(http, deployment.product)
        first = request_export(http, headers, "one", aggregates=["catalog_item", "listing"]).json()[
            "export_id"
        ]
        second = request_export(http, headers, "two", aggregates=["catalog_item"]).json()["export_id"]
        run_stage(platform, "exports", Budget(batches=2))
        objects = http.get(f"/v1/exports/snapshots/{first}", headers=headers).json()["objects"]
        token = objects[0]["url"].split("token=")[1]
        other_export = http.get(
            f"/v1/exports/snapshots/{second}/objects/catalog_item", params={"token": token}
        )
        other_object = http.get(f"/v1/exports/snapshots/{first}/objects/listing", params={"token": token})
        forged = http.get(
            f"/v1/exports/snapshots/{first}/objects/catalog_item", params={"token": token + "x"}
        )
        deployment.clock.advance(timedelta(minutes=16))
        stale = http.get(objects[0]["url"])
    assert [r.status_code for r in (other_export, other_object, forged)] == [404, 404, 404]
    assert (stale.status_code, stale.json()["error"]["code"]) == (410, "EXPORT_EXPIRED")


@pytest.mark.parametrize(
    ("case", "status", "code"),
    [
        ("revoked client", 401, "CREDENTIAL_REVOKED"),
        ("another catalog", 403, "TENANT_SCOPE_DENIED"),
        ("another tenant", 403, "TENANT_SCOPE_DENIED"),
        ("collector token without exports:read", 403, "MISSING_SCOPE"),
        ("no Idempotency-Key", 422, "VALIDATION_FAILED"),
        ("unknown aggregate", 422, "VALIDATION_FAILED"),
        ("same key, other aggregates", 409, "IDEMPOTENCY_CONFLICT"),
    ],
)
def test_export_request_error_rows_persist_nothing(
    deployment: Deployment, case: str, status: int, code: str
) -> None:
    with deployment.http() as http:
        headers = bearer(http, deployment.product)
        body: dict[str, object] = {}
        key: str | None = "k-1"
        if case == "revoked client":
            deployment.platform.clients.revoke(TENANT, deployment.product.client_id)
        elif case == "another catalog":
            body["catalog_id"] = "cat_other"
        elif case == "another tenant":
            body["tenant_id"] = "ten_other"
        elif case == "collector token without exports:read":
            headers = bearer(http, deployment.collector)
        elif case == "no Idempotency-Key":
            key = None
        elif case == "unknown aggregate":
            body["aggregates"] = ["catalog_item", "inventory_everything"]
        else:
            assert request_export(http, headers, "k-1", aggregates=["catalog_item"]).status_code == 202
            body["aggregates"] = ["listing"]
        extra = {} if key is None else {"Idempotency-Key": key}
        response = http.post("/v1/exports/snapshots", json=body, headers={**headers, **extra})
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    with psycopg.connect(deployment.platform.urls.main) as conn:
        stored = conn.execute(
            "SELECT count(*) FROM resolver.export_snapshot WHERE catalog_id = %s", (deployment.catalog,)
        ).fetchone()
    assert stored == ((1,) if case == "same key, other aggregates" else (0,))


def test_export_stream_410_for_a_stale_cursor_and_an_expired_or_unknown_lease(deployment: Deployment) -> None:
    platform = deployment.platform
    deployment.decide(2)
    run_stage(platform, "relay", Budget(batches=5))
    platform.retention.report_progress(deployment.stream, LIVE_CONSUMER, 5)
    deployment.clock.advance(timedelta(hours=2))
    assert run_stage(platform, "prune").taken == 4  # P = 4
    lease = platform.retention.create_lease(deployment.stream, "catch-up")
    epoch = deployment.stream.history_epoch
    with deployment.http() as http:
        headers = bearer(http, deployment.product)

        def events(after: int, lease_id: str | None = None) -> httpx.Response:
            params: dict[str, str | int] = {"after": after, "history_epoch": epoch}
            if lease_id is not None:
                params["lease_id"] = lease_id
            return http.get("/v1/exports/events", params=params, headers=headers)

        stale = events(3)
        at_p = events(4)
        leased = events(4, lease.lease_id)
        unknown = events(4, "lse_000000000000")
        deployment.clock.advance(timedelta(seconds=LEASE_TTL + 1))
        expired = events(4, lease.lease_id)
    assert (stale.status_code, stale.json()["error"]["code"]) == (410, "EXPORT_EXPIRED")
    assert at_p.status_code == 200
    assert next(e["sequence"] for e in at_p.json()["events"]) == 5
    assert leased.status_code == 200
    for refused in (unknown, expired):
        assert (refused.status_code, refused.json()["error"]["code"]) == (410, "EXPORT_EXPIRED")


def test_progress_report_route_is_monotonic_and_scoped(deployment: Deployment) -> None:
    deployment.decide(2)
    epoch = deployment.stream.history_epoch
    with deployment.http() as http:
        headers = bearer(http, deployment.product)
        raised = http.post(
            "/v1/exports/progress", json={"history_epoch": epoch, "position": 4}, headers=headers
        )
        lower = http.post(
            "/v1/exports/progress", json={"history_epoch": epoch, "position": 2}, headers=headers
        )
        beyond = http.post(
            "/v1/exports/progress", json={"history_epoch": epoch, "position": 99}, headers=headers
        )
        other = http.post(
            "/v1/exports/progress",
            json={"history_epoch": epoch, "position": 1, "catalog_id": "cat_other"},
            headers=headers,
        )
        unknown = http.post(
            "/v1/exports/progress", json={"history_epoch": "hep_x", "position": 1}, headers=headers
        )
    assert raised.json() == {"consumer": LIVE_CONSUMER, "acknowledged_position": 4, "advanced": True}
    assert lower.json() == {"consumer": LIVE_CONSUMER, "acknowledged_position": 4, "advanced": False}
    assert [(r.status_code, r.json()["error"]["code"]) for r in (beyond, other, unknown)] == [
        (422, "VALIDATION_FAILED"),
        (403, "TENANT_SCOPE_DENIED"),
        (404, "NOT_FOUND"),
    ]


def test_an_unavailable_database_is_503_unavailable(deployment: Deployment) -> None:
    """if_projection_bootstrap: 503 UNAVAILABLE, retry. The export service over a database nobody answers."""
    platform = deployment.platform
    unreachable = Database(
        "postgresql://postgres@127.0.0.1:1/nowhere?connect_timeout=1", role=None, max_size=1, pool_timeout_s=2
    ).open(wait=False)
    try:
        service = SnapshotExports(
            unreachable,
            unreachable,
            platform.store,
            platform.settings.exports_bucket,
            ExportLinks(platform.store, platform.settings.exports_bucket, b"0" * 32),
            current_epoch=lambda tenant, catalog: "hep_x",
        )
        principal = platform.collector_auth.authenticate(
            httpx.post(
                f"{deployment.url}/v1/oauth/token",
                data={
                    "grant_type": "client_credentials",
                    "client_id": deployment.product.client_id,
                    "client_secret": deployment.product.client_secret,
                },
            ).json()["access_token"]
        )
        with pytest.raises(RetentionUnavailable) as refused:
            service.request(principal, "k-503")
    finally:
        unreachable.close()
    assert (refused.value.status, refused.value.code, refused.value.retryable) == (503, "UNAVAILABLE", True)

"""Product rebuild into an isolated generation (seed 003 if_projection_bootstrap "Load shadow",
"Retrieve retained events", "Catch up and cut over") on real parts: decisions (AW-01), the relay (AW-03), the
live product consumer (AW-04), the ``exports`` stage, the intake origin on loopback serving the export API to a
product principal with exports:read, and the product origin answering public reads throughout.

The product side's error rows of the seed's table: 202 pending (polled), 401 CREDENTIAL_REVOKED, 403
TENANT_SCOPE_DENIED and 410 EXPORT_EXPIRED (the rebuild fails clearly, nothing swapped), 503 UNAVAILABLE
(retried, with backoff); and the rebuild's own: an unresolved dependency at or below H, a target outside [W, head].
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import httpx
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.auth import TokenSettings
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.contracts import StreamKey
from prw_platform.product import progress
from prw_platform.product.consumer.apply import ShadowTarget, apply_events
from prw_platform.product.events import parse_delivery
from prw_platform.product.gaps import HttpExportSource
from prw_platform.product.rebuild import HttpSnapshotSource, ProductRebuild, RebuildFailed
from prw_platform.product.scopes import find_scope, project_catalog
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.decisions import MapListing
from prw_platform.resolver.files.sources import UploadSource
from prw_platform.runtime import Budget, run_stage
from prw_platform.services import (
    PRODUCT_SCOPES,
    AuthorizeRelease,
    ClientSpec,
    ItemFilters,
    MerchantSpec,
    MergeItems,
    ProvisionedClient,
    RetireItem,
)
from tests.e2e.product.decisions import create_and_map
from tests.integration.files.conftest import png
from tests.support.postgres import fresh_deployment_settings

TENANT = "ten_rbd"
LEASE_TTL = 600


@dataclass
class MovableClock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Stream:
    """One catalog of the deployment, provisioned and projected, with its product principal."""

    deployment: Deployment
    catalog_id: str
    source_id: str
    client: ProvisionedClient
    epoch: str
    made: int = 0
    observations: int = 0

    @property
    def key(self) -> StreamKey:
        return StreamKey(TENANT, self.catalog_id, self.epoch)

    def decide(self, count: int) -> None:
        for _ in range(count):
            self.made += 1
            self.deployment.platform.decisions.decide(
                create_and_map(self.catalog_id, self.source_id, self.catalog_id, self.made),
                TENANT,
                self.catalog_id,
            )

    def reobserve(self, n: int, price: Decimal) -> None:
        """Listing ``n`` observed again at ``price`` (a new listing revision, its inventory appended)."""
        self.observations += 1
        created = create_and_map(self.catalog_id, self.source_id, self.catalog_id, n)
        with psycopg.connect(self.deployment.platform.urls.main) as conn:
            row = conn.execute(
                "SELECT m.item_id FROM resolver.listing_mapping m JOIN resolver.listing l USING "
                "(tenant_id, listing_id) WHERE l.tenant_id = %s AND l.catalog_id = %s AND l.native_record_id = %s",
                (TENANT, self.catalog_id, f"rec_{n}"),
            ).fetchone()
        assert row is not None
        capture = f"cap_{self.catalog_id}_{n:04d}_again_{self.observations}"
        listing = replace(
            created.listing,
            price=price,
            capture_id=capture,
            observed_at=created.listing.observed_at + timedelta(days=self.observations),
            availability="out_of_stock" if self.observations % 2 else "in_stock",
        )
        self.deployment.platform.decisions.decide(
            MapListing(
                listing=listing,
                item_id=row[0],
                actor="rule:strong_identifier@1",
                rationale="GTIN matches the item",
                idempotency_key=f"job:{self.catalog_id}:{capture}:identity:1",
            ),
            TENANT,
            self.catalog_id,
        )

    def deliver_live(self) -> None:
        """Relay the outbox and let the live consumer apply what arrived."""
        run_stage(self.deployment.platform, "relay", Budget(batches=20))
        run_stage(self.deployment.platform, "apply", Budget(batches=20))

    def source(self, **kwargs: Any) -> HttpSnapshotSource:
        export = HttpExportSource(self.deployment.url, self.client.client_id, self.client.client_secret)
        self.deployment.closers.append(export.close)
        return HttpSnapshotSource(export, backoff=lambda attempt: 0.0, **kwargs)

    def rebuild(self, source: HttpSnapshotSource | None = None, **kwargs: Any) -> ProductRebuild:
        """The rebuild service; its poll waits by running the resolver's ``exports`` stage (no sleeping)."""
        chosen = source or self.source()
        export = HttpExportSource(self.deployment.url, self.client.client_id, self.client.client_secret)
        self.deployment.closers.append(export.close)
        defaults: dict[str, Any] = {
            "source_factory": lambda: chosen,
            "gap_source_factory": lambda: export,
            "sleep": lambda seconds: run_stage(self.deployment.platform, "exports"),
            "renew_every_seconds": 0.0,
        }
        return ProductRebuild(self.deployment.platform.product_db, **{**defaults, **kwargs})

    def scope_generation(self) -> int:
        db = self.deployment.platform.product_db
        scope = db.run(lambda conn: find_scope(conn, TENANT, self.catalog_id), tenant_id=TENANT)
        assert scope is not None
        return scope.serving_generation

    def live_position(self) -> int:
        return progress.contiguous_position(
            self.deployment.platform.product_db, TENANT, self.catalog_id, self.epoch
        )


@dataclass
class Deployment:
    platform: Platform
    settings: Settings
    clock: MovableClock
    url: str
    closers: list[Callable[[], None]] = field(default_factory=list)
    catalogs: int = 0

    def stream(self, release_policy: Literal["manual", "automatic"] = "automatic") -> Stream:
        self.catalogs += 1
        catalog, source = f"cat_rbd_{self.catalogs}", f"src_rbd_{self.catalogs}"
        provisioned = self.platform.catalogs.provision(
            CatalogSpec(TENANT, catalog, "Rebuild", release_policy, (SourceSpec(source, "Rebuild web"),))
        )
        project_catalog(self.platform.product_db, TENANT, catalog, provisioned.stream.history_epoch)
        client = self.platform.clients.create(
            ClientSpec(TENANT, catalog, "product", "product_live", (), PRODUCT_SCOPES)
        )
        return Stream(self, catalog, source, client, provisioned.stream.history_epoch)


@pytest.fixture(scope="module")
def module_deployment(
    pg_admin_url: str, pg_templates: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """One deployment for the module (the suite's budget): every test provisions catalogs of its own
    (``Deployment.stream``), and the platform clock only moves forward."""
    clock = MovableClock(datetime.now(UTC))
    with fresh_deployment_settings(
        pg_admin_url,
        pg_templates,
        tmp_path_factory.mktemp("prw-rebuild"),
        "prw_rbd",
        retention_age_seconds=3600,
        retention_lease_ttl_seconds=LEASE_TTL,
        rebuild_cleanup_after_seconds=0,
    ) as settings_:
        tokens = TokenSettings(ttl_seconds=86_400, leeway_seconds=86_400)
        with (
            bootstrap(settings_, clock=clock, token_settings=tokens) as platform,
            BackgroundServer(compose.intake_app(platform)) as intake,
        ):
            built = Deployment(platform, settings_, clock, intake.url)
            try:
                yield built
            finally:
                for close in built.closers:
                    close()


@pytest.fixture
def deployment(module_deployment: Deployment) -> Deployment:
    # The clock never goes back: a test that moved it (a lease's expiry) leaves it ahead of the wall clock. The
    # generations earlier tests replaced are dropped first, so a test counts only its own.
    module_deployment.clock.now = max(module_deployment.clock.now, datetime.now(UTC)) + timedelta(seconds=1)
    while run_stage(module_deployment.platform, "rebuild-cleanup").counts.get("generations_dropped"):
        pass
    return module_deployment


# --- comparing a generation with the serial application of the stream ------------------------------------------

_COMPARED = {
    "item_projection": "item_id, revision, status, fields",
    "listing_projection": "listing_id, revision, fields",
    "listing_mapping_projection": "listing_id, item_id, revision",
    "applied_revision": "aggregate_type, aggregate_id, revision",
    # attribute_keys: what attr[...] filters compare (migration 0023), written with the row by the release path.
    "public_item": "item_id, published_revision, publication_revision, fields, attribute_keys",
    "public_listing": "listing_id, item_id, mapping_revision, listing_revision, publication_revision, fields",
    "release_pointer": "release_id, publication_revision",
    # The inventory history: one row per observed listing revision (migration 0021 exports it).
    "inventory_observation": "listing_id, listing_revision, price, currency, availability, observed_at",
}


def generation_state(
    platform: Platform, catalog_id: str, generation: int
) -> dict[str, list[tuple[Any, ...]]]:
    state = {}
    with psycopg.connect(platform.urls.main) as conn:
        for table, columns in _COMPARED.items():
            rows = conn.execute(
                f"SELECT {columns} FROM product.{table} WHERE tenant_id = %s AND catalog_id = %s "  # noqa: S608
                f"AND generation = %s ORDER BY 1, 2",
                (TENANT, catalog_id, generation),
            ).fetchall()
            state[table] = rows
    return state


def serial_application(
    stream: Stream, through: int, generation: int = 99
) -> dict[str, list[tuple[Any, ...]]]:
    """INV-08's reference: positions 1..H applied one at a time, in order, into a generation of its own."""
    export = HttpExportSource(stream.deployment.url, stream.client.client_id, stream.client.client_secret)
    try:
        after = 0
        while after < through:
            page = export.fetch(stream.key, after, 1000)
            for message in page.events:
                if message["sequence"] > through:
                    break
                apply_events(
                    stream.deployment.platform.product_db,
                    [parse_delivery(message)],
                    ShadowTarget(generation, consumer="serial_reference"),
                )
                after = message["sequence"]
            else:
                continue
            break
    finally:
        export.close()
    return generation_state(stream.deployment.platform, stream.catalog_id, generation)


def assert_same_state(
    rebuilt: dict[str, list[tuple[Any, ...]]], serial: dict[str, list[tuple[Any, ...]]]
) -> None:
    for table in _COMPARED:
        only_rebuilt = [r for r in rebuilt[table] if r not in serial[table]]
        only_serial = [r for r in serial[table] if r not in rebuilt[table]]
        assert (only_rebuilt, only_serial) == ([], []), table


# --- the happy path --------------------------------------------------------------------------------------------


def test_rebuild_loads_the_export_catches_up_the_tail_and_cuts_over_atomically(
    deployment: Deployment,
) -> None:
    stream = deployment.stream()
    stream.decide(3)
    stream.deliver_live()
    polled: list[str] = []
    phases: list[str] = []

    def pending_then_more_writes(seconds: float) -> None:
        # 202 pending: the rebuild polls; meanwhile the export gets built and the catalog moves on (the tail).
        polled.append("pending")
        run_stage(deployment.platform, "exports")
        stream.decide(2)

    rebuild = stream.rebuild(sleep=pending_then_more_writes)
    result = rebuild.run(
        TENANT, stream.catalog_id, on_progress=lambda phase, done, total: phases.append(phase)
    )

    assert polled == ["pending"]
    assert (result.previous_generation, result.generation) == (1, 2)
    assert result.start_position == 12  # 3 decisions x (item, listing, mapping, release)
    assert result.target_position == 20
    assert result.caught_up == 8
    assert {"export", "load", "catch_up", "cutover"} <= set(phases)
    assert stream.scope_generation() == 2
    assert stream.live_position() == 20
    assert_same_state(
        generation_state(deployment.platform, stream.catalog_id, 2), serial_application(stream, 20)
    )
    # if_product_query: the rebuilt generation answers attribute filters (its attribute keys were filled by the
    # shadow load): 1 TB is the item stored as 1000 GB, and only it.
    page = deployment.platform.public_catalog(TENANT, stream.catalog_id).items(
        ItemFilters(attributes=(("storage:capacity", "1 TB"),))
    )
    [capacity] = [item.fields["attributes"]["storage:capacity"] for item in page.items]
    assert (Decimal(str(capacity["value"])), capacity["unit"]) == (Decimal(1000), "GB")
    # The lease was released after the cutover: it pins nothing any more.
    status = next(s for s in deployment.platform.retention_status() if s.catalog_id == stream.catalog_id)
    assert status.leases == ()
    # Live deliveries of the tail now come as duplicates of what the shadow applied; later ones apply.
    stream.decide(1)
    stream.deliver_live()
    assert stream.live_position() == 24
    # The replaced generation is dropped later, by the cleanup (here: as soon as the platform clock passed it).
    deployment.clock.now = max(deployment.clock.now, datetime.now(UTC)) + timedelta(seconds=1)
    assert run_stage(deployment.platform, "rebuild-cleanup").counts == {"generations_dropped": 1}
    assert generation_state(deployment.platform, stream.catalog_id, 1)["item_projection"] == []


def test_a_rebuild_keeps_the_inventory_history_before_w(deployment: Deployment) -> None:
    """The resolver appends every accepted observation (migration 0021), the export carries them as its
    ``inventory_history`` object (checksummed like the others), and the shadow loads them: the rebuilt history
    equals the live one and the serial application's, not one observation per listing."""
    stream = deployment.stream()
    stream.decide(2)
    stream.reobserve(1, Decimal("119.00"))
    stream.reobserve(1, Decimal("99.50"))
    stream.deliver_live()
    live = generation_state(deployment.platform, stream.catalog_id, 1)["inventory_observation"]
    assert sorted(r[1] for r in live) == [1, 1, 2, 3]  # listing 1 at revisions 1..3, listing 2 at 1

    manifests: list[Any] = []
    source = stream.source()
    original = source.manifest

    def keep(export_id: str) -> Any:
        manifest = original(export_id)
        if manifest is not None:
            manifests.append(manifest)
        return manifest

    source.manifest = keep  # type: ignore[method-assign]
    result = stream.rebuild(source=source).run(TENANT, stream.catalog_id)
    stream.reobserve(2, Decimal("10.00"))  # and the tail after the cutover adds to it as usual
    stream.deliver_live()

    (history,) = [o for o in manifests[0].objects if o.aggregate == "inventory_history"]
    assert history.count == 4
    assert len(history.sha256) == 64
    rebuilt = generation_state(deployment.platform, stream.catalog_id, result.generation)
    added = [r for r in rebuilt["inventory_observation"] if r not in live]
    assert [(r[1], r[2]) for r in added] == [(2, Decimal("10.00"))]
    assert len(rebuilt["inventory_observation"]) == 5
    assert_same_state(rebuilt, serial_application(stream, stream.live_position()))


def test_public_reads_during_a_rebuild_each_come_from_one_generation_and_one_release(
    deployment: Deployment,
) -> None:
    stream = deployment.stream()
    stream.decide(4)
    stream.deliver_live()
    seen: list[tuple[int, str, frozenset[str], frozenset[int]]] = []
    failures: list[str] = []
    stop = threading.Event()
    product_settings = deployment.settings.model_copy(
        update={"product_tenant_id": TENANT, "product_catalog_id": stream.catalog_id}
    )
    with (
        bootstrap(product_settings) as reader,
        BackgroundServer(compose.product_app(reader)) as product,
    ):

        def read_continuously() -> None:
            with httpx.Client(base_url=product.url, timeout=30) as http:
                while not stop.is_set():
                    response = http.get("/v1/items", params={"limit": 100})
                    if response.status_code != 200:
                        failures.append(f"{response.status_code} {response.text[:200]}")
                        continue
                    body = response.json()
                    items = body["items"]
                    seen.append(
                        (
                            len(seen),
                            response.headers["ETag"],
                            frozenset(i["item"] for i in items),
                            frozenset(i["publication_revision"] for i in items),
                        )
                    )

        reader_thread = threading.Thread(target=read_continuously)
        reader_thread.start()
        try:

            def writes_while_loading(phase: str, done: int, total: int | None) -> None:
                if phase == "load":
                    stream.decide(1)

            stream.rebuild().run(TENANT, stream.catalog_id, on_progress=writes_while_loading)
            stream.deliver_live()
            deadline = len(seen) + 5
            while len(seen) < deadline and not failures and reader_thread.is_alive():
                threading.Event().wait(0.05)
        finally:
            stop.set()
            reader_thread.join()
    assert failures == []
    etags = {etag for _, etag, _, _ in seen}
    assert {e[:3] for e in etags} == {'"g1', '"g2'}, etags
    # One generation and one release per response: the same ETag always lists the same items, each of them
    # published by a release no later than the one the ETag names.
    by_etag: dict[str, set[frozenset[str]]] = {}
    for _, etag, items, revisions in seen:
        by_etag.setdefault(etag, set()).add(items)
        release = int(etag.strip('"').split("r")[1])
        assert all(r <= release for r in revisions)
    assert all(len(listings) == 1 for listings in by_etag.values()), by_etag


# --- the property: a rebuild under continuous writes equals the serial application through H ----------------------


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    before=st.integers(min_value=0, max_value=3),
    during=st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=4),
    live_during=st.booleans(),
)
def test_property_a_rebuild_under_continuous_writes_equals_the_serial_application_through_h(
    deployment: Deployment, before: int, during: list[int], live_during: bool
) -> None:
    stream = deployment.stream()
    stream.decide(before)
    stream.deliver_live()
    writes = iter(during)
    at_cutover: dict[str, Any] = {}

    def continuous_writes(phase: str, done: int, total: int | None) -> None:
        if phase == "cutover":
            # Reported right after the cutover committed, before the rebuild closes the live gap after H (writes
            # made after H was chosen): the property is about this moment.
            at_cutover["live"] = stream.live_position()
            at_cutover["state"] = generation_state(
                deployment.platform, stream.catalog_id, stream.scope_generation()
            )
            return
        stream.decide(next(writes, 0))
        if live_during:
            stream.deliver_live()  # the live applier moves on, possibly past the H the rebuild chose

    result = stream.rebuild().run(TENANT, stream.catalog_id, on_progress=continuous_writes)

    assert at_cutover["live"] == result.target_position
    assert result.target_position >= result.start_position
    assert_same_state(at_cutover["state"], serial_application(stream, result.target_position))
    # Then the live gap after H is closed at once: contiguous progress reaches the stream's head.
    assert stream.live_position() == stream.made * 4  # item, listing, mapping, release per decision


# --- error rows (if_projection_bootstrap) and the rebuild's own refusals ----------------------------------------------


def assert_nothing_swapped(stream: Stream, failed: pytest.ExceptionInfo[RebuildFailed], code: str) -> None:
    assert failed.value.code == code, failed.value
    assert stream.scope_generation() == 1
    status = next(
        s for s in stream.deployment.platform.retention_status() if s.catalog_id == stream.catalog_id
    )
    assert status.leases == ()  # released (or never taken)


def test_401_credential_revoked_fails_the_rebuild_and_swaps_nothing(deployment: Deployment) -> None:
    stream = deployment.stream()
    stream.decide(1)

    def revoked_while_pending(seconds: float) -> None:
        run_stage(deployment.platform, "exports")
        deployment.platform.clients.revoke(TENANT, stream.client.client_id)

    with pytest.raises(RebuildFailed) as failed:
        stream.rebuild(sleep=revoked_while_pending).run(TENANT, stream.catalog_id)
    # The token issued before the revocation is refused (do not retry), and a fresh one is not issued.
    assert failed.value.code == "CREDENTIAL_REVOKED", failed.value
    assert stream.scope_generation() == 1


def test_403_tenant_scope_denied_fails_the_rebuild_and_swaps_nothing(deployment: Deployment) -> None:
    stream, other = deployment.stream(), deployment.stream()
    stream.decide(1)
    # The product principal of another catalog asks for this catalog's export.
    with pytest.raises(RebuildFailed) as failed:
        stream.rebuild(source=other.source()).run(TENANT, stream.catalog_id)
    assert_nothing_swapped(stream, failed, "TENANT_SCOPE_DENIED")


def test_410_export_expired_fails_the_rebuild_and_swaps_nothing(deployment: Deployment) -> None:
    stream = deployment.stream()
    stream.decide(2)

    def export_then_let_the_lease_expire(seconds: float) -> None:
        run_stage(deployment.platform, "exports")
        deployment.clock.now += timedelta(seconds=LEASE_TTL + 1)

    with pytest.raises(RebuildFailed) as failed:
        stream.rebuild(sleep=export_then_let_the_lease_expire).run(TENANT, stream.catalog_id)
    assert failed.value.code == "EXPORT_EXPIRED"
    assert stream.scope_generation() == 1


class _FlakyProxy(BaseHTTPRequestHandler):
    """A loopback stand-in for a load balancer in front of the export API: the first ``failures`` requests get
    503 UNAVAILABLE, the rest are forwarded."""

    upstream = ""
    failures = 0
    seen = 0

    def _handle(self) -> None:
        cls = type(self)
        cls.seen += 1
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if cls.seen <= cls.failures:
            payload = b'{"error": {"code": "UNAVAILABLE", "message": "try later", "retryable": true}}'
            self.send_response(503)
        else:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            answer = httpx.request(
                self.command, cls.upstream + self.path, headers=headers, content=body, timeout=30
            )
            payload = answer.content
            self.send_response(answer.status_code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = _handle

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.mark.parametrize(("failures", "code"), [(3, None), (50, "UNAVAILABLE")])
def test_503_unavailable_is_retried_with_backoff_then_gives_up_clearly(
    deployment: Deployment, failures: int, code: str | None
) -> None:
    stream = deployment.stream()
    stream.decide(1)
    stream.deliver_live()
    handler = type("Proxy", (_FlakyProxy,), {"upstream": deployment.url, "failures": failures, "seen": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    waits: list[int] = []
    try:
        export = HttpExportSource(
            f"http://127.0.0.1:{server.server_address[1]}",
            stream.client.client_id,
            stream.client.client_secret,
        )
        deployment.closers.append(export.close)
        source = HttpSnapshotSource(export, backoff=lambda attempt: waits.append(attempt) or 0.0)
        rebuild = stream.rebuild(source=source)
        if code is None:
            result = rebuild.run(TENANT, stream.catalog_id)
            assert stream.scope_generation() == result.generation == 2
            assert waits[:3] == [1, 2, 3]
        else:
            with pytest.raises(RebuildFailed) as failed:
                rebuild.run(TENANT, stream.catalog_id)
            assert failed.value.code == code
            assert waits == [1, 2, 3, 4, 5, 6, 7]  # 8 attempts, 7 waits between them
            assert stream.scope_generation() == 1
    finally:
        server.shutdown()
        server.server_close()


def test_an_unresolved_dependency_at_or_below_h_fails_the_rebuild_and_swaps_nothing(
    deployment: Deployment,
) -> None:
    stream = deployment.stream()
    stream.decide(1)
    stream.deliver_live()
    # An export without the release: the tail's next release waits for the one the shadow never got.
    with httpx.Client(base_url=deployment.url) as http:
        token = http.post(
            "/v1/oauth/token",
            data={
                "grant_type": "client_credentials",
                "client_id": stream.client.client_id,
                "client_secret": stream.client.client_secret,
            },
        ).json()["access_token"]
        export_id = http.post(
            "/v1/exports/snapshots",
            json={"aggregates": ["catalog_item", "listing", "listing_mapping"]},
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "no-listings"},
        ).json()["export_id"]
    run_stage(deployment.platform, "exports")
    stream.decide(1)
    with pytest.raises(RebuildFailed) as failed:
        stream.rebuild().run(TENANT, stream.catalog_id, export_id=export_id)
    assert_nothing_swapped(stream, failed, "UNRESOLVED_DEPENDENCY")
    assert "waits for release" in str(failed.value)


def test_a_target_outside_w_and_the_head_is_refused(deployment: Deployment) -> None:
    stream = deployment.stream()
    stream.decide(1)
    with pytest.raises(RebuildFailed) as failed:
        stream.rebuild().run(TENANT, stream.catalog_id, target=999)
    assert_nothing_swapped(stream, failed, "TARGET_INVALID")


def test_the_lease_is_renewed_throughout_load_and_catch_up(deployment: Deployment) -> None:
    """if_projection_bootstrap: "Renew the lease throughout export/load/catch-up". Each step of the rebuild takes
    most of the lease's time to live here; without the renewals the tail would answer 410 EXPORT_EXPIRED."""
    stream = deployment.stream()
    stream.decide(2)
    stream.deliver_live()
    steps = 0

    def slow_steps(phase: str, done: int, total: int | None) -> None:
        nonlocal steps
        steps += 1
        deployment.clock.now += timedelta(seconds=LEASE_TTL - 60)
        stream.decide(1)

    result = stream.rebuild().run(TENANT, stream.catalog_id, on_progress=slow_steps)
    assert steps >= 3
    assert stream.scope_generation() == result.generation == 2
    assert result.target_position > result.start_position
    # Resumed after H: what was committed meanwhile came from the retained tail right after the cutover.
    assert stream.live_position() == stream.made * 4


# --- seed 004: released pictures and classes survive a rebuild ------------------------------------------------

_PICTURE_TABLES = {
    "item_pictures_projection": "item_id, revision, deleted, fields",
    "product_class_projection": "class_id, revision, deleted, fields",
    "public_item_pictures": "item_id, published_revision, publication_revision, fields",
    "public_class": "class_id, published_revision, publication_revision, fields",
}


def _table_state(
    platform: Platform, catalog_id: str, generation: int, tables: dict[str, str]
) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of each table's ``columns`` in one generation of the catalog, in key order."""
    with psycopg.connect(platform.urls.main) as conn:
        return {
            table: conn.execute(
                f"SELECT {columns} FROM product.{table} WHERE tenant_id = %s AND catalog_id = %s "  # noqa: S608
                "AND generation = %s ORDER BY 1",
                (TENANT, catalog_id, generation),
            ).fetchall()
            for table, columns in tables.items()
        }


def test_a_rebuild_keeps_the_released_item_pictures_and_classes_and_leaves_a_deleted_class_out(
    deployment: Deployment,
) -> None:
    stream = deployment.stream()
    stream.decide(2)
    stream.deliver_live()
    files, actor = deployment.platform.catalog_files, "operator:ada"
    with psycopg.connect(deployment.platform.urls.main) as conn:
        first, second = (
            row[0]
            for row in conn.execute(
                "SELECT item_id FROM resolver.catalog_item WHERE catalog_id = %s ORDER BY item_id",
                (stream.catalog_id,),
            ).fetchall()
        )
    files.save_item_pictures(TENANT, first, UploadSource(png()), [UploadSource(png())], actor=actor)
    files.create_class(
        TENANT,
        stream.catalog_id,
        "cls_kept",
        "Kept",
        picture=UploadSource(png()),
        members=[first],
        actor=actor,
    )
    files.create_class(
        TENANT, stream.catalog_id, "cls_gone", "Gone", picture=None, members=[second], actor=actor
    )
    files.delete_class(TENANT, "cls_gone", actor=actor)
    stream.deliver_live()
    live = _table_state(deployment.platform, stream.catalog_id, 1, _PICTURE_TABLES)
    assert [row[0] for row in live["public_class"]] == ["cls_kept"]  # the catalog releases automatically
    assert len(live["public_item_pictures"]) == 1

    result = stream.rebuild().run(TENANT, stream.catalog_id)

    assert result.generation == 2
    rebuilt = _table_state(deployment.platform, stream.catalog_id, 2, _PICTURE_TABLES)
    assert rebuilt["public_item_pictures"] == live["public_item_pictures"]
    assert rebuilt["public_class"] == live["public_class"]
    assert rebuilt["item_pictures_projection"] == live["item_pictures_projection"]
    assert rebuilt["product_class_projection"] == live["product_class_projection"]


# --- a manual catalog: the release is not the accepted state -----------------------------------------------------

_PUBLIC_TABLES = {
    # attribute_keys: what attr[...] filters compare (migration 0023), written with the row by the release path.
    "public_item": "item_id, published_revision, publication_revision, fields, attribute_keys",
    "public_listing": "listing_id, item_id, mapping_revision, listing_revision, publication_revision, fields",
    "public_merchant": "merchant_id, published_revision, publication_revision, fields",
    "release_pointer": "release_id, publication_revision",
}


def test_a_manual_catalog_rebuilds_what_its_release_published_though_the_accepted_state_moved_on(
    deployment: Deployment,
) -> None:
    """The release published item and merchant revisions that were then changed and not released (a retirement, a
    new merchant name, a new item): the rebuilt public snapshot is the released one, not the accepted state."""
    stream = deployment.stream("manual")
    platform, actor = deployment.platform, "operator:ada"
    stream.decide(2)
    platform.merchants.provision(
        TENANT, stream.catalog_id, MerchantSpec("mer_rbd", "Rebuild Store"), actor=actor
    )
    platform.decisions.release(AuthorizeRelease(stream.catalog_id, actor, "publish"), TENANT)
    with psycopg.connect(platform.urls.main) as conn:
        released_item = conn.execute(
            "SELECT item_id FROM resolver.catalog_item WHERE catalog_id = %s ORDER BY item_id LIMIT 1",
            (stream.catalog_id,),
        ).fetchone()[0]
    platform.decisions.retire_item(RetireItem(stream.catalog_id, released_item, actor, "withdrawn"), TENANT)
    platform.merchants.provision(
        TENANT, stream.catalog_id, MerchantSpec("mer_rbd", "Renamed Store"), actor=actor
    )
    stream.decide(1)
    stream.deliver_live()
    live = _table_state(platform, stream.catalog_id, 1, _PUBLIC_TABLES)
    assert [row[0] for row in live["public_merchant"]] == ["mer_rbd"]
    assert live["public_merchant"][0][3]["name"] == "Rebuild Store"  # the rename is not released
    assert released_item in [row[0] for row in live["public_item"]]  # the retirement is not released

    result = stream.rebuild().run(TENANT, stream.catalog_id)

    assert result.generation == 2
    assert _table_state(platform, stream.catalog_id, 2, _PUBLIC_TABLES) == live


_MERGE_TABLES = {
    **_PUBLIC_TABLES,
    "item_projection": "item_id, revision, status, fields",
    "public_item_redirect": "item_id, target_item_id, publication_revision",
}


def test_a_rebuild_keeps_the_redirects_of_merged_items_through_a_chain(deployment: Deployment) -> None:
    """Items merged (a into b, b into c) on a catalog that releases automatically: the rebuilt generation has the
    merged items retired with their survivors, the survivor's listings and the public redirects of the live one."""
    stream = deployment.stream()
    stream.decide(3)
    with psycopg.connect(deployment.platform.urls.main) as conn:
        a, b, c = (
            row[0]
            for row in conn.execute(
                "SELECT item_id FROM resolver.catalog_item WHERE catalog_id = %s ORDER BY item_id",
                (stream.catalog_id,),
            ).fetchall()
        )
    for merged, survivor in ((a, b), (b, c)):
        deployment.platform.decisions.merge_items(
            MergeItems(stream.catalog_id, merged, survivor, "reviewer:ada", "duplicates"), TENANT
        )
    stream.deliver_live()
    live = _table_state(deployment.platform, stream.catalog_id, 1, _MERGE_TABLES)
    assert [row[:2] for row in live["public_item_redirect"]] == sorted([(a, b), (b, c)])
    assert [row[0] for row in live["public_item"]] == [c]

    result = stream.rebuild().run(TENANT, stream.catalog_id)

    assert result.generation == 2
    assert _table_state(deployment.platform, stream.catalog_id, 2, _MERGE_TABLES) == live

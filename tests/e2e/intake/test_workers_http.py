"""if_collector_bootstrap and if_heartbeat over HTTP: a collector instance registers (a lease, nothing started),
heartbeats with run reports, and every error row of both tables; the lease lapses into ``silent`` when the
platform clock moves past it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from prw_api.intake import create_app
from prw_api.server import BackgroundServer
from prw_platform.auth import ClientSpec, CollectorPrincipal, ProvisionedClient, create_client, revoke_client
from prw_platform.auth.scopes import CAPTURES_WRITE, RECEIPTS_READ, WORKERS_HEARTBEAT, WORKERS_REGISTER
from prw_platform.config import Settings
from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.queues.postgres import PostgresQueue
from prw_platform.reports import FleetPolicy, LeaseState, OperatorReports
from prw_platform.services import CollectorService
from tests.e2e.intake.conftest import Collector, IntakeApiServices, token_for
from tests.e2e.intake.flows import capture, error_of, submit, upload
from tests.integration.intake.helpers import (
    CATALOG,
    INSTANCE,
    OTHER_TENANT_SOURCE,
    SOURCE,
    UNGRANTED_SOURCE,
    WORKER,
    World,
    row_counts,
)

REGISTER = "/v1/workers/register"
START = datetime(2026, 10, 11, 8, 0, 0, tzinfo=UTC)


@dataclass
class MovableClock:
    """The platform clock of this test: a test moves it instead of sleeping."""

    now: datetime = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def collectors(resolver_db: Database, clock: MovableClock) -> CollectorService:
    return CollectorService(resolver_db, clock=clock)


@pytest.fixture
def server(
    settings: Settings, services: IntakeApiServices, collectors: CollectorService
) -> Iterator[BackgroundServer]:
    # The intake app with the collectors service (overrides the conftest's server, which serves no /v1/workers).
    with BackgroundServer(create_app(settings, services.intake, services.auth, collectors)) as running:
        yield running


@pytest.fixture
def operator_db(db_url: str) -> Iterator[Database]:
    db = Database(db_url, role=roles.PRW_OPERATOR, max_size=2, application_name="prw-test-operator").open()
    yield db
    db.close()


@pytest.fixture
def reports(operator_db: Database, clock: MovableClock) -> OperatorReports:
    return OperatorReports(operator_db, clock=clock, fleet=FleetPolicy(failing_after=2))


def registration(**overrides: Any) -> dict[str, Any]:
    """The seed's example body (if_collector_bootstrap), bound to this test's instance, worker and source."""
    body: dict[str, Any] = {
        "worker_id": WORKER,
        "instance_id": INSTANCE,
        "version": "0.4.2",
        "runtime": "local-process",
        "runtime_kind": "long-running",
        "execution_region": {"country": "DE", "label": "Frankfurt regional host", "declared_by": "operator"},
        "egress": {"country": "DE", "verified": False},
        "targets": [SOURCE],
        "capabilities": ["browser.render", "html", "screenshot", "policy-pages"],
    }
    body.update(overrides)
    return body


def register(collector: Collector, **overrides: Any) -> httpx.Response:
    return collector.http.post(REGISTER, json=registration(**overrides), headers=collector.headers)


def heartbeat(
    collector: Collector, at: datetime, run: dict[str, Any] | None = None, instance: str = INSTANCE
) -> httpx.Response:
    body: dict[str, Any] = {"instance_id": instance, "at": at.isoformat()}
    if run is not None:
        body["run"] = run
    return collector.http.post(f"/v1/workers/{instance}/heartbeat", json=body, headers=collector.headers)


def failed_run(code: str = "UPSTREAM_503") -> dict[str, Any]:
    """The seed's example run report (if_heartbeat), with if_source_fetch failures by kind."""
    return {
        "started_at": "2026-10-11T07:59:00Z",
        "outcome": "failed",
        "error": {"code": code, "retryable": True},
        "pages_fetched": 3,
        "captures_submitted": 0,
        "failures": {"UPSTREAM_503": 2, "RATE_LIMITED": 1},
    }


def succeeded_run(finished_at: datetime) -> dict[str, Any]:
    return {
        "started_at": (finished_at - timedelta(seconds=30)).isoformat(),
        "finished_at": finished_at.isoformat(),
        "outcome": "succeeded",
        "pages_fetched": 12,
        "captures_submitted": 11,
        "failures": {"NOT_FOUND": 1},
    }


def heartbeat_rows(owner_db: Database, tenant_id: str) -> int:
    with owner_db.transaction(read_only=True) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM resolver.collector_heartbeat WHERE tenant_id = %s", (tenant_id,)
        ).fetchone()
    assert row is not None
    return int(str(row["n"]))


def instance_rows(owner_db: Database, tenant_id: str) -> int:
    with owner_db.transaction(read_only=True) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM resolver.collector_instance WHERE tenant_id = %s", (tenant_id,)
        ).fetchone()
    assert row is not None
    return int(str(row["n"]))


def parse(moment: str) -> datetime:
    return datetime.fromisoformat(moment.replace("Z", "+00:00"))


# -- if_collector_bootstrap: POST /v1/workers/register ---------------------------------------------------------


def test_first_registration_is_201_with_a_90_second_lease_heartbeat_url_and_grants(
    world: World, collector: Collector, clock: MovableClock
) -> None:
    response = register(collector)

    assert response.status_code == 201, response.text
    body = response.json()
    assert body == {
        "instance_id": INSTANCE,
        "worker_id": WORKER,
        "lease_seconds": 90,
        "lease_expires_at": body["lease_expires_at"],
        "heartbeat_url": f"/v1/workers/{INSTANCE}/heartbeat",
        "granted": {"tenant_id": world.tenant, "sources": [SOURCE]},
    }
    assert parse(body["lease_expires_at"]) == clock.now + timedelta(seconds=90)


def test_registration_starts_nothing(
    world: World, collector: Collector, owner_db: Database, queue: PostgresQueue
) -> None:
    before = row_counts(owner_db, world.tenant)

    assert register(collector).status_code == 201

    # "Registration only records the instance. It never starts machines.": no capture, job or message.
    assert row_counts(owner_db, world.tenant) == before
    depth = queue.depth()
    assert (depth.visible, depth.in_flight, depth.delayed) == (0, 0, 0)
    assert instance_rows(owner_db, world.tenant) == 1


def test_re_registering_with_the_same_body_is_200_with_the_existing_lease(
    collector: Collector, clock: MovableClock
) -> None:
    first = register(collector)
    clock.advance(30)

    again = register(collector, capabilities=list(reversed(registration()["capabilities"])))

    assert again.status_code == 200
    assert again.json() == first.json()


def test_re_registering_with_another_body_records_it_and_starts_a_new_lease(
    collector: Collector, clock: MovableClock, owner_db: Database, world: World
) -> None:
    register(collector)
    clock.advance(30)

    upgraded = register(collector, version="0.5.0")

    assert upgraded.status_code == 200
    assert parse(upgraded.json()["lease_expires_at"]) == clock.now + timedelta(seconds=90)
    assert instance_rows(owner_db, world.tenant) == 1


def test_re_registering_after_the_lease_lapsed_starts_a_new_lease(
    collector: Collector, clock: MovableClock
) -> None:
    register(collector)
    clock.advance(600)

    again = register(collector)

    assert again.status_code == 200
    assert parse(again.json()["lease_expires_at"]) == clock.now + timedelta(seconds=90)


def test_an_unknown_token_is_401_invalid_token(http: httpx.Client, owner_db: Database, world: World) -> None:
    response = http.post(REGISTER, json=registration(), headers={"Authorization": "Bearer not-a-token"})

    assert error_of(response) == (401, "INVALID_TOKEN", False)
    assert instance_rows(owner_db, world.tenant) == 0


def test_a_revoked_client_is_401_credential_revoked(
    world: World, collector: Collector, client: ProvisionedClient, resolver_db: Database
) -> None:
    assert revoke_client(resolver_db, world.tenant, client.client_id)

    response = register(collector)

    assert error_of(response) == (401, "CREDENTIAL_REVOKED", False)


def test_without_workers_register_it_is_403_missing_scope(
    http: httpx.Client, client: ProvisionedClient
) -> None:
    narrow = Collector(http, token_for(http, client, f"{CAPTURES_WRITE} {WORKERS_HEARTBEAT}"))

    response = register(narrow)

    assert error_of(response) == (403, "MISSING_SCOPE", False)


def test_another_stable_instance_is_403_instance_scope_denied(collector: Collector) -> None:
    response = register(collector, instance_id="ci_lumen_fra_02")

    assert error_of(response) == (403, "INSTANCE_SCOPE_DENIED", False)


def test_another_worker_is_403_attribution_denied(collector: Collector) -> None:
    response = register(collector, worker_id="cw_someone_else")

    assert error_of(response) == (403, "ATTRIBUTION_DENIED", False)


@pytest.mark.parametrize("target", [UNGRANTED_SOURCE, OTHER_TENANT_SOURCE, "src_nowhere"])
def test_a_target_outside_the_grants_is_403_source_scope_denied(
    collector: Collector, owner_db: Database, world: World, target: str
) -> None:
    response = register(collector, targets=[SOURCE, target])

    assert error_of(response) == (403, "SOURCE_SCOPE_DENIED", False)
    assert instance_rows(owner_db, world.tenant) == 0


def test_no_targets_is_422_validation_failed(collector: Collector) -> None:
    # "targets must be a nonempty subset of provisioned source grants".
    response = register(collector, targets=[])

    assert error_of(response) == (422, "VALIDATION_FAILED", False)


def test_an_operator_session_cookie_is_not_collector_registration(
    http: httpx.Client, owner_db: Database, world: World
) -> None:
    """if_collector_bootstrap's 403 PERMISSION_DENIED ("Operator session is not collector registration") needs
    the operator session (if_operator_session), which the platform does not have yet: today a request carrying
    only a session cookie presents no bearer token and is 401 INVALID_TOKEN. Either way nothing is recorded."""
    response = http.post(
        REGISTER, json=registration(), headers={"Cookie": "prw_session=operator-session; csrf=x"}
    )

    assert error_of(response) == (401, "INVALID_TOKEN", False)
    assert instance_rows(owner_db, world.tenant) == 0


class ExternalIdp:
    """A token service that vouches for an instance no operator provisioned on this resolver (an external IdP's
    client the resolver never heard of): the case of if_collector_bootstrap's 404 NOT_FOUND."""

    def __init__(self, principal: CollectorPrincipal) -> None:
        self.principal = principal

    def authenticate(self, bearer_token: str) -> CollectorPrincipal:
        return self.principal


def test_an_instance_unknown_server_side_is_404_not_found(
    settings: Settings, services: IntakeApiServices, collectors: CollectorService, world: World
) -> None:
    stranger = world.principal(instance_id="ci_never_provisioned")
    app = create_app(settings, services.intake, ExternalIdp(stranger), collectors)  # type: ignore[arg-type]
    with BackgroundServer(app) as running, httpx.Client(base_url=running.url, timeout=10) as http:
        response = http.post(
            REGISTER,
            json=registration(instance_id="ci_never_provisioned"),
            headers={"Authorization": "Bearer from-another-idp"},
        )

    assert error_of(response) == (404, "NOT_FOUND", False)


def test_an_unreachable_database_is_503_unavailable_retry(
    settings: Settings, services: IntakeApiServices, client: ProvisionedClient, clock: MovableClock
) -> None:
    # The token service reaches the database; the registration's pool cannot get a connection.
    unreachable = Database(
        "postgresql://prw@127.0.0.1:9/prw?connect_timeout=1", role="resolver_app", pool_timeout_s=0.5
    ).open(wait=False)
    down = CollectorService(unreachable, clock=clock)
    try:
        with (
            BackgroundServer(create_app(settings, services.intake, services.auth, down)) as running,
            httpx.Client(base_url=running.url, timeout=10) as http,
        ):
            response = register(Collector(http, token_for(http, client)))
    finally:
        unreachable.close()

    assert error_of(response) == (503, "UNAVAILABLE", True)
    assert int(response.headers["retry-after"]) > 0


def test_a_superseded_credential_keeps_the_instances_lease_and_receipts(
    world: World,
    http: httpx.Client,
    collector: Collector,
    resolver_db: Database,
    clock: MovableClock,
) -> None:
    first = register(collector)
    receipt = submit(collector, capture(upload(collector))).json()
    clock.advance(20)

    rotated = create_client(
        resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, (SOURCE,)), supersede=True
    )
    fresh = Collector(http, token_for(http, rotated))

    # The old credential stops; the instance, its lease and its receipts stay with the new one.
    assert error_of(register(collector)) == (401, "CREDENTIAL_REVOKED", False)
    again = register(fresh)
    assert again.status_code == 200
    assert again.json() == first.json()
    read = fresh.http.get(f"/v1/receipts/{receipt['receipt_id']}", headers=fresh.headers)
    assert read.status_code == 200
    assert heartbeat(fresh, clock.now).status_code == 200


# -- if_heartbeat: POST /v1/workers/{id}/heartbeat -------------------------------------------------------------


def test_a_heartbeat_renews_the_lease(collector: Collector, clock: MovableClock) -> None:
    register(collector)
    clock.advance(60)

    response = heartbeat(collector, clock.now)

    assert response.status_code == 200, response.text
    assert response.json() == {
        "instance_id": INSTANCE,
        "consecutive_failures": 0,
        "last_success": None,
        "lease_expires_at": (clock.now + timedelta(seconds=90)).isoformat().replace("+00:00", "Z"),
    }


def test_run_reports_count_consecutive_failures_and_a_success_resets_them(
    collector: Collector, clock: MovableClock
) -> None:
    register(collector)
    counts = []
    for _ in range(3):
        clock.advance(60)
        counts.append(heartbeat(collector, clock.now, failed_run()).json()["consecutive_failures"])
    clock.advance(60)
    success = heartbeat(collector, clock.now, succeeded_run(clock.now)).json()

    assert counts == [1, 2, 3]
    assert success["consecutive_failures"] == 0
    assert parse(success["last_success"]) == clock.now


def test_a_replayed_heartbeat_is_recorded_once(
    world: World, collector: Collector, clock: MovableClock, owner_db: Database
) -> None:
    register(collector)
    clock.advance(10)
    at = clock.now
    first = heartbeat(collector, at, failed_run())
    clock.advance(5)

    replay = heartbeat(collector, at, failed_run())

    # "Keyed by (instance_id, at). A duplicate is recorded once.": same answer, no second failure, no renewal.
    assert replay.status_code == 200
    assert replay.json() == first.json()
    assert replay.json()["consecutive_failures"] == 1
    assert heartbeat_rows(owner_db, world.tenant) == 1


def test_a_heartbeat_for_another_instance_is_403_tenant_scope_denied(collector: Collector) -> None:
    register(collector)

    response = heartbeat(collector, START, instance="ci_lumen_fra_02")

    assert error_of(response) == (403, "TENANT_SCOPE_DENIED", False)


def test_a_body_instance_other_than_the_token_is_403_tenant_scope_denied(collector: Collector) -> None:
    register(collector)

    response = collector.http.post(
        f"/v1/workers/{INSTANCE}/heartbeat",
        json={"instance_id": "ci_lumen_fra_02", "at": START.isoformat()},
        headers=collector.headers,
    )

    assert error_of(response) == (403, "TENANT_SCOPE_DENIED", False)


def test_a_heartbeat_before_registering_is_404_unknown_instance(collector: Collector) -> None:
    response = heartbeat(collector, START)

    assert error_of(response) == (404, "UNKNOWN_INSTANCE", False)


def test_a_heartbeat_of_a_revoked_client_is_401_credential_revoked(
    world: World, collector: Collector, client: ProvisionedClient, resolver_db: Database
) -> None:
    register(collector)
    revoke_client(resolver_db, world.tenant, client.client_id)

    response = heartbeat(collector, START)

    assert error_of(response) == (401, "CREDENTIAL_REVOKED", False)


def test_a_heartbeat_without_workers_heartbeat_is_403_missing_scope(
    http: httpx.Client, client: ProvisionedClient, collector: Collector
) -> None:
    register(collector)
    narrow = Collector(http, token_for(http, client, f"{WORKERS_REGISTER} {RECEIPTS_READ}"))

    response = heartbeat(narrow, START)

    assert error_of(response) == (403, "MISSING_SCOPE", False)


def test_a_heartbeat_with_an_unknown_token_is_401_invalid_token(http: httpx.Client) -> None:
    response = http.post(
        f"/v1/workers/{INSTANCE}/heartbeat",
        json={"at": START.isoformat()},
        headers={"Authorization": "Bearer not-a-token"},
    )

    assert error_of(response) == (401, "INVALID_TOKEN", False)


@pytest.mark.parametrize(
    "run",
    [
        {"outcome": "failed", "failures": {"TIMEOUT": 1}},
        {"outcome": "failed", "error": {"code": "PARSE_ERROR", "retryable": False}},
        {"outcome": "exploded"},
        {"outcome": "succeeded", "pages_fetched": -1},
    ],
)
def test_a_run_report_outside_if_source_fetch_is_422_validation_failed(
    collector: Collector, run: dict[str, Any]
) -> None:
    register(collector)

    response = heartbeat(collector, START, run)

    assert error_of(response) == (422, "VALIDATION_FAILED", False)


def test_a_heartbeat_from_the_future_is_422_validation_failed(
    collector: Collector, clock: MovableClock
) -> None:
    register(collector)

    response = heartbeat(collector, clock.now + timedelta(hours=1))

    assert error_of(response) == (422, "VALIDATION_FAILED", False)


# -- Lease state, as operators see it -------------------------------------------------------------------------


def _state(reports: OperatorReports, world: World) -> tuple[LeaseState, bool]:
    (status,) = [s for s in reports.collector_fleet() if s.instance.tenant_id == world.tenant]
    return status.state, status.overdue


def test_a_lease_that_lapses_marks_the_instance_silent_and_a_heartbeat_revives_it(
    world: World, collector: Collector, clock: MovableClock, reports: OperatorReports
) -> None:
    register(collector)
    assert _state(reports, world) == (LeaseState.ACTIVE, False)

    clock.advance(91)
    assert _state(reports, world) == (LeaseState.SILENT, False)
    clock.advance(15 * 60)
    assert _state(reports, world) == (LeaseState.SILENT, True)

    heartbeat(collector, clock.now)
    assert _state(reports, world) == (LeaseState.ACTIVE, False)


def test_consecutive_failures_above_the_threshold_mark_the_instance_failing(
    world: World, collector: Collector, clock: MovableClock, reports: OperatorReports
) -> None:
    register(collector)
    for _ in range(2):
        clock.advance(30)
        heartbeat(collector, clock.now, failed_run())
    assert _state(reports, world) == (LeaseState.ACTIVE, False)

    clock.advance(30)
    heartbeat(collector, clock.now, failed_run())
    assert _state(reports, world) == (LeaseState.FAILING, False)
    failing_since = clock.now

    # Still failing, still heartbeating: overdue once failing for longer than alert_after (15 min).
    while clock.now - failing_since <= timedelta(minutes=15):
        clock.advance(60)
        heartbeat(collector, clock.now, failed_run())
    assert _state(reports, world) == (LeaseState.FAILING, True)

    clock.advance(60)
    heartbeat(collector, clock.now, succeeded_run(clock.now))
    assert _state(reports, world) == (LeaseState.ACTIVE, False)


def test_an_instance_without_grants_is_never_overdue(
    world: World,
    collector: Collector,
    clock: MovableClock,
    client: ProvisionedClient,
    resolver_db: Database,
    reports: OperatorReports,
) -> None:
    register(collector)
    revoke_client(resolver_db, world.tenant, client.client_id)

    clock.advance(3600)

    assert _state(reports, world) == (LeaseState.SILENT, False)


def test_a_policy_with_another_threshold_reads_the_same_rows(
    world: World, collector: Collector, clock: MovableClock, operator_db: Database
) -> None:
    register(collector)
    clock.advance(10)
    heartbeat(collector, clock.now, failed_run())

    strict = OperatorReports(operator_db, clock=clock, fleet=replace(FleetPolicy(), failing_after=0))

    assert _state(strict, world) == (LeaseState.FAILING, False)

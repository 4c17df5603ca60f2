"""Operators see collectors: ``prw workers [--json]`` and the Dagster asset
``collector_fleet`` with its check ``collectors_reporting``, over instances registered and heartbeating through
the core (if_collector_bootstrap, if_heartbeat) at chosen moments of the platform clock.

The CLI and the Dagster resource run the platform's real clock; the instances here register with a clock in the
past, so "silent for two hours" is a lease that lapsed two hours before now.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from typer.testing import CliRunner

from prw_cli.main import app as prw
from prw_orchestration.defs.state import collector_fleet, collectors_reporting
from prw_orchestration.resources import PlatformResource
from prw_platform.auth import ClientSpec, create_client, revoke_client
from prw_platform.db.database import Database
from prw_platform.resolver.intake.requests import Heartbeat, Registration, RunReport
from prw_platform.resolver.intake.workers import CollectorService
from tests.integration.intake.helpers import CATALOG, SOURCE, WORKER, World
from tests.support import postgres


@pytest.fixture
def world(resolver_db: Database, control_db: Database) -> World:
    fresh = World.fresh()
    fresh.provision(resolver_db, control_db)
    return fresh


@pytest.fixture
def environment(databases: postgres.TestDatabases, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRW_DATABASE_URL", databases.main)
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", databases.control)


@pytest.fixture
def platform_resource(environment: None, db_url: str, tmp_path: Path) -> PlatformResource:
    return PlatformResource(database_url=db_url, data_dir=str(tmp_path))


def enroll(
    world: World,
    resolver_db: Database,
    instance_id: str,
    at: datetime,
    runs: tuple[str, ...] = (),
) -> str:
    """Provision a client for ``instance_id``, register it and send one heartbeat per run outcome, a minute
    apart, so that the last event is at ``at``; the client id."""
    client = create_client(resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, instance_id, (SOURCE,)))
    principal = world.principal(instance_id=instance_id, client_id=client.client_id)
    start = at - timedelta(minutes=len(runs))
    CollectorService(resolver_db, clock=lambda: start).register(
        principal,
        Registration(worker_id=WORKER, instance_id=instance_id, targets=(SOURCE,), version="0.4.2"),
    )
    for minutes, outcome in enumerate(runs, start=1):
        moment = start + timedelta(minutes=minutes)
        run: dict[str, Any] = {"outcome": outcome, "pages_fetched": 4, "captures_submitted": 3}
        if outcome == "failed":
            run.update(
                captures_submitted=0,
                error={"code": "UPSTREAM_503", "retryable": True},
                failures={"UPSTREAM_503": 4},
            )
        CollectorService(resolver_db, clock=lambda moment=moment: moment).heartbeat(
            principal, instance_id, Heartbeat(at=moment, run=RunReport.model_validate(run))
        )
    return client.client_id


def fleet_json(runner: CliRunner) -> dict[str, Any]:
    result = runner.invoke(prw, ["workers", "--json"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_prw_workers_shows_each_instance_with_its_lease_state_and_last_run(
    world: World, resolver_db: Database, environment: None
) -> None:
    now = datetime.now(UTC)
    enroll(world, resolver_db, "ci_active_01", now, runs=("succeeded",))
    enroll(world, resolver_db, "ci_silent_01", now - timedelta(hours=2))
    enroll(world, resolver_db, "ci_failing_01", now, runs=("failed",) * 5)
    runner = CliRunner()

    document = fleet_json(runner)

    by_instance = {w["instance_id"]: w for w in document["workers"]}
    assert {i: w["state"] for i, w in by_instance.items()} == {
        "ci_active_01": "active",
        "ci_silent_01": "silent",
        "ci_failing_01": "failing",
    }
    assert by_instance["ci_silent_01"]["overdue"] is True
    failing = by_instance["ci_failing_01"]
    assert failing["consecutive_failures"] == 5
    assert failing["sources"] == [SOURCE]
    assert failing["last_run"]["outcome"] == "failed"
    assert failing["last_run"]["failures"] == {"UPSTREAM_503": 4}
    assert failing["last_run"]["error_code"] == "UPSTREAM_503"
    assert by_instance["ci_active_01"]["last_run"]["captures_submitted"] == 3
    assert by_instance["ci_active_01"]["last_success_at"] is not None

    table = runner.invoke(prw, ["workers"], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    for text in (
        "ci_active_01",
        "ci_silent_01",
        "silent (overdue)",
        "failing",
        WORKER,
        SOURCE,
        "UPSTREAM_503=4",
    ):
        assert text in table.stdout


def test_prw_workers_with_no_instance_prints_an_empty_fleet(environment: None) -> None:
    assert fleet_json(CliRunner()) == {"workers": []}


def _materialize_and_check(resource: PlatformResource) -> tuple[dict[str, Any], dg.AssetCheckResult]:
    with dg.build_resources({"platform": resource}) as resources:
        materialized = collector_fleet(platform=resources.platform)
        checked = collectors_reporting(platform=resources.platform)
    assert isinstance(materialized, dg.MaterializeResult)
    assert isinstance(checked, dg.AssetCheckResult)
    return dict(materialized.metadata or {}), checked


def test_the_asset_counts_instances_by_lease_state_and_the_check_passes_while_all_report(
    world: World, resolver_db: Database, platform_resource: PlatformResource
) -> None:
    now = datetime.now(UTC)
    enroll(world, resolver_db, "ci_active_01", now, runs=("succeeded",))
    enroll(world, resolver_db, "ci_active_02", now, runs=("failed",))

    metadata, check = _materialize_and_check(platform_resource)

    assert (metadata["instances"], metadata["active"], metadata["silent"], metadata["failing"]) == (
        2,
        2,
        0,
        0,
    )
    assert check.passed is True


@pytest.mark.parametrize(
    ("instance", "ago", "runs"),
    [
        ("ci_silent_01", timedelta(hours=2), ()),
        ("ci_failing_01", timedelta(0), ("failed",) * 25),
    ],
)
def test_the_check_fails_on_an_instance_with_grants_silent_or_failing_too_long(
    world: World,
    resolver_db: Database,
    platform_resource: PlatformResource,
    instance: str,
    ago: timedelta,
    runs: tuple[str, ...],
) -> None:
    enroll(world, resolver_db, instance, datetime.now(UTC) - ago, runs=runs)

    metadata, check = _materialize_and_check(platform_resource)

    assert metadata["overdue"] == 1
    assert check.passed is False
    assert check.severity == dg.AssetCheckSeverity.ERROR
    assert instance in str(check.metadata["instances"])


def test_the_check_passes_while_silence_is_shorter_than_the_alert_time_or_the_instance_has_no_grants(
    world: World, resolver_db: Database, platform_resource: PlatformResource
) -> None:
    now = datetime.now(UTC)
    # Lapsed five minutes ago: silent, not yet for longer than PRW_COLLECTOR_ALERT_AFTER_SECONDS (900).
    enroll(world, resolver_db, "ci_recent_01", now - timedelta(minutes=5))
    # Silent for two hours, but decommissioned: every credential of the instance revoked.
    retired = enroll(world, resolver_db, "ci_retired_01", now - timedelta(hours=2))
    revoke_client(resolver_db, world.tenant, retired)

    metadata, check = _materialize_and_check(platform_resource)

    assert metadata["silent"] == 2
    assert check.passed is True


def test_the_alert_time_is_a_setting(
    world: World, resolver_db: Database, platform_resource: PlatformResource, monkeypatch: pytest.MonkeyPatch
) -> None:
    enroll(world, resolver_db, "ci_recent_01", datetime.now(UTC) - timedelta(minutes=5))
    monkeypatch.setenv("PRW_COLLECTOR_ALERT_AFTER_SECONDS", "60")

    _, check = _materialize_and_check(platform_resource)

    assert check.passed is False

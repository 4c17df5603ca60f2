"""Retention and exports in Dagster and on the command line: ``prune_job`` records the
``retention`` asset with the pruned-through position, the rows removed and the blocking consumer or lease; the
``retention`` checks (blocked too long, a lease near expiry); ``exports_job`` records each export as a
materialization of the ``exports`` asset carrying its manifest; ``prw retention status|prune`` and
``prw export snapshot`` do the same operations. Real PostgreSQL, real platform from the ``PRW_*`` environment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import dagster as dg
import pytest
from typer.testing import CliRunner

from prw_cli.main import app as prw
from prw_orchestration.defs.retention import (
    exports_job,
    prune_job,
    retention_leases_not_expiring,
    retention_not_blocked,
)
from prw_orchestration.resources import PlatformResource
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.stream.retention import LIVE_CONSUMER
from prw_platform.runtime import Budget, run_stage
from tests.e2e.product.decisions import create_and_map

TENANT, SOURCE = "ten_ops", "src_ops_web"


@pytest.fixture
def platform(deployment_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Platform]:
    monkeypatch.setenv("PRW_RETENTION_AGE_SECONDS", "0")
    with bootstrap(Settings()) as built:
        yield built


def provision(platform: Platform, catalog: str, items: int) -> Any:
    stream = platform.catalogs.provision(
        CatalogSpec(TENANT, catalog, catalog, "manual", (SourceSpec(f"{SOURCE}_{catalog}", catalog),))
    ).stream
    for n in range(1, items + 1):
        platform.decisions.decide(create_and_map(catalog, f"{SOURCE}_{catalog}", catalog, n), TENANT, catalog)
    run_stage(platform, "relay", Budget(batches=10))
    return stream


def materializations(result: dg.ExecuteInProcessResult, key: str) -> list[dict[str, Any]]:
    return [
        {k: v.value for k, v in event.materialization.metadata.items()}
        for event in result.get_asset_materialization_events()
        if event.materialization.asset_key == dg.AssetKey(key)
    ]


def test_prune_job_records_the_retention_asset_with_p_rows_and_the_blocking_consumer(
    platform: Platform,
) -> None:
    moving = provision(platform, "cat_ops_a", 2)  # positions 1..6
    provision(platform, "cat_ops_b", 1)  # its consumer never reports: blocked
    platform.retention.report_progress(moving, LIVE_CONSUMER, 6)

    result = prune_job.execute_in_process(resources={"platform": PlatformResource()})

    assert result.success
    (recorded,) = materializations(result, "retention")
    assert recorded["rows_removed"] == 5
    pruned = recorded["pruned_through"]
    assert pruned[f"{TENANT}/cat_ops_a/{moving.history_epoch}"] == 5
    assert f"{TENANT}/cat_ops_b: consumer {LIVE_CONSUMER} at 0" in recorded["blocked_by"]


def test_retention_checks_fail_on_blocked_retention_and_warn_on_an_expiring_lease(
    platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream = provision(platform, "cat_ops_c", 1)
    platform.pruner.prune()  # blocked by the live consumer at 0
    platform.retention.create_lease(stream, "rebuild")

    def check(fn: Any) -> dg.AssetCheckResult:
        with dg.build_resources({"platform": PlatformResource()}) as resources:
            checked = fn(platform=resources.platform)
        assert isinstance(checked, dg.AssetCheckResult)
        return checked

    assert check(retention_not_blocked).passed  # blocked, but not yet for 6 h
    assert check(retention_leases_not_expiring).passed  # 30 min left, warned at 5 min
    monkeypatch.setenv("PRW_RETENTION_BLOCKED_ALERT_SECONDS", "0")
    monkeypatch.setenv("PRW_RETENTION_LEASE_WARN_SECONDS", "3600")
    blocked = check(retention_not_blocked)
    expiring = check(retention_leases_not_expiring)
    assert (blocked.passed, blocked.severity) == (False, dg.AssetCheckSeverity.ERROR)
    assert "blocked" in str(blocked.metadata["streams"].value)
    assert (expiring.passed, expiring.severity) == (False, dg.AssetCheckSeverity.WARN)
    assert "rebuild" in str(expiring.metadata["leases"].value)


def test_exports_job_records_each_export_with_its_manifest(platform: Platform) -> None:
    provision(platform, "cat_ops_d", 2)
    requested = platform.snapshot_exports.request_for(TENANT, "cat_ops_d", "dagster-1", ["catalog_item"])

    result = exports_job.execute_in_process(resources={"platform": PlatformResource()})

    assert result.success
    (recorded,) = materializations(result, "exports")
    assert (recorded["export_id"], recorded["status"], recorded["position"]) == (
        requested.snapshot.export_id,
        "ready",
        6,
    )
    (obj,) = recorded["manifest"]["objects"]
    assert (obj["aggregate"], obj["count"]) == ("catalog_item", 2)


def test_prw_retention_status_prune_and_export_snapshot(platform: Platform) -> None:
    stream = provision(platform, "cat_ops_e", 2)
    runner = CliRunner()

    status = runner.invoke(prw, ["retention", "status", "--json"])
    assert status.exit_code == 0, status.output
    (row,) = json.loads(status.output)
    assert (row["committed_position"], row["pruned_through"], row["held_by"]) == (
        6,
        0,
        f"consumer {LIVE_CONSUMER} at 0",
    )

    platform.retention.report_progress(stream, LIVE_CONSUMER, 4)
    pruned = runner.invoke(prw, ["retention", "prune"])
    assert pruned.exit_code == 0, pruned.output
    assert "Pruned 3 outbox rows" in pruned.output

    exported = runner.invoke(
        prw,
        [
            "export",
            "snapshot",
            "--tenant",
            TENANT,
            "--catalog",
            "cat_ops_e",
            "--aggregate",
            "listing",
            "--json",
        ],
    )
    assert exported.exit_code == 0, exported.output
    document = json.loads(exported.output)
    assert (document["status"], document["position"]) == ("ready", 6)
    assert [o["aggregate"] for o in document["manifest"]["objects"]] == ["listing"]
    # The export's lease now shows in the status (pinned at W = 6).
    (row,) = json.loads(runner.invoke(prw, ["retention", "status", "--json"]).output)
    assert [lease["pinned_at"] for lease in row["leases"]] == [6]

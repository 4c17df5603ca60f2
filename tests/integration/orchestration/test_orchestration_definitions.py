"""The Dagster code location: the whole Definitions loads and validates, and the sensors ask for work only when
there is some, one batch at a time, under deterministic run keys."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from prw_orchestration.definitions import build_definitions, defs
from prw_orchestration.defs.pipeline import SENSOR_OF, STAGES, dagster_names, resolution_jobs_sensor
from prw_orchestration.resources import PlatformResource
from prw_platform.contracts import ResolutionJob
from prw_platform.db.database import Database
from prw_platform.queues import RESOLUTION_JOBS, PostgresQueue

ROOT = Path(__file__).resolve().parents[3]


def test_the_whole_definitions_load() -> None:
    repository = defs.get_repository_def()
    assert {job.name for job in repository.get_all_jobs()} >= {
        "resolution_job",
        "normalize_job",
        "identity_job",
        "relay_job",
        "apply_job",
        "gaps_job",
        "sweep_job",
        "assist_job",
        "replay_job",
        "files_sweep_job",
        "files_cleanup_job",
        "platform_state_job",
        "progress_job",
        "prune_job",
        "exports_job",
        "rebuild_cleanup_job",
        "product_rebuild",
        "epoch_fence",
    }
    assert {s.name for s in repository.sensor_defs} == {
        "resolution_jobs_sensor",
        "normalize_sensor",
        "identity_sensor",
        "outbox_relay_sensor",
        "accepted_changes_sensor",
        "gaps_sensor",
        "assist_sensor",
        "replay_sensor",
        "files_cleanup_sensor",
        "progress_sensor",
        "exports_sensor",
    }
    assert {s.name for s in repository.schedule_defs} == {
        "pending_job_sweep",
        "files_sweep_schedule",
        "platform_state_schedule",
        "prune_schedule",
        "rebuild_cleanup_schedule",
    }
    checks = {key.name for key in repository.asset_graph.asset_check_keys}
    assert checks == {
        "inv01_one_mapping_one_owner",
        "inv03_contiguous_positions",
        "inv08_projection_lag",
        "collectors_reporting",
        "product_gap_age",
        "dead_letter_queues_empty",
        "failed_files_reviewed",
        "identity_live_precision",
        "retention_not_blocked",
        "retention_leases_not_expiring",
    }
    assert {key.to_user_string() for key in repository.asset_graph.get_all_asset_keys()} == {
        "captures",
        "accepted_change_stream",
        "product_projection",
        "product_gaps",
        "collector_fleet",
        "dead_letter_queues",
        "improvement_replays",
        "catalog_files",
        "likely_duplicate_items",
        "identity_calibration",
        "retention",
        "exports",
    }


def test_dagster_definitions_validate_passes(tmp_path: Path) -> None:
    environment = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    completed = subprocess.run(
        [
            str(Path(sys.executable).with_name("dagster")),
            "definitions",
            "validate",
            "-m",
            "prw_orchestration.definitions",
        ],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        timeout=180,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "All code locations passed validation" in completed.stdout + completed.stderr


@pytest.fixture
def platform_resource(
    db_url: str, databases: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> PlatformResource:
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", databases.control)  # type: ignore[attr-defined]
    return PlatformResource(database_url=db_url, data_dir=str(tmp_path))


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as test_instance:
        yield test_instance


def _tick(
    instance: dg.DagsterInstance,
    resource: PlatformResource,
    cursor: str | None = None,
    sensor: dg.SensorDefinition = resolution_jobs_sensor,
) -> object:
    with dg.build_sensor_context(
        instance=instance, cursor=cursor, sensor_name=sensor.name, resources={"platform": resource}
    ) as context:
        return sensor(context)


def _enqueue_a_job(resolver_db: Database) -> None:
    queue = PostgresQueue(resolver_db, RESOLUTION_JOBS.name)
    with open(
        ROOT / "tests/fixtures/seed_examples/resolution.job.v1.example0.json", encoding="utf-8"
    ) as example:
        job = ResolutionJob.model_validate_json(example.read())
    queue.send(job.to_message(), message_id=job.job_id)


def test_sensor_skips_when_there_is_no_work(
    instance: dg.DagsterInstance, platform_resource: PlatformResource
) -> None:
    result = _tick(instance, platform_resource)
    assert isinstance(result, dg.SkipReason)
    assert "nothing to do" in str(result.skip_message)


def test_sensor_requests_one_batch_with_a_deterministic_run_key(
    instance: dg.DagsterInstance, platform_resource: PlatformResource, resolver_db: Database
) -> None:
    _enqueue_a_job(resolver_db)
    first = _tick(instance, platform_resource)
    assert isinstance(first, dg.SensorResult)
    (request,) = first.run_requests or []
    assert request.run_key == "resolution_job-batch-1"
    assert first.cursor == "1"
    # The same state and cursor ask for the same run again: Dagster dedupes it by run key.
    again = _tick(instance, platform_resource)
    assert isinstance(again, dg.SensorResult)
    assert [r.run_key for r in again.run_requests or []] == ["resolution_job-batch-1"]
    # From cursor 1 the next batch is 2.
    following = _tick(instance, platform_resource, cursor="1")
    assert isinstance(following, dg.SensorResult)
    assert [r.run_key for r in following.run_requests or []] == ["resolution_job-batch-2"]


def test_sensor_waits_while_a_batch_is_still_running(
    instance: dg.DagsterInstance, platform_resource: PlatformResource, resolver_db: Database
) -> None:
    _enqueue_a_job(resolver_db)
    definitions = build_definitions(platform_resource)
    job = definitions.resolve_job_def("resolution_job")
    instance.create_run_for_job(job, status=dg.DagsterRunStatus.STARTED, tags={"prw/batch_of": job.name})
    result = _tick(instance, platform_resource)
    assert isinstance(result, dg.SkipReason)
    assert "still queued or running" in str(result.skip_message)


def _seed_stream(owner_db: Database, positions: list[int], committed: int) -> None:
    with owner_db.transaction() as conn:
        conn.execute("INSERT INTO resolver.tenant (tenant_id, name) VALUES ('ten_primary', 't')")
        conn.execute(
            "INSERT INTO resolver.catalog (tenant_id, catalog_id, name) VALUES ('ten_primary', 'cat_primary', 'c')"
        )
        conn.execute(
            "INSERT INTO resolver.stream_cursor (tenant_id, catalog_id, history_epoch, committed_position)"
            " VALUES ('ten_primary', 'cat_primary', 'ep_1', %s)",
            (committed,),
        )
        for position in positions:
            conn.execute(
                """INSERT INTO resolver.outbox (tenant_id, catalog_id, history_epoch, position, event_id, event_type,
                       aggregate_type, aggregate_id, aggregate_revision, body)
                   VALUES ('ten_primary', 'cat_primary', 'ep_1', %s, %s, 'catalog_item.created', 'catalog_item',
                       %s, 1, '{}')""",
                (position, f"evt_{position}", f"itm_{position}"),
            )


@pytest.mark.parametrize(
    ("positions", "committed", "passed"),
    [([1, 2, 3], 3, True), ([1, 3], 3, False), ([2, 3], 3, False), ([1, 2], 3, False), ([], 0, True)],
)
def test_inv03_check_fails_on_a_gap_in_committed_positions(
    platform_resource: PlatformResource,
    owner_db: Database,
    positions: list[int],
    committed: int,
    passed: bool,
) -> None:
    from prw_orchestration.defs.state import inv03_contiguous_positions

    _seed_stream(owner_db, positions, committed)
    with dg.build_resources({"platform": platform_resource}) as resources:
        result = inv03_contiguous_positions(platform=resources.platform)
    assert result.passed is passed


def test_every_registered_stage_is_a_dagster_job_driven_by_a_sensor_or_a_schedule() -> None:
    repository = defs.get_repository_def()
    jobs = {job.name for job in repository.get_all_jobs()}
    sensors = {s.name: s.job_name for s in repository.sensor_defs}
    schedules = {s.name: s.job_name for s in repository.schedule_defs}
    for stage in STAGES:
        names = dagster_names(stage)
        assert names.job in jobs
        if stage.cron:
            assert schedules[names.schedule] == names.job
        else:
            assert sensors[names.sensor] == names.job


def test_the_relay_sensor_asks_the_relay_probe_and_its_run_relays_through_the_stage_runtime(
    instance: dg.DagsterInstance, platform_resource: PlatformResource, owner_db: Database
) -> None:
    relay_sensor = SENSOR_OF["relay"]
    _seed_stream(owner_db, [1, 2, 3], 3)  # three committed, unpublished outbox rows

    first = _tick(instance, platform_resource, sensor=relay_sensor)
    assert isinstance(first, dg.SensorResult)
    (request,) = first.run_requests or []
    assert request.run_key == "relay_job-batch-1"
    assert request.tags["prw/stage"] == "relay"

    run = (
        build_definitions(platform_resource)
        .resolve_job_def("relay_job")
        .execute_in_process(instance=instance, tags=request.tags)
    )
    assert run.success
    (output,) = [e for e in run.all_events if e.event_type_value == "STEP_OUTPUT"]
    metadata = output.event_specific_data.metadata  # type: ignore[union-attr]
    assert metadata["taken"].value == 3
    assert metadata["outcome.published"].value == 3
    assert metadata["drained"].value is True

    after = _tick(instance, platform_resource, cursor="1", sensor=relay_sensor)
    assert isinstance(after, dg.SkipReason)
    assert "nothing to do" in str(after.skip_message)


def test_the_files_sweep_schedule_has_concurrency_one(instance: dg.DagsterInstance) -> None:
    """Seed 004: "The sweep has reserved concurrency of one": a tick while a sweep run is unfinished skips; the
    stage itself stays safe if two runs ever overlap (tests/integration/files/test_cleanup.py)."""
    schedule = next(s for s in defs.get_repository_def().schedule_defs if s.name == "files_sweep_schedule")
    job = defs.resolve_job_def("files_sweep_job")

    with dg.build_schedule_context(instance=instance) as context:
        first = schedule.evaluate_tick(context)
    assert [r.tags["prw/stage"] for r in first.run_requests or []] == ["files-sweep"]

    instance.create_run_for_job(job, status=dg.DagsterRunStatus.STARTED)
    with dg.build_schedule_context(instance=instance) as context:
        second = schedule.evaluate_tick(context)
    assert not second.run_requests
    assert "still unfinished (concurrency 1)" in str(second.skip_message)

"""Product rebuild and epoch fencing as operations: the Dagster ``product_rebuild`` job an
operator launches with config (progress in its logs, a ``product_projection`` materialization), the ``epoch_fence``
job that refuses to run without explicit config, and the same operations as ``prw product rebuild`` and
``prw epoch fence``. Real PostgreSQL, the intake origin on loopback serving the export API, the platform from the
``PRW_*`` environment; the resolver's ``exports`` stage runs beside them as its worker would."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import psycopg
import pytest
from typer.testing import CliRunner

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_cli.main import app as prw
from prw_orchestration.defs.pipeline import stage_job
from prw_orchestration.defs.rebuild import epoch_fence, product_rebuild
from prw_orchestration.resources import PlatformResource
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.epochs import current_epoch
from prw_platform.product.scopes import find_scope, project_catalog
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.runtime import Budget, run_stage
from prw_platform.services import PRODUCT_SCOPES, ClientSpec
from tests.e2e.product.decisions import create_and_map

TENANT, CATALOG, SOURCE = "ten_rbo", "cat_rbo", "src_rbo_web"


@pytest.fixture
def platform(deployment_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Platform]:
    with bootstrap(Settings()) as built:
        provisioned = built.catalogs.provision(
            CatalogSpec(TENANT, CATALOG, "Ops", "automatic", (SourceSpec(SOURCE, "Ops web"),))
        )
        project_catalog(built.product_db, TENANT, CATALOG, provisioned.stream.history_epoch)
        for n in range(1, 3):
            built.decisions.decide(create_and_map(CATALOG, SOURCE, "rbo", n), TENANT, CATALOG)
        run_stage(built, "relay", Budget(batches=5))
        run_stage(built, "apply", Budget(batches=5))
        client = built.clients.create(
            ClientSpec(TENANT, CATALOG, "product", "product_live", (), PRODUCT_SCOPES)
        )
        stop = threading.Event()

        def exports_worker() -> None:  # the resolver's ``exports`` stage, as ``prw worker`` runs it
            while not stop.wait(0.1):
                run_stage(built, "exports")

        worker = threading.Thread(target=exports_worker)
        with BackgroundServer(compose.intake_app(built)) as intake:
            monkeypatch.setenv("PRW_EXPORTS_URL", intake.url)
            monkeypatch.setenv("PRW_EXPORTS_CLIENT_ID", client.client_id)
            monkeypatch.setenv("PRW_EXPORTS_CLIENT_SECRET", client.client_secret)
            worker.start()
            try:
                yield built
            finally:
                stop.set()
                worker.join()


def serving_generation(platform: Platform) -> int:
    scope = platform.product_db.run(lambda conn: find_scope(conn, TENANT, CATALOG), tenant_id=TENANT)
    assert scope is not None
    return scope.serving_generation


def test_product_rebuild_job_takes_its_config_logs_progress_and_records_the_projection(
    platform: Platform,
) -> None:
    with dg.instance_for_test() as instance:
        result = product_rebuild.execute_in_process(
            run_config={
                "ops": {"rebuild_product_projection": {"config": {"tenant": TENANT, "catalog": CATALOG}}}
            },
            resources={"platform": PlatformResource()},
            instance=instance,
        )
        logged = [entry.user_message for entry in instance.all_logs(result.run_id)]
    assert result.success
    (event,) = result.get_asset_materialization_events()
    metadata = {k: v.value for k, v in event.materialization.metadata.items()}
    assert (metadata["generation"], metadata["cutover_position_h"]) == (2, 8)
    # 6 aggregates and 2 inventory observations loaded
    for phase in ("export: 0", "load: 8 / 8", "cutover: 8 / 8", "cut over to generation 2 at position 8"):
        assert phase in logged, logged
    assert serving_generation(platform) == 2


def test_epoch_fence_job_refuses_without_explicit_config_and_changes_nothing(platform: Platform) -> None:
    before = current_epoch(platform.control_db, TENANT, CATALOG)
    with pytest.raises(dg.DagsterInvalidConfigError):
        epoch_fence.execute_in_process(resources={"platform": PlatformResource()})
    wrong = epoch_fence.execute_in_process(
        run_config={
            "ops": {
                "fence_history_epoch": {"config": {"tenant": TENANT, "catalog": CATALOG, "confirm": "yes"}}
            }
        },
        resources={"platform": PlatformResource()},
        raise_on_error=False,
    )
    assert not wrong.success
    assert current_epoch(platform.control_db, TENANT, CATALOG) == before
    assert serving_generation(platform) == 1


def test_epoch_fence_job_with_its_confirmation_issues_a_new_epoch_and_rebuilds(platform: Platform) -> None:
    before = current_epoch(platform.control_db, TENANT, CATALOG)
    assert before is not None
    result = epoch_fence.execute_in_process(
        run_config={
            "ops": {
                "fence_history_epoch": {
                    "config": {"tenant": TENANT, "catalog": CATALOG, "confirm": f"fence {TENANT}/{CATALOG}"}
                }
            }
        },
        resources={"platform": PlatformResource()},
    )
    assert result.success
    after = current_epoch(platform.control_db, TENANT, CATALOG)
    assert after is not None
    assert after.ordinal == before.ordinal + 1
    assert result.output_for_node("fence_history_epoch") == after.epoch_id
    assert serving_generation(platform) == 2


def test_prw_product_rebuild_and_prw_epoch_fence_print_their_results(platform: Platform) -> None:
    runner = CliRunner()
    rebuilt = runner.invoke(prw, ["product", "rebuild", "--tenant", TENANT, "--catalog", CATALOG])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert f"Rebuilt {TENANT}/{CATALOG}: cut over at 8" in rebuilt.output
    refused = runner.invoke(prw, ["epoch", "fence", "--tenant", TENANT, "--catalog", CATALOG])
    assert refused.exit_code == 2
    fenced = runner.invoke(prw, ["epoch", "fence", "--tenant", TENANT, "--catalog", CATALOG, "--yes"])
    assert fenced.exit_code == 0, fenced.output
    assert "Fenced" in fenced.output
    assert serving_generation(platform) == 3


class Killed(BaseException):
    """The rebuild's process dies here: none of its handlers run (its row stays active, its lease held)."""


def kill_while_loading(phase: str, done: int, total: int | None) -> None:
    if phase == "load":
        raise Killed(phase)


def kill_a_rebuild() -> None:
    """A rebuild process (configured from the ``PRW_*`` environment, as ``prw`` is) that dies mid-load."""
    with bootstrap(Settings()) as process, pytest.raises(Killed):
        process.product_rebuild.run(TENANT, CATALOG, on_progress=kill_while_loading)


def test_a_dead_rebuild_is_recovered_with_prw_product_rebuild_abandon_and_the_jobs_abandon_stale(
    platform: Platform,
) -> None:
    kill_a_rebuild()
    runner = CliRunner()
    running = runner.invoke(prw, ["product", "rebuild", "--tenant", TENANT, "--catalog", CATALOG])
    assert running.exit_code == 1
    assert "REBUILD_RUNNING" in running.output
    assert "--abandon" in running.output
    live = runner.invoke(prw, ["product", "rebuild", "--tenant", TENANT, "--catalog", CATALOG, "--abandon"])
    assert live.exit_code == 1
    assert "REBUILD_LIVE" in live.output
    forced = runner.invoke(
        prw, ["product", "rebuild", "--tenant", TENANT, "--catalog", CATALOG, "--abandon", "--force"]
    )
    assert forced.exit_code == 0, forced.output
    assert "Abandoned rebuild" in forced.output
    assert "released" in forced.output
    assert serving_generation(platform) == 1

    # The Dagster job: abandon_stale (forced here: the heartbeat is fresh) first, then the rebuild.
    kill_a_rebuild()
    with dg.instance_for_test() as instance:
        config = {"tenant": TENANT, "catalog": CATALOG, "abandon_stale": True, "force_abandon": True}
        result = product_rebuild.execute_in_process(
            run_config={"ops": {"rebuild_product_projection": {"config": config}}},
            resources={"platform": PlatformResource()},
            instance=instance,
        )
        logged = [entry.user_message for entry in instance.all_logs(result.run_id)]
    assert result.success
    assert any(line.startswith("abandoned rebuild rbd_") for line in logged), logged
    assert serving_generation(platform) == 4  # above the two abandoned generations (2 and 3)


def test_the_rebuild_cleanup_job_drops_the_replaced_generation_in_chunks_and_logs_its_progress(
    platform: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRW_REBUILD_CLEANUP_AFTER_SECONDS", "0")
    monkeypatch.setenv("PRW_REBUILD_CLEANUP_CHUNK_ROWS", "2")
    rebuilt = CliRunner().invoke(prw, ["product", "rebuild", "--tenant", TENANT, "--catalog", CATALOG])
    assert rebuilt.exit_code == 0, rebuilt.output
    job = stage_job(platform.stages["rebuild-cleanup"])
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(resources={"platform": PlatformResource()}, instance=instance)
        logged = [entry.user_message for entry in instance.all_logs(result.run_id)]
    assert result.success
    progress = [line for line in logged if "rows dropped so far" in line]
    # Generation 1 holds 2 items with their listings, mappings, releases and inbox rows: several chunks of 2 rows
    # per table.
    assert len(progress) >= 2, logged
    assert progress[0].startswith(
        f"rebuild-cleanup: generation 1 of {TENANT}/{CATALOG} (cut_over rebuild rbd_"
    )
    assert "rebuild-cleanup: 1 taken: generations_dropped 1 in 2 batches" in logged, logged


_REBUILD_PROCESS = """
import sys, threading
from pathlib import Path
from prw_platform.bootstrap import bootstrap
from prw_platform.config import Settings

marker = Path(sys.argv[1])

def hang_while_loading(phase, done, total):
    if phase == "load":
        marker.write_text("loading")
        threading.Event().wait()  # killed here

with bootstrap(Settings()) as platform:
    platform.product_rebuild.run(sys.argv[2], sys.argv[3], on_progress=hang_while_loading)
"""


def projected_items(platform: Platform, generation: int) -> list[tuple[str, int]]:
    with psycopg.connect(platform.urls.main) as conn:
        return [
            (row[0], row[1])
            for row in conn.execute(
                "SELECT item_id, revision FROM product.item_projection WHERE tenant_id = %s AND catalog_id = %s "
                "AND generation = %s ORDER BY item_id",
                (TENANT, CATALOG, generation),
            ).fetchall()
        ]


def test_a_rebuild_process_killed_mid_load_is_abandoned_once_stale_and_the_catalog_rebuilt(
    platform: Platform, tmp_path: Path
) -> None:
    marker = tmp_path / "loading"
    process = subprocess.Popen([sys.executable, "-c", _REBUILD_PROCESS, str(marker), TENANT, CATALOG])
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert process.poll() is None, "the rebuild process ended before it loaded"
            assert time.monotonic() < deadline, "the rebuild process never reached its load"
            threading.Event().wait(0.05)
    finally:
        process.kill()  # SIGKILL: no handler of the rebuild runs
        process.wait()
    runner = CliRunner()
    running = runner.invoke(prw, ["product", "rebuild", "--tenant", TENANT, "--catalog", CATALOG])
    assert running.exit_code == 1
    assert "REBUILD_RUNNING" in running.output
    # Ten minutes later (a platform whose clock is ahead): the dead rebuild's heartbeat is stale.
    later = Settings().model_copy(update={"rebuild_stale_after_seconds": 600})
    with bootstrap(later, clock=lambda: datetime.now(UTC) + timedelta(seconds=601)) as operator:
        abandoned = operator.product_rebuild.abandon(TENANT, CATALOG)
    assert abandoned.status_before == "loading"
    assert abandoned.lease_released
    rebuilt = runner.invoke(prw, ["product", "rebuild", "--tenant", TENANT, "--catalog", CATALOG])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert serving_generation(platform) == 3
    assert projected_items(platform, 3) == projected_items(platform, 1)

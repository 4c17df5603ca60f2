"""The restore drill (seed 003 if_projection_bootstrap "Fence restored history") on real parts:
back up the resolver's schema (pg_dump), write more and deliver it, leave some deliveries in flight, restore the
backup (pg_restore), fence: a NEW epoch from the control database, old workers fenced, the product rebuilt from
restored state. The product then ignores every old-epoch delivery (audited, never relabeled) and converges on the
new history."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

from prw_platform.contracts import StreamKey
from prw_platform.epochs import current_epoch
from prw_platform.fencing import EpochFencing
from prw_platform.product import reports as product_reports
from prw_platform.resolver.stream.cursor import lock_cursor
from prw_platform.resolver.stream.errors import HistoryEpochFenced
from prw_platform.runtime import Budget, run_stage
from tests.e2e.retention.test_product_rebuild_http import (  # noqa: F401 (the fixture)
    TENANT,
    Deployment,
    deployment,
    generation_state,
    module_deployment,
)


def pg_tool(name: str, url: str) -> str:
    """``pg_dump`` / ``pg_restore`` of the server's major version (or newer): the machine's, or the ones shipped
    with the embedded server's wheel."""
    from pgserver._commands import POSTGRES_BIN_PATH

    with psycopg.connect(url) as conn:
        major = int(conn.execute("SHOW server_version_num").fetchone()[0]) // 10000  # type: ignore[index]
    candidates = [shutil.which(name), str(POSTGRES_BIN_PATH / name)]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            version = subprocess.run(
                [candidate, "--version"], capture_output=True, text=True, check=True
            ).stdout
            if int(re.findall(r"(\d+)\.\d+", version)[0]) >= major:
                return candidate
    pytest.fail(f"no {name} for PostgreSQL {major} among {candidates}")


def back_up_resolver(url: str, to: Path) -> None:
    dump = pg_tool("pg_dump", url)
    subprocess.run([dump, "--schema=resolver", "--format=custom", f"--file={to}", url], check=True)


def restore_resolver(url: str, backup: Path) -> None:
    restore = pg_tool("pg_restore", url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA resolver CASCADE")
    subprocess.run([restore, "--exit-on-error", f"--dbname={url}", str(backup)], check=True)


def accepted_items(url: str, catalog_id: str) -> list[tuple[str, int]]:
    with psycopg.connect(url) as conn:
        return [
            (row[0], row[1])
            for row in conn.execute(
                "SELECT item_id, revision FROM resolver.catalog_item WHERE tenant_id = %s AND catalog_id = %s "
                "ORDER BY item_id",
                (TENANT, catalog_id),
            ).fetchall()
        ]


def test_restore_drill_fences_the_old_epoch_and_the_product_converges_on_the_new_history(
    deployment: Deployment,  # noqa: F811 (the imported fixture)
    tmp_path: Path,
) -> None:
    platform = deployment.platform
    url = platform.urls.main
    stream = deployment.stream()
    old_epoch = stream.epoch
    stream.decide(3)
    stream.deliver_live()  # positions 1..12 applied
    backup = tmp_path / "resolver.dump"
    back_up_resolver(url, backup)
    restored = accepted_items(url, stream.catalog_id)

    stream.decide(2)
    stream.deliver_live()  # 13..20 applied: two items the restore will lose
    stream.decide(1)
    run_stage(platform, "relay", Budget(batches=5))  # 21..24 in flight, not delivered yet
    assert len(generation_state(platform, stream.catalog_id, 1)["public_item"]) == 5

    restore_resolver(url, backup)
    assert accepted_items(url, stream.catalog_id) == restored

    fencing = EpochFencing(platform.resolver_db, platform.control_db, platform.product_db, stream.rebuild())
    steps: list[str] = []
    result = fencing.fence(TENANT, stream.catalog_id, "restore drill", on_step=steps.append)

    # A NEW epoch from the control database, outside the restored one.
    new_epoch = current_epoch(platform.control_db, TENANT, stream.catalog_id)
    assert new_epoch is not None
    assert (result.previous_epoch, result.new_epoch) == (old_epoch, new_epoch.epoch_id)
    assert result.fenced_epochs == (old_epoch,)
    assert new_epoch.epoch_id != old_epoch
    assert len(steps) == 7  # pause serving and relay, fence + issue, move, rebuild, resume relay and serving
    # Old workers can no longer commit with the old epoch.
    with pytest.raises(HistoryEpochFenced):
        platform.resolver_db.run(
            lambda conn: lock_cursor(conn, StreamKey(TENANT, stream.catalog_id, old_epoch)), tenant_id=TENANT
        )
    # The product was rebuilt from restored state: the two lost items are gone from every public table.
    stream.epoch = new_epoch.epoch_id
    rebuilt = generation_state(platform, stream.catalog_id, result.rebuild.generation)
    assert [(r[0], r[1]) for r in rebuilt["item_projection"]] == restored
    assert {r[0] for r in rebuilt["public_item"]} == {item for item, _ in restored}
    assert result.rebuild.start_position == 0  # the new epoch's cursor starts over

    # The in-flight old-epoch deliveries are audited and terminally ignored, never relabeled.
    applied = run_stage(platform, "apply", Budget(batches=5))
    assert applied.counts.get("old_epoch") == 4, applied.counts
    (progress,) = [
        p
        for p in product_reports.all_stream_progress(platform.operator_db)
        if p.catalog_id == stream.catalog_id
    ]
    assert progress.history_epoch == new_epoch.epoch_id
    assert progress.ignored_old_epoch == 4
    with psycopg.connect(url) as conn:
        audited = conn.execute(
            "SELECT DISTINCT history_epoch FROM product.inbox WHERE tenant_id = %s AND catalog_id = %s "
            "AND outcome = 'ignored_old_epoch'",
            (TENANT, stream.catalog_id),
        ).fetchall()
    assert audited == [(old_epoch,)]

    # New history: writes on the new epoch flow through as usual, on top of the restored state.
    stream.decide(1)
    stream.deliver_live()
    assert stream.live_position() == 4
    final = generation_state(platform, stream.catalog_id, result.rebuild.generation)
    assert [(r[0], r[1]) for r in final["item_projection"]] == accepted_items(url, stream.catalog_id)
    assert len(final["public_item"]) == 4

"""Recovery from a dead rebuild, the bounded generation cleanup and the relay under an epoch fence (seed 003
if_projection_bootstrap "Load shadow", "Catch up and cut over", "Fence restored history") on
the same real parts as ``test_product_rebuild_http``: decisions, the relay, the live consumer, the export API on
loopback.

A dead owner is simulated by stopping the rebuild's process between two of its steps: a ``BaseException`` raised
from its progress callback unwinds it past every handler, as a kill would, so its row stays ``loading``, its
lease stays held and its shadow generation stays half loaded.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from prw_platform.fencing import EpochFencing
from prw_platform.product.rebuild import RebuildFailed
from prw_platform.product.rebuild.records import RebuildRecord
from prw_platform.runtime import Budget, run_stage
from tests.e2e.retention.test_product_rebuild_http import (  # noqa: F401 (the fixture)
    TENANT,
    Deployment,
    Stream,
    assert_same_state,
    deployment,
    generation_state,
    module_deployment,
    serial_application,
)


class Killed(BaseException):
    """The rebuild's process dies here: no handler of the rebuild runs."""


def kill_at(phase: str) -> object:
    def progress(reported: str, done: int, total: int | None) -> None:
        if reported == phase:
            raise Killed(phase)

    return progress


def rebuild_rows(stream: Stream) -> list[tuple[str, str, int, str | None]]:
    with psycopg.connect(stream.deployment.platform.urls.main) as conn:
        return [
            (r[0], r[1], r[2], r[3])
            for r in conn.execute(
                "SELECT rebuild_id, status, generation, error_code FROM product.rebuild "
                "WHERE tenant_id = %s AND catalog_id = %s ORDER BY started_at",
                (TENANT, stream.catalog_id),
            ).fetchall()
        ]


def leases(stream: Stream) -> tuple[object, ...]:
    status = next(
        s for s in stream.deployment.platform.retention_status() if s.catalog_id == stream.catalog_id
    )
    return tuple(status.leases)


def generation_rows(stream: Stream, generation: int) -> int:
    return sum(
        len(rows)
        for rows in generation_state(stream.deployment.platform, stream.catalog_id, generation).values()
    )


# --- item 1: a dead rebuild ----------------------------------------------------------------------------------------


def test_a_dead_rebuild_is_abandoned_once_stale_and_the_next_rebuild_converges_on_the_serial_state(
    deployment: Deployment,  # noqa: F811 (the imported fixture)
) -> None:
    stream = deployment.stream()
    stream.decide(2)
    stream.deliver_live()
    with pytest.raises(Killed):
        stream.rebuild(clock=deployment.clock).run(TENANT, stream.catalog_id, on_progress=kill_at("load"))
    ((dead_id, status, dead_generation, _),) = rebuild_rows(stream)
    assert (status, dead_generation) == ("loading", 2)
    assert len(leases(stream)) == 1  # the dead owner's lease still pins the tail
    stream.decide(1)
    stream.deliver_live()

    # Every later rebuild is refused, and the refusal says how to recover.
    rebuild = stream.rebuild(clock=deployment.clock)
    with pytest.raises(RebuildFailed) as running:
        rebuild.run(TENANT, stream.catalog_id)
    assert running.value.code == "REBUILD_RUNNING"
    assert dead_id in str(running.value)
    assert "--abandon" in str(running.value)
    assert len(leases(stream)) == 1  # the refused rebuild's own export lease was released

    # Its heartbeat is fresh: not abandoned without --force.
    with pytest.raises(RebuildFailed) as live:
        rebuild.abandon(TENANT, stream.catalog_id)
    assert live.value.code == "REBUILD_LIVE"
    assert rebuild_rows(stream)[0][1] == "loading"

    # Once stale: abandoned, its lease released in the resolver, its generation left to the cleanup.
    deployment.clock.now += rebuild.stale_after + timedelta(seconds=1)
    abandoned = rebuild.abandon(TENANT, stream.catalog_id)
    assert (abandoned.rebuild_id, abandoned.generation, abandoned.status_before) == (dead_id, 2, "loading")
    assert abandoned.lease_released
    assert leases(stream) == ()
    assert rebuild_rows(stream)[0][1:] == ("abandoned", 2, "ABANDONED")
    with pytest.raises(RebuildFailed) as nothing:
        rebuild.abandon(TENANT, stream.catalog_id)
    assert nothing.value.code == "NO_ACTIVE_REBUILD"

    # A new rebuild starts, above the abandoned generation, and converges on the serial application through H.
    result = rebuild.run(TENANT, stream.catalog_id)
    assert (result.previous_generation, result.generation) == (1, 3)
    assert stream.scope_generation() == 3
    assert stream.live_position() == result.target_position == stream.made * 4
    assert_same_state(
        generation_state(deployment.platform, stream.catalog_id, 3),
        serial_application(stream, result.target_position),
    )

    # The cleanup drops the abandoned generation and the replaced one.
    assert generation_rows(stream, 2) > 0
    deployment.clock.now = max(deployment.clock.now, datetime.now(UTC)) + timedelta(seconds=1)
    assert run_stage(deployment.platform, "rebuild-cleanup").counts == {"generations_dropped": 2}
    assert generation_rows(stream, 2) == generation_rows(stream, 1) == 0
    assert generation_rows(stream, 3) > 0


def test_a_live_rebuild_is_abandoned_only_with_force_and_its_owner_then_stops_swapping_nothing(
    deployment: Deployment,  # noqa: F811 (the imported fixture)
) -> None:
    stream = deployment.stream()
    stream.decide(2)
    stream.deliver_live()
    operator = stream.rebuild(clock=deployment.clock)
    refusals: list[str] = []

    def abandoned_while_loading(phase: str, done: int, total: int | None) -> None:
        if phase != "load" or refusals:
            return
        with pytest.raises(RebuildFailed) as live:
            operator.abandon(TENANT, stream.catalog_id)
        refusals.append(live.value.code)
        operator.abandon(TENANT, stream.catalog_id, force=True)

    with pytest.raises(RebuildFailed) as stopped:
        stream.rebuild(clock=deployment.clock).run(
            TENANT, stream.catalog_id, on_progress=abandoned_while_loading
        )
    assert refusals == ["REBUILD_LIVE"]
    assert stopped.value.code == "REBUILD_ABANDONED"
    assert stream.scope_generation() == 1
    # The owner's own failure did not overwrite the operator's decision.
    assert [row[1:] for row in rebuild_rows(stream)] == [("abandoned", 2, "ABANDONED")]
    assert leases(stream) == ()
    assert operator.run(TENANT, stream.catalog_id).generation == 3


def test_an_owner_abandoned_between_heartbeats_stops_at_its_next_step_swapping_nothing(
    deployment: Deployment,  # noqa: F811 (the imported fixture)
) -> None:
    """The heartbeat is renewed at most every ``renew_every_seconds``: an owner abandoned after its last renewal
    finds out when it next records its progress (or in its cutover transaction, which then rolls back)."""
    stream = deployment.stream()
    stream.decide(1)
    stream.deliver_live()
    operator = stream.rebuild(clock=deployment.clock)
    wrote: list[int] = []

    def abandoned_before_cutover(phase: str, done: int, total: int | None) -> None:
        if phase == "load" and not wrote:
            stream.decide(1)  # a tail to catch up
            wrote.append(1)
        if phase == "catch_up":
            operator.abandon(TENANT, stream.catalog_id, force=True)

    owner = stream.rebuild(clock=deployment.clock, renew_every_seconds=3600.0)
    with pytest.raises(RebuildFailed) as stopped:
        owner.run(TENANT, stream.catalog_id, on_progress=abandoned_before_cutover)
    assert stopped.value.code == "REBUILD_ABANDONED"
    assert stream.scope_generation() == 1
    assert [row[1] for row in rebuild_rows(stream)] == ["abandoned"]


# --- item 2: the cleanup in bounded, resumable chunks ----------------------------------------------------------------


def test_the_cleanup_drops_a_generation_in_bounded_chunks_resumes_after_a_crash_and_reports_progress(
    deployment: Deployment,  # noqa: F811 (the imported fixture)
) -> None:
    stream = deployment.stream()
    stream.decide(3)
    stream.deliver_live()
    rebuild = stream.rebuild(clock=deployment.clock, cleanup_chunk_rows=2)
    rebuild.run(TENANT, stream.catalog_id)
    before = generation_rows(stream, 1)
    assert before > 20
    deployment.clock.now = max(deployment.clock.now, datetime.now(UTC)) + timedelta(seconds=1)
    reads = deployment.platform.operator_db
    progress: list[tuple[int, int]] = []

    def crash_after_two_chunks(record: RebuildRecord, generation: int, removed: int) -> None:
        progress.append((generation, removed))
        if len(progress) == 2:
            raise Killed("cleanup")

    with pytest.raises(Killed):
        rebuild.clean_up(reads, timedelta(0), on_progress=crash_after_two_chunks)
    # Two chunks committed (at most 2 rows of each table each), the rest is still there, nothing marked cleaned.
    left = generation_rows(stream, 1)
    assert 0 < left < before
    assert all(
        later - earlier <= 2 * 20
        for (_, earlier), (_, later) in zip([(1, 0), *progress], progress, strict=False)
    )

    lines: list[str] = []
    rebuild_stage = deployment.platform.rebuild_cleanup
    rebuild_stage.rebuild.cleanup_chunk_rows = 2
    report = run_stage(deployment.platform, "rebuild-cleanup", Budget(batches=1), progress=lines.append)
    assert report.counts == {"generations_dropped": 1}
    assert generation_rows(stream, 1) == 0
    assert generation_rows(stream, 2) > 0
    assert lines
    assert all("rows dropped so far" in line for line in lines), lines
    assert f"generation 1 of {TENANT}/{stream.catalog_id}" in lines[0]


# --- item 3: the relay honours the fence ------------------------------------------------------------------------------


def unpublished(stream: Stream) -> int:
    with psycopg.connect(stream.deployment.platform.urls.main) as conn:
        row = conn.execute(
            "SELECT count(*) FROM resolver.outbox WHERE tenant_id = %s AND catalog_id = %s "
            "AND published_at IS NULL",
            (TENANT, stream.catalog_id),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_fenced_catalog_is_not_relayed_until_the_fence_completes(
    deployment: Deployment,  # noqa: F811 (the imported fixture)
) -> None:
    platform = deployment.platform
    stream = deployment.stream()
    other = deployment.stream()
    stream.decide(2)
    stream.deliver_live()
    stream.decide(1)  # old-epoch rows not relayed yet
    during: dict[str, object] = {}

    def while_fenced(phase: str, done: int, total: int | None) -> None:
        if during:
            return
        stream.decide(1)  # a writer on the new epoch
        other.decide(1)  # another catalog of the tenant is not fenced
        relayed = run_stage(platform, "relay", Budget(batches=5))
        during["relayed"] = relayed.taken
        during["unpublished"] = unpublished(stream)
        during["relay_has_work"] = platform.relay.has_work()

    fencing = EpochFencing(platform.resolver_db, platform.control_db, platform.product_db, stream.rebuild())
    steps: list[str] = []
    result = fencing.fence(
        TENANT, stream.catalog_id, "relay drill", on_progress=while_fenced, on_step=steps.append
    )

    # While fenced: the other catalog's rows went out, none of this catalog's (4 old-epoch, 4 new-epoch rows).
    assert during == {"relayed": 4, "unpublished": 8, "relay_has_work": False}
    assert (
        steps.index("paused the relay")
        < steps.index("resumed the relay")
        < steps.index("resumed public serving")
    )
    # After the fence: the relay resumes, the old-epoch rows are audited and ignored, the new ones apply.
    relayed = run_stage(platform, "relay", Budget(batches=5))
    assert relayed.taken == 8
    assert unpublished(stream) == 0
    applied = run_stage(platform, "apply", Budget(batches=5))
    assert applied.counts.get("old_epoch") == 4, applied.counts
    stream.epoch = result.new_epoch
    assert stream.live_position() == 4

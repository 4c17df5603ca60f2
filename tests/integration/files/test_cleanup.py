"""The files sweep and the cleanup consumer (seed 004 "Concurrency and Timing"), on the real
PostgreSQL queue and filesystem store, with a simulated clock (``prw_platform.clock``)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.files import store
from prw_platform.resolver.files.cleanup import CLEANUP_FAILED, RESEND_AFTER, cleanup_message
from prw_platform.resolver.files.errors import InvalidFileTransition
from prw_platform.resolver.files.service import CatalogFiles, FileSettings
from prw_platform.resolver.files.sources import ExistingFile, UploadSource
from prw_platform.storage.errors import ObjectNotFound
from tests.integration.files.conftest import (
    ACTOR,
    Cleanup,
    FlakyStore,
    Items,
    Rows,
    SimClock,
    png,
    stream_locator,
)
from tests.integration.resolution.pipeline import CATALOG, TENANT

DUE = FileSettings().cleanup_delay + timedelta(seconds=1)


@pytest.fixture
def files(
    resolver_db: Database, flaky_store: FlakyStore, sim_clock: SimClock, control_db: Database, catalogs: None
) -> CatalogFiles:
    """The saves over the same (flaky) store the consumer deletes from, with the cleanup queue for retries."""
    from prw_platform.queues import CATALOG_FILE_CLEANUP, PostgresQueue

    queue = PostgresQueue(resolver_db, CATALOG_FILE_CLEANUP.name)
    return CatalogFiles(
        resolver_db,
        flaky_store,  # type: ignore[arg-type]
        sim_clock,
        FileSettings(),
        cleanup_queue=queue,
        streams=stream_locator(control_db),
    )


def _detached(files: CatalogFiles, items: Items, item_id: str = "itm_anvil") -> str:
    """A picture saved then removed: detached, its cleanup due in an hour."""
    if not items.owner.run(
        lambda c: c.execute("SELECT 1 FROM resolver.catalog_item WHERE item_id = %s", (item_id,)).fetchone()
    ):
        items.add(item_id)
    saved = files.save_item_pictures(TENANT, item_id, UploadSource(png()), [], actor=ACTOR)
    files.save_item_pictures(TENANT, item_id, None, [], actor=ACTOR)
    assert saved.main is not None
    return saved.main.file_id


def _abandoned(files: CatalogFiles, data: bytes | None = None) -> str:
    file_id = files.prepare(TENANT, CATALOG, UploadSource(data or png()), save_id="sav_gone", actor=ACTOR)
    files._abandon(TENANT, [file_id], ACTOR)  # the save that prepared it failed
    return file_id


def test_the_sweep_claims_only_due_files_and_sends_one_message_each(
    files: CatalogFiles, items: Items, rows: Rows, cleanup: Cleanup, sim_clock: SimClock
) -> None:
    detached = _detached(files, items)
    abandoned = _abandoned(files)

    assert cleanup.sweep.has_work() is False
    assert cleanup.sweep.run_batch(100).claimed == []
    sim_clock.advance(DUE)
    assert cleanup.sweep.has_work() is True

    report = cleanup.sweep.run_batch(100)

    assert sorted((c.file_id, c.from_state) for c in report.claimed) == sorted(
        [(detached, "detached"), (abandoned, "abandoned")]
    )
    assert rows.state(detached) == rows.state(abandoned) == "discarding"
    assert rows.all("SELECT actor FROM resolver.catalog_file_history WHERE to_state = 'discarding'") == [
        {"actor": "sweep:files-sweep"},
        {"actor": "sweep:files-sweep"},
    ]
    bodies = sorted(str(r["body"]["file_id"]) for r in rows.all("SELECT body FROM queue.message"))
    assert bodies == sorted([detached, abandoned])
    assert cleanup.sweep.run_batch(100).claimed == []  # nothing claimed twice


def test_a_claimed_file_whose_message_was_lost_is_sent_again_once_its_cleanup_is_overdue(
    files: CatalogFiles, items: Items, rows: Rows, cleanup: Cleanup, sim_clock: SimClock
) -> None:
    """The sweep committed the claim, but the message never reached the queue (SQS sends after the commit; a
    crash in between loses it): the file stays discarding until RESEND_AFTER, then a sweep sends it again and the
    consumer settles it."""
    file_id = _detached(files, items)
    sim_clock.advance(DUE)
    assert [c.file_id for c in cleanup.sweep.run_batch(100).claimed] == [file_id]
    rows.owner.run(lambda c: c.execute("DELETE FROM queue.message"))  # the lost send

    sim_clock.advance(RESEND_AFTER - timedelta(seconds=1))
    assert cleanup.sweep.has_work() is False
    assert cleanup.sweep.run_batch(100).resent == []
    sim_clock.advance(timedelta(seconds=1))
    assert cleanup.sweep.has_work() is True
    report = cleanup.sweep.run_batch(100)

    assert [(c.file_id, c.from_state) for c in report.resent] == [(file_id, "discarding")]
    assert report.claimed == []
    assert rows.state(file_id) == "discarding"  # no transition, nothing recorded
    assert rows.all(
        "SELECT count(*) AS n FROM resolver.catalog_file_history WHERE to_state = 'discarding'"
    ) == [{"n": 1}]
    assert cleanup.sweep.run_batch(100).resent == []  # sent once per RESEND_AFTER
    assert cleanup.deliver() == {"retired": 1}
    assert rows.state(file_id) == "discarded"


def test_a_released_file_is_retired_readable_through_thirty_days_then_gone(
    files: CatalogFiles, items: Items, rows: Rows, cleanup: Cleanup, sim_clock: SimClock
) -> None:
    file_id = _detached(files, items)
    data = files.read_bytes(TENANT, file_id)
    sim_clock.advance(DUE)
    cleanup.sweep.run_batch(100)

    assert cleanup.deliver() == {"retired": 1}

    assert rows.state(file_id) == "discarded"
    retained = rows.all("SELECT retained_until FROM resolver.catalog_file WHERE file_id = %s", file_id)
    assert retained[0]["retained_until"] == sim_clock() + timedelta(days=30)
    for _day in range(29):
        sim_clock.advance(timedelta(days=1))
        cleanup.sweep.run_batch(100)
        assert files.read_bytes(TENANT, file_id) == data
    sim_clock.advance(timedelta(days=1) - timedelta(seconds=1))
    cleanup.sweep.run_batch(100)
    assert files.read_bytes(TENANT, file_id) == data  # the last second of day 30
    sim_clock.advance(timedelta(seconds=1))
    assert cleanup.sweep.has_work() is True

    assert cleanup.sweep.run_batch(100).expired == 1

    with pytest.raises(ObjectNotFound):
        files.read_bytes(TENANT, file_id)
    assert rows.state(file_id) == "discarded"
    assert cleanup.sweep.has_work() is False


def test_an_uncommitted_copy_is_deleted_at_once_unless_another_file_shares_its_bytes(
    files: CatalogFiles, items: Items, rows: Rows, cleanup: Cleanup, sim_clock: SimClock
) -> None:
    alone = _abandoned(files)
    shared_bytes = png()
    shared = _abandoned(files, shared_bytes)
    item = items.add("itm_anvil")
    keeper = files.save_item_pictures(TENANT, item, UploadSource(shared_bytes), [], actor=ACTOR).main
    assert keeper is not None
    sim_clock.advance(DUE)
    cleanup.sweep.run_batch(100)

    assert cleanup.deliver() == {"deleted": 2}

    assert rows.state(alone) == rows.state(shared) == "discarded"
    with pytest.raises(ObjectNotFound):
        files.read_bytes(TENANT, alone)
    # The same bytes are the attached picture's: the object stays.
    assert files.read_bytes(TENANT, keeper.file_id) == shared_bytes


def test_a_file_a_saved_record_names_again_is_attached_by_the_consumer(
    files: CatalogFiles, items: Items, rows: Rows, cleanup: Cleanup, sim_clock: SimClock
) -> None:
    file_id = _detached(files, items)
    sim_clock.advance(DUE)
    cleanup.sweep.run_batch(100)
    # While the message waits, a save names the (discarding) file again.
    files.save_item_pictures(TENANT, "itm_anvil", ExistingFile(file_id), [], actor=ACTOR)

    assert cleanup.deliver() == {"attached": 1}
    assert rows.state(file_id) == "attached"
    assert rows.all(
        "SELECT from_state, to_state, actor FROM resolver.catalog_file_history WHERE file_id = %s ORDER BY seq DESC"
        " LIMIT 1",
        file_id,
    ) == [{"from_state": "discarding", "to_state": "attached", "actor": "consumer:files-cleanup"}]
    # A redelivery of the same work changes nothing.
    cleanup.sweep_queue.send({"tenant_id": TENANT, "file_id": file_id})
    assert cleanup.deliver() == {"skipped": 1}
    assert rows.state(file_id) == "attached"


def _waiting_for_locks(owner: Database) -> int:
    return int(
        owner.run(
            lambda c: c.execute(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND datname = current_database()"
            ).fetchone()
        )["n"]  # type: ignore[index]
    )


def _until(condition: object, what: str) -> None:
    """Wait for a condition of the database (not a time): lock waits are granted in arrival order."""
    import time

    for _ in range(2000):
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.005)
    raise AssertionError(f"never: {what}")


def test_a_save_that_re_attaches_a_file_while_the_consumer_settles_it_leaves_it_attached_with_its_bytes(
    files: CatalogFiles,
    items: Items,
    rows: Rows,
    cleanup: Cleanup,
    sim_clock: SimClock,
    resolver_db: Database,
    owner_db: Database,
) -> None:
    file_id = _detached(files, items)
    data = files.read_bytes(TENANT, file_id)
    sim_clock.advance(DUE)
    cleanup.sweep.run_batch(100)
    outcomes: list[object] = []

    # Hold the file row, queue the save's record transaction behind it, then the consumer's settlement.
    with resolver_db.transaction(tenant_id=TENANT) as holder:
        store.get_files(holder, TENANT, [file_id], lock=True)
        save = threading.Thread(
            target=lambda: outcomes.append(
                files.save_item_pictures(TENANT, "itm_anvil", ExistingFile(file_id), [], actor=ACTOR)
            )
        )
        save.start()
        _until(lambda: _waiting_for_locks(owner_db) == 1, "the save waits for the file row")
        settle = threading.Thread(target=lambda: outcomes.append(cleanup.deliver()))
        settle.start()
        _until(lambda: _waiting_for_locks(owner_db) == 2, "the consumer waits for the file row")
    save.join()
    settle.join()

    assert outcomes[-1] == {"attached": 1}
    assert rows.state(file_id) == "attached"
    assert files.read_bytes(TENANT, file_id) == data
    assert files.item_pictures(TENANT, "itm_anvil").main.file_id == file_id  # type: ignore[union-attr]


def test_when_the_consumer_settles_first_the_save_must_prepare_the_picture_again(
    files: CatalogFiles, items: Items, rows: Rows, cleanup: Cleanup, sim_clock: SimClock
) -> None:
    file_id = _detached(files, items)
    sim_clock.advance(DUE)
    cleanup.sweep.run_batch(100)
    assert cleanup.deliver() == {"retired": 1}

    with pytest.raises(InvalidFileTransition, match="requires fresh preparation"):
        files.save_item_pictures(TENANT, "itm_anvil", ExistingFile(file_id), [], actor=ACTOR)
    assert rows.state(file_id) == "discarded"
    assert files.item_pictures(TENANT, "itm_anvil").main is None


def test_two_overlapping_sweeps_claim_disjoint_files(
    files: CatalogFiles, cleanup: Cleanup, sim_clock: SimClock, sweeper_db: Database, rows: Rows
) -> None:
    abandoned = {_abandoned(files) for _ in range(3)}
    sim_clock.advance(DUE)

    with sweeper_db.transaction() as first:
        held = store.claim_due(first, sim_clock(), 1, "sweep:first")
        cleanup.sweep_queue.send_batch([cleanup_message(c) for c in held], conn=first)
        second = cleanup.sweep.run_batch(100)
        assert len(held) == 1
        assert {c.file_id for c in second.claimed} == abandoned - {held[0].file_id}

    assert set(rows.states().values()) == {"discarding"}
    messages = sorted(str(r["body"]["file_id"]) for r in rows.all("SELECT body FROM queue.message"))
    assert messages == sorted(abandoned)  # one message per file: none claimed twice


def test_the_fifth_failed_receive_fails_the_file_with_its_reason_and_dead_letters_the_message(
    files: CatalogFiles, rows: Rows, cleanup: Cleanup, sim_clock: SimClock, flaky_store: FlakyStore
) -> None:
    file_id = _abandoned(files)
    sim_clock.advance(DUE)
    cleanup.sweep.run_batch(100)
    flaky_store.failing = True

    for attempt in range(1, 5):
        assert cleanup.deliver() == {"retried": 1}
        assert rows.state(file_id) == "discarding"
        found = rows.all("SELECT failed_receives FROM resolver.catalog_file WHERE file_id = %s", file_id)
        assert found[0]["failed_receives"] == attempt
    assert cleanup.deliver() == {"failed": 1}

    (failed,) = files.failed_files(TENANT)
    assert failed.file_id == file_id
    assert failed.state == "failed"
    assert failed.failed_receives == 5
    assert "StorageUnavailable" in (failed.failure_reason or "")
    (letter,) = cleanup.queue.dead_letters()
    assert letter.reason == CLEANUP_FAILED
    assert letter.body == {"tenant_id": TENANT, "file_id": file_id}
    assert rows.count("queue.message") == 0

    # An operator retries once the store answers again: a fresh message, and the consumer settles the file.
    flaky_store.failing = False
    retried = files.retry_cleanup(TENANT, file_id, actor="operator:ada")
    assert retried.state == "discarding"
    assert cleanup.deliver() == {"deleted": 1}
    assert rows.state(file_id) == "discarded"
    assert [
        h["to_state"]
        for h in rows.all(
            "SELECT to_state FROM resolver.catalog_file_history WHERE file_id = %s ORDER BY seq", file_id
        )
    ] == ["preparing", "ready", "abandoned", "discarding", "failed", "discarding", "discarded"]
    with pytest.raises(InvalidFileTransition):
        files.retry_cleanup(TENANT, file_id, actor="operator:ada")

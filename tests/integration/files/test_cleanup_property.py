"""Property (seed 004): over any interleaving of saves (new, kept, removed, shared-bytes and
failing saves), sweeps (including two overlapping ones), consumer deliveries (including redeliveries, duplicates
and failing deliveries) and time, no file a saved record names is ever deleted or discarded, and once the system is
left to settle every file no record names ends discarded or failed while every named one ends attached."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prw_platform.db.database import Database
from prw_platform.queues import CATALOG_FILE_CLEANUP, PostgresQueue
from prw_platform.resolver.files import store
from prw_platform.resolver.files.cleanup import cleanup_message
from prw_platform.resolver.files.errors import CatalogFileError
from prw_platform.resolver.files.service import CatalogFiles, FileSettings
from prw_platform.resolver.files.sources import ExistingFile, PictureSource, UploadSource
from prw_platform.storage.keys import parse_tenant_ref
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
from tests.integration.resolution.pipeline import TENANT

ITEMS = ("itm_p0", "itm_p1", "itm_p2")

_op = st.one_of(
    st.tuples(st.just("save_new"), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("save_keep"), st.integers(0, 2)),
    st.tuples(st.just("save_remove"), st.integers(0, 2)),
    st.tuples(st.just("save_existing"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("save_same_bytes"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("save_fails"), st.integers(0, 2)),
    st.tuples(st.just("advance"), st.sampled_from([10, 61, 180, 60 * 24 * 31])),
    st.tuples(st.just("sweep")),
    st.tuples(st.just("overlapping_sweeps")),
    st.tuples(st.just("deliver"), st.integers(1, 3)),
    st.tuples(st.just("failing_delivery"), st.integers(1, 6)),
    st.tuples(st.just("duplicate"), st.integers(0, 50)),
)


class World:
    def __init__(
        self,
        files: CatalogFiles,
        cleanup: Cleanup,
        rows: Rows,
        clock: SimClock,
        flaky: FlakyStore,
        sweeper: Database,
    ) -> None:
        self.files = files
        self.cleanup = cleanup
        self.rows = rows
        self.clock = clock
        self.flaky = flaky
        self.sweeper = sweeper
        self.known: list[str] = []

    def _pick(self, n: int) -> str | None:
        return self.known[n % len(self.known)] if self.known else None

    def _save(self, item: str, main: PictureSource | None, gallery: list[PictureSource]) -> None:
        try:
            saved = self.files.save_item_pictures(TENANT, item, main, gallery, actor=ACTOR)
        except CatalogFileError:
            return  # refused saves are part of the interleaving; they must leave the invariants intact
        for view in ([saved.main] if saved.main else []) + saved.gallery:
            if view.file_id not in self.known:
                self.known.append(view.file_id)

    def step(self, op: tuple[Any, ...]) -> None:
        kind = op[0]
        if kind == "save_new":
            self._save(ITEMS[op[1]], UploadSource(png()), [UploadSource(png())] if op[2] else [])
        elif kind == "save_keep":
            current = self.files.item_pictures(TENANT, ITEMS[op[1]])
            kept: list[PictureSource] = [ExistingFile(g.file_id) for g in current.gallery]
            self._save(ITEMS[op[1]], UploadSource(png()), kept)
        elif kind == "save_remove":
            self._save(ITEMS[op[1]], None, [])
        elif kind == "save_existing" and (picked := self._pick(op[2])):
            self._save(ITEMS[op[1]], ExistingFile(picked), [])
        elif kind == "save_same_bytes" and (picked := self._pick(op[2])):
            try:
                data = self.files.read_bytes(TENANT, picked)
            except Exception:
                return  # its bytes are gone (deleted copy or expired retirement)
            self._save(ITEMS[op[1]], UploadSource(data), [])
        elif kind == "save_fails":
            # A new copy, then a reference the save never prepared: the record transaction fails after copying.
            self._save(ITEMS[op[1]], UploadSource(png()), [ExistingFile("fil_ffffffffffffffffffffffff")])
        elif kind == "advance":
            self.clock.advance(timedelta(minutes=op[1]))
        elif kind == "sweep":
            self.cleanup.sweep.run_batch(100)
        elif kind == "overlapping_sweeps":
            with self.sweeper.transaction() as first:
                held = store.claim_due(first, self.clock(), 1, "sweep:first")
                self.cleanup.sweep_queue.send_batch([cleanup_message(c) for c in held], conn=first)
                self.cleanup.sweep.run_batch(100)
        elif kind == "deliver":
            self.cleanup.deliver(op[1])
        elif kind == "failing_delivery":
            self.flaky.failing = True  # the store is down for this many deliveries (five fail a file)
            try:
                for _ in range(op[1]):
                    self.cleanup.deliver(1)
            finally:
                self.flaky.failing = False
        elif kind == "duplicate" and (picked := self._pick(op[1])):
            self.cleanup.sweep_queue.send({"tenant_id": TENANT, "file_id": picked})

    def referenced(self) -> set[str]:
        named = self.rows.all(
            "SELECT file_id FROM resolver.item_picture UNION SELECT picture_file_id FROM resolver.product_class"
            " WHERE picture_file_id IS NOT NULL"
        )
        return {str(r["file_id"]) for r in named}

    def check_named_files_are_kept(self) -> None:
        files = {r["file_id"]: r for r in self.rows.all("SELECT * FROM resolver.catalog_file")}
        for file_id in self.referenced():
            found = files[file_id]
            assert found["state"] in ("attached", "detached", "discarding"), found
            assert found["bytes_deleted_at"] is None, found
            key = parse_tenant_ref(found["object_ref"], TENANT)
            assert self.flaky.inner.exists(key), f"the bytes of named file {file_id} are gone"

    def settle(self) -> None:
        for _ in range(3):
            self.clock.advance(timedelta(hours=2))
            while self.cleanup.sweep.run_batch(100).claimed:
                pass
            self.cleanup.drain()
        named = self.referenced()
        for file_id, state in self.rows.states().items():
            if file_id in named:
                assert state == "attached", (file_id, state)
            else:
                assert state in ("discarded", "failed"), (file_id, state)
        self.check_named_files_are_kept()


@pytest.fixture
def world(
    resolver_db: Database,
    sweeper_db: Database,
    control_db: Database,
    flaky_store: FlakyStore,
    sim_clock: SimClock,
    items: Items,
    rows: Rows,
    cleanup: Cleanup,
) -> World:
    for item in ITEMS:
        items.add(item)
    queue = PostgresQueue(resolver_db, CATALOG_FILE_CLEANUP.name)
    files = CatalogFiles(
        resolver_db,
        flaky_store,  # type: ignore[arg-type]
        sim_clock,
        FileSettings(),
        cleanup_queue=queue,
        streams=stream_locator(control_db),
    )
    return World(files, cleanup, rows, sim_clock, flaky_store, sweeper_db)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(_op, min_size=1, max_size=25))
def test_no_named_file_is_ever_deleted_and_every_unnamed_one_ends_discarded_or_failed(
    world: World, ops: list[tuple[Any, ...]]
) -> None:
    # The examples share one database: the invariants are over every file in it, whatever example made it.
    for op in ops:
        world.step(op)
        world.check_named_files_are_kept()
    world.settle()

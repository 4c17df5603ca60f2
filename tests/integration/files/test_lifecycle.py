"""STATE-COM-CAT-004 as data and in the database: every transition of seed 004 is allowed and recorded with who
and when; every other pair, and in particular the two the seed names (discarded -> attached, preparing ->
attached), is refused by ``check_transition`` with a clear error and by the trigger of 0016_catalog_files even when
code writes the state directly."""

from __future__ import annotations

import itertools
from datetime import timedelta

import psycopg
import pytest

from prw_platform.db.database import Database
from prw_platform.db.errors import InsufficientPrivilege
from prw_platform.resolver.files import store
from prw_platform.resolver.files.errors import InvalidFileTransition
from prw_platform.resolver.files.lifecycle import (
    INVALID,
    STATES,
    TRANSITIONS,
    FileState,
    check_transition,
    transition,
)
from tests.integration.files.conftest import Rows, SimClock
from tests.integration.resolution.pipeline import CATALOG, TENANT

#: How a file reaches each state from preparing, through allowed transitions only.
PATHS: dict[FileState, list[FileState]] = {
    "preparing": [],
    "ready": ["ready"],
    "attached": ["ready", "attached"],
    "detached": ["ready", "attached", "detached"],
    "abandoned": ["ready", "abandoned"],
    "discarding": ["ready", "abandoned", "discarding"],
    "discarded": ["ready", "abandoned", "discarding", "discarded"],
    "failed": ["ready", "abandoned", "discarding", "failed"],
}
ALLOWED = {(t.from_state, t.to_state) for t in TRANSITIONS}
NOT_ALLOWED = [(a, b) for a, b in itertools.product(STATES, STATES) if a != b and (a, b) not in ALLOWED]


def _new_file(db: Database, clock: SimClock, actor: str = "request:save-1") -> str:
    file_id = store.new_file_id()
    db.run(
        lambda c: store.insert_preparing(
            c,
            tenant_id=TENANT,
            catalog_id=CATALOG,
            file_id=file_id,
            save_id="sav_test",
            origin="upload",
            origin_detail=None,
            object_ref=f"r2://catalog-files/{TENANT}/{'a' * 64}",
            sha256="a" * 64,
            size=10,
            media_type="image/png",
            actor=actor,
            now=clock(),
        ),
        tenant_id=TENANT,
    )
    return file_id


def _walk(db: Database, clock: SimClock, file_id: str, path: list[FileState]) -> None:
    state: FileState = "preparing"
    for step in path:
        moved = db.run(
            lambda c, a=state, b=step: store.move(c, TENANT, [file_id], a, b, actor="walk", now=clock()),
            tenant_id=TENANT,
        )
        assert moved == [file_id]
        state = step


def test_the_database_holds_the_same_table_as_the_module(resolver_db: Database, catalogs: None) -> None:
    allowed, invalid = resolver_db.run(store.transition_table)
    assert set(allowed) == {
        (t.from_state, t.to_state, t.trigger, t.guard, t.side_effects, t.actor) for t in TRANSITIONS
    }
    assert set(invalid) == {(t.from_state, t.to_state, t.why) for t in INVALID}
    assert len(STATES) == 8


@pytest.mark.parametrize(
    ("from_state", "to_state"), [(t.from_state, t.to_state) for t in TRANSITIONS], ids=lambda s: str(s)
)
def test_every_transition_of_the_seed_is_allowed_and_recorded_with_who_and_when(
    resolver_db: Database,
    sim_clock: SimClock,
    rows: Rows,
    catalogs: None,
    from_state: FileState,
    to_state: FileState,
) -> None:
    file_id = _new_file(resolver_db, sim_clock)
    _walk(resolver_db, sim_clock, file_id, PATHS[from_state])
    sim_clock.advance(timedelta(minutes=7))
    found = transition(from_state, to_state)

    moved = resolver_db.run(
        lambda c: store.move(c, TENANT, [file_id], from_state, to_state, actor=found.actor, now=sim_clock()),
        tenant_id=TENANT,
    )

    assert moved == [file_id]
    assert rows.state(file_id) == to_state
    history = resolver_db.run(lambda c: store.history(c, TENANT, file_id), tenant_id=TENANT)
    assert history[0].from_state is None
    assert history[0].to_state == "preparing"
    assert history[0].actor == "request:save-1"
    assert (history[-1].from_state, history[-1].to_state) == (from_state, to_state)
    assert history[-1].actor == found.actor
    assert history[-1].at == sim_clock()
    assert len(history) == len(PATHS[from_state]) + 2


def test_a_move_from_a_state_the_file_is_not_in_changes_nothing(
    resolver_db: Database, sim_clock: SimClock, rows: Rows, catalogs: None
) -> None:
    file_id = _new_file(resolver_db, sim_clock)
    moved = resolver_db.run(
        lambda c: store.move(c, TENANT, [file_id], "ready", "attached", actor="x", now=sim_clock()),
        tenant_id=TENANT,
    )
    assert moved == []
    assert rows.state(file_id) == "preparing"


@pytest.mark.parametrize(("from_state", "to_state"), [(t.from_state, t.to_state) for t in INVALID])
def test_the_seeds_invalid_transitions_are_refused_with_the_seeds_reason(
    resolver_db: Database,
    sim_clock: SimClock,
    rows: Rows,
    catalogs: None,
    from_state: FileState,
    to_state: FileState,
) -> None:
    why = next(t.why for t in INVALID if (t.from_state, t.to_state) == (from_state, to_state))
    with pytest.raises(InvalidFileTransition, match=why) as refused:
        check_transition(from_state, to_state)
    assert f"{from_state} -> {to_state}" in str(refused.value)

    file_id = _new_file(resolver_db, sim_clock)
    _walk(resolver_db, sim_clock, file_id, PATHS[from_state])
    # The service path refuses first; so does ``move``:
    with pytest.raises(InvalidFileTransition):
        resolver_db.run(
            lambda c: store.move(c, TENANT, [file_id], from_state, to_state, actor="x", now=sim_clock()),
            tenant_id=TENANT,
        )
    # and a write that skips the module is refused by the database, with the same reason.
    with pytest.raises(psycopg.errors.CheckViolation, match=why):
        resolver_db.run(
            lambda c: store.set_state_unchecked(c, TENANT, file_id, to_state, "x", sim_clock()),
            tenant_id=TENANT,
        )
    assert rows.state(file_id) == from_state


@pytest.mark.parametrize(("from_state", "to_state"), NOT_ALLOWED, ids=lambda s: str(s))
def test_every_pair_that_is_not_a_transition_is_refused_by_the_database(
    resolver_db: Database,
    sim_clock: SimClock,
    rows: Rows,
    catalogs: None,
    from_state: FileState,
    to_state: FileState,
) -> None:
    with pytest.raises(InvalidFileTransition):
        check_transition(from_state, to_state)
    file_id = _new_file(resolver_db, sim_clock)
    _walk(resolver_db, sim_clock, file_id, PATHS[from_state])
    before = rows.count("resolver.catalog_file_history")
    with pytest.raises(psycopg.errors.CheckViolation, match="is not a transition of STATE-COM-CAT-004"):
        resolver_db.run(
            lambda c: store.set_state_unchecked(c, TENANT, file_id, to_state, "x", sim_clock()),
            tenant_id=TENANT,
        )
    assert rows.state(file_id) == from_state
    assert rows.count("resolver.catalog_file_history") == before


def test_a_file_must_start_in_preparing(resolver_db: Database, sim_clock: SimClock, catalogs: None) -> None:
    with pytest.raises(psycopg.errors.CheckViolation, match="must start in preparing"):
        resolver_db.run(
            lambda c: c.execute(
                """INSERT INTO resolver.catalog_file (tenant_id, catalog_id, file_id, state, save_id, origin,
                       object_ref, sha256, size_bytes, media_type, state_actor, state_changed_at, created_at)
                   VALUES (%s, %s, %s, 'attached', 'sav_x', 'upload', 'r2://x', %s, 1, 'image/png', 'x', now(),
                           now())""",
                (TENANT, CATALOG, store.new_file_id(), "b" * 64),
            ),
            tenant_id=TENANT,
        )


def test_the_history_cannot_be_written_by_the_application_role(
    resolver_db: Database, sim_clock: SimClock, catalogs: None
) -> None:
    file_id = _new_file(resolver_db, sim_clock)
    with pytest.raises(InsufficientPrivilege):
        resolver_db.run(
            lambda c: c.execute(
                """INSERT INTO resolver.catalog_file_history (tenant_id, file_id, to_state, actor, at)
                   VALUES (%s, %s, 'discarded', 'x', now())""",
                (TENANT, file_id),
            ),
            tenant_id=TENANT,
        )

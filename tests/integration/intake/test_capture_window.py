"""if_capture_submit's dedupe window ("Dedupe window PROP 7 days") with a moved clock, and if_source_fetch's
``execution_region`` and ``egress`` ("recorded on the capture and are never treated as a market")."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.resolver.intake import (
    IdempotencyConflict,
    IntakeContext,
    IntakeLimits,
    IntakeService,
    IntakeSettings,
    ValidationFailed,
)
from prw_platform.resolver.intake.captures import CaptureRecord, load_capture
from tests.integration.intake.helpers import RecordingEnqueuer, World
from tests.integration.intake.test_captures import KEY, stored_page, submission

WINDOW = timedelta(days=7)
#: if_collector_bootstrap's example: a Frankfurt regional host whose traffic leaves from DE.
REGION = {"country": "DE", "label": "Frankfurt regional host", "declared_by": "operator"}
EGRESS = {"country": "DE", "verified": False}


@dataclass
class MovableClock:
    """The intake's clock (``IntakeContext.clock``), moved by the test."""

    now: datetime = field(default_factory=lambda: datetime(2026, 10, 10, 3, 32, 1, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, by: timedelta) -> None:
        self.now += by


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def timed_intake(context: IntakeContext, clock: MovableClock) -> IntakeService:
    return IntakeService(replace(context, clock=clock))


def _submit(intake: IntakeService, world: World, **overrides: Any) -> Any:
    return intake.submit_capture(world.principal(), KEY, submission(**overrides))


def _capture(resolver_db: Database, tenant_id: str, capture_id: str) -> CaptureRecord:
    record = resolver_db.run(lambda conn: load_capture(conn, tenant_id, capture_id), tenant_id=tenant_id)
    assert record is not None
    return record


def _receipts(owner_db: Database, tenant_id: str) -> list[dict[str, Any]]:
    with owner_db.transaction(read_only=True) as conn:
        return conn.execute(
            """SELECT receipt_id, capture_id, key_generation, received_at FROM resolver.receipt
               WHERE tenant_id = %s AND idempotency_key = %s ORDER BY key_generation""",
            (tenant_id, KEY),
        ).fetchall()


def test_the_default_window_is_seven_days_and_configurable_by_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert IntakeLimits().idempotency_window == WINDOW
    assert IntakeSettings().limits(Settings()).idempotency_window == WINDOW
    monkeypatch.setenv("PRW_INTAKE_IDEMPOTENCY_WINDOW_SECONDS", "3600")
    assert IntakeSettings().limits(Settings()).idempotency_window == timedelta(hours=1)


def test_within_the_window_the_same_key_and_body_replays_the_receipt(
    world: World, timed_intake: IntakeService, clock: MovableClock, enqueuer: RecordingEnqueuer
) -> None:
    stored_page(timed_intake, world)
    first = _submit(timed_intake, world)
    clock.advance(WINDOW - timedelta(seconds=1))

    again = _submit(timed_intake, world)

    assert again.replayed
    assert again.receipt == first.receipt
    assert len(enqueuer.sent) == 1


def test_within_the_window_the_same_key_and_another_body_is_409(
    world: World, timed_intake: IntakeService, clock: MovableClock, owner_db: Database
) -> None:
    stored_page(timed_intake, world)
    _submit(timed_intake, world)
    clock.advance(timedelta(days=6, hours=23))
    before = world.counts(owner_db)

    with pytest.raises(IdempotencyConflict):
        _submit(timed_intake, world, native_record_id="p5-2t-hs")

    assert world.counts(owner_db) == before


@pytest.mark.parametrize("same_body", [True, False], ids=["same_body", "other_body"])
def test_after_the_window_the_key_starts_a_new_capture_with_a_new_receipt(
    same_body: bool,
    world: World,
    timed_intake: IntakeService,
    clock: MovableClock,
    enqueuer: RecordingEnqueuer,
    owner_db: Database,
) -> None:
    stored_page(timed_intake, world)
    first = _submit(timed_intake, world)
    clock.advance(WINDOW)

    later = _submit(timed_intake, world, **({} if same_body else {"native_record_id": "p5-2t-hs"}))

    assert not later.replayed
    assert later.enqueued is True
    assert later.receipt.receipt_id != first.receipt.receipt_id
    assert later.receipt.capture_id != first.receipt.capture_id
    assert later.receipt.status == "stored"
    assert later.receipt.received_at == clock.now
    assert len(enqueuer.sent) == 2
    # Migration 0009: one receipt per use of the key (key_generation), the old one kept and still readable.
    rows = _receipts(owner_db, world.tenant)
    assert [(r["receipt_id"], r["key_generation"]) for r in rows] == [
        (first.receipt.receipt_id, 1),
        (later.receipt.receipt_id, 2),
    ]
    assert timed_intake.get_receipt(world.principal(), first.receipt.receipt_id) == first.receipt
    # The new generation has a window of its own: a retry now replays it, another body conflicts.
    clock.advance(timedelta(days=1))
    assert _submit(
        timed_intake, world, **({} if same_body else {"native_record_id": "p5-2t-hs"})
    ).receipt == (later.receipt)
    with pytest.raises(IdempotencyConflict):
        _submit(timed_intake, world, native_record_id="p5-3t-hs")


def test_a_key_reused_in_every_window_keeps_a_receipt_per_window(
    world: World, timed_intake: IntakeService, clock: MovableClock, owner_db: Database
) -> None:
    stored_page(timed_intake, world)
    ids = []
    for _ in range(3):
        ids.append(_submit(timed_intake, world).receipt.receipt_id)
        clock.advance(WINDOW + timedelta(minutes=1))

    assert [r["receipt_id"] for r in _receipts(owner_db, world.tenant)] == ids
    assert len(set(ids)) == 3


def test_execution_region_and_egress_are_stored_on_the_capture_and_returned(
    world: World, timed_intake: IntakeService, owner_db: Database, resolver_db: Database
) -> None:
    stored_page(timed_intake, world)

    submitted = _submit(timed_intake, world, execution_region=REGION, egress=EGRESS)

    capture_id = submitted.receipt.capture_id
    with owner_db.transaction(read_only=True) as conn:
        row = conn.execute(
            "SELECT execution_region, egress, body FROM resolver.capture WHERE capture_id = %s", (capture_id,)
        ).fetchone()
    assert row is not None
    assert (row["execution_region"], row["egress"]) == (REGION, EGRESS)
    assert (row["body"]["execution_region"], row["body"]["egress"]) == (REGION, EGRESS)
    # Re-read as the resolution consumer reads it: provenance of the fetch, carried as it was declared.
    record = _capture(resolver_db, world.tenant, capture_id)
    assert (record.execution_region, record.egress) == (REGION, EGRESS)


def test_a_capture_without_region_or_egress_stores_none(
    world: World, timed_intake: IntakeService, resolver_db: Database
) -> None:
    stored_page(timed_intake, world)

    submitted = _submit(timed_intake, world)

    record = _capture(resolver_db, world.tenant, submitted.receipt.capture_id)
    assert (record.execution_region, record.egress) == (None, None)


def test_another_region_or_egress_under_the_same_key_is_another_body(
    world: World, timed_intake: IntakeService
) -> None:
    stored_page(timed_intake, world)
    _submit(timed_intake, world, execution_region=REGION, egress=EGRESS)

    with pytest.raises(IdempotencyConflict):
        _submit(timed_intake, world, execution_region=REGION, egress={"country": "US", "verified": False})


@pytest.mark.parametrize(
    "overrides",
    [
        {"execution_region": {"country": "de"}},
        {"execution_region": {"country": "DE", "market": "DE"}},
        {"egress": {"country": "Germany"}},
    ],
)
def test_a_malformed_region_or_egress_is_refused_before_anything_is_stored(overrides: dict[str, Any]) -> None:
    with pytest.raises((ValidationError, ValidationFailed)):
        submission(**overrides)

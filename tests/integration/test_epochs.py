from __future__ import annotations

import threading

import psycopg
import pytest

from prw_platform.db.database import Database
from prw_platform.epochs import current_epoch, ensure_epoch, issue_epoch


def test_first_epoch_is_issued_once(control_db: Database) -> None:
    first = ensure_epoch(control_db, "ten_primary", "cat_primary")
    again = ensure_epoch(control_db, "ten_primary", "cat_primary")
    assert first == again
    assert first.ordinal == 1


def test_a_new_epoch_supersedes_the_current_one(control_db: Database) -> None:
    first = ensure_epoch(control_db, "ten_primary", "cat_primary")
    restored = issue_epoch(control_db, "ten_primary", "cat_primary", "restore from backup")
    assert restored.ordinal == 2
    assert restored.epoch_id != first.epoch_id
    assert current_epoch(control_db, "ten_primary", "cat_primary") == restored
    # Streams are independent.
    assert current_epoch(control_db, "ten_primary", "cat_other") is None


def test_concurrent_issuers_leave_exactly_one_current_epoch(control_db: Database) -> None:
    results = []

    def issue() -> None:
        results.append(issue_epoch(control_db, "ten_primary", "cat_primary", "race"))

    threads = [threading.Thread(target=issue) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(e.ordinal for e in results) == [1, 2, 3, 4]
    with control_db.transaction() as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM control.history_epoch WHERE superseded_at IS NULL"
        ).fetchone()
    assert row == {"n": 1}


def test_two_current_epochs_are_refused_by_the_schema(control_db: Database) -> None:
    ensure_epoch(control_db, "ten_primary", "cat_primary")
    with pytest.raises(psycopg.errors.UniqueViolation), control_db.transaction() as conn:
        conn.execute(
            """INSERT INTO control.history_epoch (epoch_id, tenant_id, catalog_id, ordinal, reason)
               VALUES ('forged', 'ten_primary', 'cat_primary', 9, 'x')"""
        )

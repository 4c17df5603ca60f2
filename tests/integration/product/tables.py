"""Read product tables as the owner (bypassing RLS) to assert on what the consumer committed."""

from __future__ import annotations

from typing import Any

from prw_platform.db.database import Database
from tests.unit.product.stream import EPOCH, TENANT


def inbox_rows(owner_db: Database, event_id: str) -> list[dict[str, Any]]:
    with owner_db.transaction() as conn:
        return conn.execute(
            "SELECT event_id, position, outcome FROM product.inbox WHERE event_id = %s", (event_id,)
        ).fetchall()


def contiguous_position(owner_db: Database, epoch: str = EPOCH) -> int:
    with owner_db.transaction() as conn:
        row = conn.execute(
            "SELECT contiguous_position FROM product.progress WHERE tenant_id = %s AND history_epoch = %s",
            (TENANT, epoch),
        ).fetchone()
    return int(str(row["contiguous_position"])) if row else 0


def item_projection(owner_db: Database, item_id: str) -> dict[str, Any] | None:
    with owner_db.transaction() as conn:
        return conn.execute(
            "SELECT item_id, revision, status, fields, position FROM product.item_projection WHERE item_id = %s",
            (item_id,),
        ).fetchone()


def parked_event_ids(owner_db: Database) -> list[str]:
    with owner_db.transaction() as conn:
        rows = conn.execute("SELECT event_id FROM product.parked_event ORDER BY position").fetchall()
    return [str(row["event_id"]) for row in rows]

"""The record of each product rebuild (this module owns ``product.rebuild``): the export it loads, its shadow
generation, W and H, its status, its owner's heartbeat, and when the generation it replaced (or its own, failed or
abandoned) was cleaned up. A partial unique index keeps one active (``loading``, ``catching_up``) rebuild per
stream.

Only an active rebuild's row changes status, so an abandoned rebuild (``abandon``) stays abandoned: its owner, if
it was alive after all, finds out at its next heartbeat or at its cutover (``update`` and ``heartbeat`` answer
False) and stops without swapping anything."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from psycopg.rows import class_row, scalar_row

from prw_platform.db.database import Connection

_SELECT: Final = """SELECT rebuild_id, tenant_id, catalog_id, history_epoch, export_id, lease_id, generation,
    previous_generation, start_position, target_position, loaded_rows, status, error_code, error, started_at,
    finished_at, cleaned_at, heartbeat_at FROM product.rebuild"""

#: The statuses of a rebuild still running (the partial unique index ``rebuild_one_active``).
ACTIVE: Final = ("loading", "catching_up")


@dataclass(frozen=True, slots=True)
class RebuildRecord:
    rebuild_id: str
    tenant_id: str
    catalog_id: str
    history_epoch: str
    export_id: str
    lease_id: str | None
    generation: int
    previous_generation: int
    start_position: int
    target_position: int | None
    loaded_rows: int
    status: str
    error_code: str | None
    error: str | None
    started_at: datetime
    finished_at: datetime | None
    cleaned_at: datetime | None
    #: The owner's last sign of life (renewed with the export lease).
    heartbeat_at: datetime


def start(
    conn: Connection,
    *,
    rebuild_id: str,
    tenant_id: str,
    catalog_id: str,
    history_epoch: str,
    export_id: str,
    lease_id: str,
    generation: int,
    previous_generation: int,
    start_position: int,
    now: datetime,
) -> RebuildRecord:
    """Record a rebuild as loading. A second active rebuild of the stream violates ``rebuild_one_active``."""
    with conn.cursor(row_factory=class_row(RebuildRecord)) as cur:
        row = cur.execute(
            """INSERT INTO product.rebuild (rebuild_id, tenant_id, catalog_id, history_epoch, export_id, lease_id,
                    generation, previous_generation, start_position, status, heartbeat_at)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'loading', %s)
                RETURNING rebuild_id, tenant_id, catalog_id, history_epoch, export_id, lease_id, generation,
                    previous_generation, start_position, target_position, loaded_rows, status, error_code, error,
                    started_at, finished_at, cleaned_at, heartbeat_at""",
            (
                rebuild_id,
                tenant_id,
                catalog_id,
                history_epoch,
                export_id,
                lease_id,
                generation,
                previous_generation,
                start_position,
                now,
            ),
        ).fetchone()
    assert row is not None
    return row


def update(
    conn: Connection,
    tenant_id: str,
    rebuild_id: str,
    *,
    status: str,
    loaded_rows: int | None = None,
    target_position: int | None = None,
    error_code: str | None = None,
    error: str | None = None,
) -> bool:
    """Move an active rebuild on; False when it is no longer active (abandoned meanwhile): nothing changed."""
    finished = status in ("cut_over", "failed", "abandoned")
    return (
        conn.execute(
            """UPDATE product.rebuild SET status = %s, loaded_rows = coalesce(%s, loaded_rows),
                   target_position = coalesce(%s, target_position), error_code = %s, error = %s,
                   finished_at = CASE WHEN %s THEN now() ELSE finished_at END
               WHERE tenant_id = %s AND rebuild_id = %s AND status IN ('loading', 'catching_up')""",
            (status, loaded_rows, target_position, error_code, error, finished, tenant_id, rebuild_id),
        ).rowcount
        == 1
    )


def heartbeat(conn: Connection, tenant_id: str, rebuild_id: str, now: datetime) -> bool:
    """The owner is alive at ``now``; False when the rebuild is no longer active (abandoned): stop."""
    return (
        conn.execute(
            """UPDATE product.rebuild SET heartbeat_at = greatest(heartbeat_at, %s)
               WHERE tenant_id = %s AND rebuild_id = %s AND status IN ('loading', 'catching_up')""",
            (now, tenant_id, rebuild_id),
        ).rowcount
        == 1
    )


def active(conn: Connection, tenant_id: str, catalog_id: str, *, lock: bool = False) -> RebuildRecord | None:
    """The stream's active rebuild (at most one), ``lock``: FOR UPDATE (its owner's next write waits)."""
    with conn.cursor(row_factory=class_row(RebuildRecord)) as cur:
        return cur.execute(
            _SELECT
            + " WHERE tenant_id = %s AND catalog_id = %s AND status IN ('loading', 'catching_up')"
            + (" FOR UPDATE" if lock else ""),
            (tenant_id, catalog_id),
        ).fetchone()


def abandon(conn: Connection, tenant_id: str, rebuild_id: str, reason: str) -> bool:
    """Mark an active rebuild abandoned (finished now: the cleanup drops its shadow generation in its turn)."""
    return update(conn, tenant_id, rebuild_id, status="abandoned", error_code="ABANDONED", error=reason)


def highest_generation(conn: Connection, tenant_id: str, catalog_id: str) -> int:
    """The highest generation any rebuild of the catalog used (0: none). A new rebuild loads above it, so a
    failed or abandoned rebuild's generation, whose cleanup may still be pending (or whose owner may still be
    writing), is never loaded again."""
    with conn.cursor(row_factory=scalar_row) as cur:
        highest: int | None = cur.execute(
            "SELECT coalesce(max(generation), 0) FROM product.rebuild WHERE tenant_id = %s AND catalog_id = %s",
            (tenant_id, catalog_id),
        ).fetchone()
    return highest or 0


def get(conn: Connection, tenant_id: str, rebuild_id: str) -> RebuildRecord | None:
    with conn.cursor(row_factory=class_row(RebuildRecord)) as cur:
        return cur.execute(
            _SELECT + " WHERE tenant_id = %s AND rebuild_id = %s",
            (tenant_id, rebuild_id),
        ).fetchone()


def tenant_rebuilds(conn: Connection, tenant_id: str) -> list[RebuildRecord]:
    with conn.cursor(row_factory=class_row(RebuildRecord)) as cur:
        return cur.execute(
            _SELECT + " WHERE tenant_id = %s ORDER BY started_at, rebuild_id",
            (tenant_id,),
        ).fetchall()


def uncleaned(conn: Connection, finished_before: datetime, limit: int) -> list[RebuildRecord]:
    """Finished rebuilds whose replaced (cut over) or own (failed) generation is still stored, every tenant the
    role sees (``prw_operator`` reads them all; the cleanup runs each in its tenant)."""
    with conn.cursor(row_factory=class_row(RebuildRecord)) as cur:
        return cur.execute(
            _SELECT
            + """ WHERE cleaned_at IS NULL AND finished_at IS NOT NULL AND finished_at <= %s
                ORDER BY finished_at, rebuild_id LIMIT %s""",
            (finished_before, limit),
        ).fetchall()


def mark_cleaned(conn: Connection, tenant_id: str, rebuild_id: str) -> None:
    conn.execute(
        "UPDATE product.rebuild SET cleaned_at = now() WHERE tenant_id = %s AND rebuild_id = %s",
        (tenant_id, rebuild_id),
    )

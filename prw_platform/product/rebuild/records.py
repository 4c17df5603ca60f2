"""The record of each product rebuild (this module owns ``product.rebuild``): the export it loads, its shadow
generation, W and H, its status, and when the generation it replaced was cleaned up. A partial unique index keeps
one active rebuild per stream (its shadow generation is ``serving_generation + 1``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from psycopg.rows import class_row

from prw_platform.db.database import Connection

_SELECT: Final = """SELECT rebuild_id, tenant_id, catalog_id, history_epoch, export_id, lease_id, generation,
    previous_generation, start_position, target_position, loaded_rows, status, error_code, error, started_at,
    finished_at, cleaned_at FROM product.rebuild"""


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
) -> RebuildRecord:
    """Record a rebuild as loading. A second active rebuild of the stream violates ``rebuild_one_active``."""
    with conn.cursor(row_factory=class_row(RebuildRecord)) as cur:
        row = cur.execute(
            """INSERT INTO product.rebuild (rebuild_id, tenant_id, catalog_id, history_epoch, export_id, lease_id,
                    generation, previous_generation, start_position, status)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'loading')
                RETURNING rebuild_id, tenant_id, catalog_id, history_epoch, export_id, lease_id, generation,
                    previous_generation, start_position, target_position, loaded_rows, status, error_code, error,
                    started_at, finished_at, cleaned_at""",
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
) -> None:
    finished = status in ("cut_over", "failed")
    conn.execute(
        """UPDATE product.rebuild SET status = %s, loaded_rows = coalesce(%s, loaded_rows),
               target_position = coalesce(%s, target_position), error_code = %s, error = %s,
               finished_at = CASE WHEN %s THEN now() ELSE finished_at END
           WHERE tenant_id = %s AND rebuild_id = %s""",
        (status, loaded_rows, target_position, error_code, error, finished, tenant_id, rebuild_id),
    )


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

"""The ``rebuild-cleanup`` stage: drop the projection generations finished rebuilds left, the replaced
one after a cutover, a failed or abandoned rebuild's own, never the serving generation nor one an active rebuild
loads.

A generation goes in chunks of at most ``chunk_rows`` rows per table (``PRW_REBUILD_CLEANUP_CHUNK_ROWS``, 5,000),
one transaction each, re-checking under the scope lock each time; the rebuild is marked cleaned in the transaction
that finds nothing left. A crash in between loses nothing: the next run finds the rebuild still uncleaned and
deletes what is left. Each chunk reports its progress (the stage logs it, in Dagster's run log too).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Final

from psycopg import sql

from prw_platform.db.database import Connection, Database
from prw_platform.product.consumer import inbox, merchant_projection, picture_projection, projection
from prw_platform.product.public import store as public_store
from prw_platform.product.rebuild import records
from prw_platform.product.rebuild.records import RebuildRecord
from prw_platform.product.scopes import ProjectedScope, find_scope

#: Rows per table per cleanup transaction.
CLEANUP_CHUNK_ROWS: Final = 5_000

#: Every table keyed by generation, as its owner declares them, in the order a generation's rows are deleted.
GENERATION_TABLES: Final = (
    *projection.GENERATION_TABLES,
    *merchant_projection.GENERATION_TABLES,
    *picture_projection.GENERATION_TABLES,
    *public_store.GENERATION_TABLES,
    *inbox.GENERATION_TABLES,
)
_DELETE = """DELETE FROM {table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM {table}
             WHERE tenant_id = %s AND catalog_id = %s AND generation = %s LIMIT %s))"""

#: Reports the cleanup's progress: (the rebuild, the generation being dropped, rows removed so far).
CleanupProgress = Callable[[RebuildRecord, int, int], None]


def drop_finished_generations(
    db: Database,
    reads: Database,
    finished_before: datetime,
    limit: int,
    *,
    chunk_rows: int = CLEANUP_CHUNK_ROWS,
    on_progress: CleanupProgress | None = None,
) -> list[RebuildRecord]:
    """Drop the generations of up to ``limit`` rebuilds finished before ``finished_before`` (found through
    ``reads``, the operator role that sees every tenant; dropped through ``db`` in each rebuild's tenant)."""
    done: list[RebuildRecord] = []
    for record in reads.run(lambda conn: records.uncleaned(conn, finished_before, limit), read_only=True):
        generation = record.previous_generation if record.status == "cut_over" else record.generation
        dropped = ProjectedScope(record.tenant_id, record.catalog_id, record.history_epoch, generation)

        def work(
            conn: Connection, record: RebuildRecord = record, dropped: ProjectedScope = dropped
        ) -> int | None:
            scope = find_scope(conn, record.tenant_id, record.catalog_id, lock=True)
            active = records.active(conn, record.tenant_id, record.catalog_id)
            generation = dropped.serving_generation
            if scope is not None and (
                scope.serving_generation == generation
                or (active is not None and active.generation == generation)
            ):
                return None
            removed = drop_generation(conn, dropped, generation, chunk_rows)
            if removed == 0:
                records.mark_cleaned(conn, record.tenant_id, record.rebuild_id)
            return removed

        removed_total = 0
        while True:
            removed = db.run(work, tenant_id=record.tenant_id)
            if removed is None:
                break
            if removed == 0:
                done.append(record)
                break
            removed_total += removed
            if on_progress is not None:
                on_progress(record, generation, removed_total)
    return done


def drop_generation(
    conn: Connection, scope: ProjectedScope, generation: int, limit: int | None = None
) -> int:
    """Remove a generation of the scope's catalog from every table (a replaced one after a rebuild's cutover, or a
    failed rebuild's), at most ``limit`` rows of each (None: all), so the cleanup drops a generation in bounded
    transactions; the number removed. Never the serving generation (the caller checks it under the scope lock),
    never generation 0 (the inbox's old-epoch audit)."""
    if generation < 1:
        raise ValueError("generation 0 holds the old-epoch audit: it is never dropped")
    key = (scope.tenant_id, scope.catalog_id, generation, limit)
    return sum(
        conn.execute(sql.SQL(_DELETE).format(table=sql.Identifier(*table.split("."))), key).rowcount
        for table in GENERATION_TABLES
    )

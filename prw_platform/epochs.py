"""History epochs, kept in the control database (seed 003, if_projection_bootstrap: "Fence restored history").

A restore of the main database gets a NEW epoch from this control plane, which lives outside the restored
database; events stamped with an older epoch are audited and terminally ignored by consumers, never relabeled.
At most one epoch per (tenant, catalog) is current (a partial unique index enforces it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row, scalar_row

from prw_platform.db.database import Connection, Database


@dataclass(frozen=True, slots=True)
class HistoryEpoch:
    epoch_id: str
    tenant_id: str
    catalog_id: str
    ordinal: int
    reason: str
    issued_at: datetime


def current_epoch(control: Database, tenant_id: str, catalog_id: str) -> HistoryEpoch | None:
    """The stream's current epoch. A read, so ``run`` retries it on a fresh connection when the control database
    dropped the one it took (a restart), and says ``DatabaseUnavailable`` when the database stays away."""

    def read(conn: Connection) -> HistoryEpoch | None:
        return (
            conn.cursor(row_factory=class_row(HistoryEpoch))
            .execute(
                """SELECT epoch_id, tenant_id, catalog_id, ordinal, reason, issued_at FROM control.history_epoch
                   WHERE tenant_id = %s AND catalog_id = %s AND superseded_at IS NULL""",
                (tenant_id, catalog_id),
            )
            .fetchone()
        )

    return control.run(read, read_only=True)


def issue_epoch(control: Database, tenant_id: str, catalog_id: str, reason: str) -> HistoryEpoch:
    """Supersede the current epoch of the stream (if any) and issue the next one, atomically."""

    def work(conn: Connection) -> HistoryEpoch:
        # Serialize issuers of the same stream; the partial unique index is the last line of defence.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"epoch:{tenant_id}:{catalog_id}",))
        last: int | None = (
            conn.cursor(row_factory=scalar_row)
            .execute(
                "SELECT max(ordinal) FROM control.history_epoch WHERE tenant_id = %s AND catalog_id = %s",
                (tenant_id, catalog_id),
            )
            .fetchone()
        )
        ordinal = (last or 0) + 1
        conn.execute(
            """UPDATE control.history_epoch SET superseded_at = now()
               WHERE tenant_id = %s AND catalog_id = %s AND superseded_at IS NULL""",
            (tenant_id, catalog_id),
        )
        issued = (
            conn.cursor(row_factory=class_row(HistoryEpoch))
            .execute(
                """INSERT INTO control.history_epoch (epoch_id, tenant_id, catalog_id, ordinal, reason)
                   VALUES (%s, %s, %s, %s, %s)
                   RETURNING epoch_id, tenant_id, catalog_id, ordinal, reason, issued_at""",
                (f"hep_{tenant_id}_{catalog_id}_{ordinal}", tenant_id, catalog_id, ordinal, reason),
            )
            .fetchone()
        )
        assert issued is not None
        return issued

    return control.run(work)


def ensure_epoch(control: Database, tenant_id: str, catalog_id: str) -> HistoryEpoch:
    """The current epoch, issuing the first one for a new stream."""
    return current_epoch(control, tenant_id, catalog_id) or issue_epoch(
        control, tenant_id, catalog_id, "initial epoch of a new stream"
    )

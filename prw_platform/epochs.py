"""History epochs, kept in the control database (seed 003, if_projection_bootstrap: "Fence restored history").

A restore of the main database gets a NEW epoch from this control plane, which lives outside the restored
database; events stamped with an older epoch are audited and terminally ignored by consumers, never relabeled.
At most one epoch per (tenant, catalog) is current (a partial unique index enforces it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from prw_platform.db.database import Connection, Database


@dataclass(frozen=True, slots=True)
class HistoryEpoch:
    epoch_id: str
    tenant_id: str
    catalog_id: str
    ordinal: int
    reason: str
    issued_at: datetime


def _from_row(row: dict[str, object]) -> HistoryEpoch:
    return HistoryEpoch(
        epoch_id=str(row["epoch_id"]),
        tenant_id=str(row["tenant_id"]),
        catalog_id=str(row["catalog_id"]),
        ordinal=int(str(row["ordinal"])),
        reason=str(row["reason"]),
        issued_at=row["issued_at"],  # type: ignore[arg-type]
    )


def current_epoch(control: Database, tenant_id: str, catalog_id: str) -> HistoryEpoch | None:
    with control.transaction(read_only=True) as conn:
        row = conn.execute(
            """SELECT * FROM control.history_epoch
               WHERE tenant_id = %s AND catalog_id = %s AND superseded_at IS NULL""",
            (tenant_id, catalog_id),
        ).fetchone()
    return _from_row(row) if row else None


def issue_epoch(control: Database, tenant_id: str, catalog_id: str, reason: str) -> HistoryEpoch:
    """Supersede the current epoch of the stream (if any) and issue the next one, atomically."""

    def work(conn: Connection) -> HistoryEpoch:
        # Serialize issuers of the same stream; the partial unique index is the last line of defence.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"epoch:{tenant_id}:{catalog_id}",))
        last = conn.execute(
            "SELECT coalesce(max(ordinal), 0) AS n FROM control.history_epoch WHERE tenant_id = %s"
            " AND catalog_id = %s",
            (tenant_id, catalog_id),
        ).fetchone()
        ordinal = int(str(last["n"])) + 1 if last else 1
        conn.execute(
            """UPDATE control.history_epoch SET superseded_at = now()
               WHERE tenant_id = %s AND catalog_id = %s AND superseded_at IS NULL""",
            (tenant_id, catalog_id),
        )
        row = conn.execute(
            """INSERT INTO control.history_epoch (epoch_id, tenant_id, catalog_id, ordinal, reason)
               VALUES (%s, %s, %s, %s, %s) RETURNING *""",
            (f"hep_{tenant_id}_{catalog_id}_{ordinal}", tenant_id, catalog_id, ordinal, reason),
        ).fetchone()
        assert row is not None
        return _from_row(row)

    return control.run(work)


def ensure_epoch(control: Database, tenant_id: str, catalog_id: str) -> HistoryEpoch:
    """The current epoch, issuing the first one for a new stream."""
    return current_epoch(control, tenant_id, catalog_id) or issue_epoch(
        control, tenant_id, catalog_id, "initial epoch of a new stream"
    )

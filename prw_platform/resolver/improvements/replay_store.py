"""``resolver.replay`` and ``resolver.replay_capture`` (migration 0018): the one module that reads and writes them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.db.database import Connection


@dataclass(frozen=True, slots=True)
class Replay:
    tenant_id: str
    catalog_id: str
    replay_id: str
    improvement_id: str
    mode: str
    pins: dict[str, Any]
    pins_key: str
    status: str
    captures: int
    enqueued: int
    settled: int
    changed: int
    failed: int
    requested_by: str
    history_epoch: str
    created_at: datetime
    completed_at: datetime | None


@dataclass(frozen=True, slots=True)
class ReplayCapture:
    capture_id: str
    status: str
    outcome_changed: bool
    diff: dict[str, Any] | None
    error: dict[str, Any] | None
    created_at: datetime


_COLUMNS = """tenant_id, catalog_id, replay_id, improvement_id, mode, pins, pins_key, status, captures, enqueued,
              settled, changed, failed, requested_by, history_epoch, created_at, completed_at"""


def queued_with_pins(conn: Connection, tenant_id: str, improvement_id: str, pins_key: str) -> Replay | None:
    with conn.cursor(row_factory=class_row(Replay)) as cur:
        return cur.execute(
            f"""SELECT {_COLUMNS} FROM resolver.replay
                WHERE tenant_id = %s AND improvement_id = %s AND pins_key = %s AND status = 'queued'""",  # noqa: S608
            (tenant_id, improvement_id, pins_key),
        ).fetchone()


def replays_of(conn: Connection, tenant_id: str, improvement_id: str) -> list[Replay]:
    with conn.cursor(row_factory=class_row(Replay)) as cur:
        return cur.execute(
            f"""SELECT {_COLUMNS} FROM resolver.replay WHERE tenant_id = %s AND improvement_id = %s
                ORDER BY created_at, replay_id""",  # noqa: S608
            (tenant_id, improvement_id),
        ).fetchall()


def get_replay(conn: Connection, tenant_id: str, replay_id: str, *, lock: bool = False) -> Replay | None:
    query = f"SELECT {_COLUMNS} FROM resolver.replay WHERE tenant_id = %s AND replay_id = %s"  # noqa: S608
    with conn.cursor(row_factory=class_row(Replay)) as cur:
        return cur.execute(query + (" FOR UPDATE" if lock else ""), (tenant_id, replay_id)).fetchone()


def insert_replay(conn: Connection, replay: Replay) -> None:
    conn.execute(
        """INSERT INTO resolver.replay (tenant_id, catalog_id, replay_id, improvement_id, mode, pins, pins_key, status,
               captures, enqueued, settled, changed, failed, requested_by, history_epoch, created_at, completed_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            replay.tenant_id,
            replay.catalog_id,
            replay.replay_id,
            replay.improvement_id,
            replay.mode,
            Jsonb(replay.pins),
            replay.pins_key,
            replay.status,
            replay.captures,
            replay.enqueued,
            replay.settled,
            replay.changed,
            replay.failed,
            replay.requested_by,
            replay.history_epoch,
            replay.created_at,
            replay.completed_at,
        ),
    )


def mark_enqueued(conn: Connection, tenant_id: str, replay_id: str, enqueued: int) -> None:
    conn.execute(
        "UPDATE resolver.replay SET enqueued = greatest(enqueued, %s) WHERE tenant_id = %s AND replay_id = %s",
        (enqueued, tenant_id, replay_id),
    )


def record_capture(
    conn: Connection,
    tenant_id: str,
    replay_id: str,
    capture_id: str,
    *,
    diff: dict[str, Any] | None,
    outcome_changed: bool,
    error: dict[str, Any] | None,
    now: datetime,
) -> bool:
    """The consumer's result for one capture and the replay's counters, in the caller's transaction. False: the
    capture was already settled for this replay (a redelivery), nothing written."""
    inserted = conn.execute(
        """INSERT INTO resolver.replay_capture (tenant_id, replay_id, capture_id, status, outcome_changed, diff, error,
               created_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, replay_id, capture_id) DO NOTHING""",
        (
            tenant_id,
            replay_id,
            capture_id,
            "diffed" if diff is not None else "failed",
            outcome_changed,
            None if diff is None else Jsonb(diff),
            None if error is None else Jsonb(error),
            now,
        ),
    ).rowcount
    if not inserted:
        return False
    conn.execute(
        """UPDATE resolver.replay
              SET settled = settled + 1,
                  changed = changed + %s,
                  failed = failed + %s,
                  status = CASE WHEN settled + 1 >= captures THEN 'completed' ELSE status END,
                  completed_at = CASE WHEN settled + 1 >= captures THEN %s ELSE completed_at END
            WHERE tenant_id = %s AND replay_id = %s""",
        (int(outcome_changed), int(diff is None), now, tenant_id, replay_id),
    )
    return True


def capture_results(
    conn: Connection, tenant_id: str, replay_id: str, *, changed_only: bool = False, limit: int = 50
) -> list[ReplayCapture]:
    with conn.cursor(row_factory=class_row(ReplayCapture)) as cur:
        return cur.execute(
            """SELECT capture_id, status, outcome_changed, diff, error, created_at FROM resolver.replay_capture
               WHERE tenant_id = %s AND replay_id = %s AND (NOT %s OR outcome_changed OR status = 'failed')
               ORDER BY capture_id LIMIT %s""",
            (tenant_id, replay_id, changed_only, limit),
        ).fetchall()


def summary_counts(conn: Connection, tenant_id: str, replay_id: str) -> dict[str, int]:
    """Captures whose claims, attributes, stage outcome or identity outcome change, and new review cases."""
    row = conn.execute(
        """SELECT count(*) FILTER (WHERE (diff -> 'claims' ->> 'changed')::boolean) AS claims,
                  count(*) FILTER (WHERE (diff -> 'attributes' ->> 'changed')::boolean) AS attributes,
                  count(*) FILTER (WHERE (diff -> 'stage_outcome' ->> 'changed')::boolean) AS stage_outcome,
                  count(*) FILTER (WHERE (diff -> 'identity' ->> 'changed')::boolean) AS identity,
                  count(*) FILTER (WHERE (diff -> 'identity' ->> 'new_review_case')::boolean) AS new_review_cases,
                  count(*) FILTER (WHERE status = 'failed') AS errors
             FROM resolver.replay_capture WHERE tenant_id = %s AND replay_id = %s""",
        (tenant_id, replay_id),
    ).fetchone()
    return {key: int(str(value or 0)) for key, value in (row or {}).items()}

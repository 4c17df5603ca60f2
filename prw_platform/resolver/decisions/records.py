"""The immutable decision row (AW-01 "Insert decision", INV-05) and its idempotency key."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection
from prw_platform.resolver.decisions.commands import DecisionResult, EventRef

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    decision_id: str
    stream: StreamKey
    action: str
    actor: str
    rationale: str
    case_id: str | None
    case_revision: int | None
    evidence: tuple[str, ...]
    prior_decisions: tuple[str, ...]
    details: dict[str, Any]
    events: tuple[EventRef, ...]
    item_id: str | None
    listing_id: str | None
    idempotency_key: str | None
    request_sha256: str | None
    created_at: datetime

    def result(self, *, replayed: bool) -> DecisionResult:
        return DecisionResult(
            decision_id=self.decision_id,
            action=self.action,
            stream=self.stream,
            events=self.events,
            item_id=self.item_id,
            listing_id=self.listing_id,
            case_id=self.case_id,
            case_revision=self.case_revision,
            replayed=replayed,
            created_at=self.created_at,
        )


def new_decision_id() -> str:
    return f"dec_{uuid.uuid4().hex[:24]}"


def request_fingerprint(command: DataclassInstance) -> str:
    """The same idempotency key with a different command is a conflict, not a replay. Instants are compared in
    UTC, so a redelivered job that read the same timestamps in another session time zone still matches."""
    document = {"command": type(command).__name__, **plain(command)}
    canonical = json.dumps(document, sort_keys=True, default=_canonical, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def plain(value: Any) -> Any:
    """``dataclasses.asdict`` without its deep copies (a decision's command and events are immutable): nested
    dataclasses become dicts, mappings dicts, lists and tuples lists; other values stay as they are."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def _canonical(value: object) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return str(value)  # Decimal: its exact text


def _effects(record: DecisionRecord) -> dict[str, Any]:
    return {
        "item_id": record.item_id,
        "listing_id": record.listing_id,
        "events": [plain(e) for e in record.events],
    }


def insert_decision(conn: Connection, record: DecisionRecord) -> None:
    stream = record.stream
    conn.execute(
        """INSERT INTO resolver.decision (tenant_id, catalog_id, history_epoch, decision_id, case_id, case_revision,
               action, actor, rationale, evidence, prior_decisions, details, effects, idempotency_key,
               request_sha256, created_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            stream.tenant_id,
            stream.catalog_id,
            stream.history_epoch,
            record.decision_id,
            record.case_id,
            record.case_revision,
            record.action,
            record.actor,
            record.rationale,
            Jsonb(list(record.evidence)),
            Jsonb(list(record.prior_decisions)),
            Jsonb(record.details),
            Jsonb(_effects(record)),
            record.idempotency_key,
            record.request_sha256,
            record.created_at,
        ),
    )


def _record(row: dict[str, Any]) -> DecisionRecord:
    effects = row["effects"]
    return DecisionRecord(
        decision_id=row["decision_id"],
        stream=StreamKey(row["tenant_id"], row["catalog_id"], row["history_epoch"]),
        action=row["action"],
        actor=row["actor"],
        rationale=row["rationale"],
        case_id=row["case_id"],
        case_revision=None if row["case_revision"] is None else int(row["case_revision"]),
        evidence=tuple(row["evidence"]),
        prior_decisions=tuple(row["prior_decisions"]),
        details=dict(row["details"]),
        events=tuple(EventRef(**e) for e in effects.get("events", [])),
        item_id=effects.get("item_id"),
        listing_id=effects.get("listing_id"),
        idempotency_key=row["idempotency_key"],
        request_sha256=row["request_sha256"],
        created_at=row["created_at"],
    )


def find_decision_by_key(conn: Connection, tenant_id: str, idempotency_key: str) -> DecisionRecord | None:
    return send_find_decision_by_key(conn, tenant_id, idempotency_key)()


def send_find_decision_by_key(
    conn: Connection, tenant_id: str, idempotency_key: str
) -> Callable[[], DecisionRecord | None]:
    """``find_decision_by_key`` in two steps: the query is sent now and its row read when the returned function
    is called (in pipeline mode, together with every statement sent in between)."""
    cur = conn.execute(
        "SELECT * FROM resolver.decision WHERE tenant_id = %s AND idempotency_key = %s",
        (tenant_id, idempotency_key),
    )

    def found() -> DecisionRecord | None:
        with cur:
            row = cur.fetchone()
        return _record(row) if row else None

    return found


def get_decision(conn: Connection, tenant_id: str, decision_id: str) -> DecisionRecord | None:
    row = conn.execute(
        "SELECT * FROM resolver.decision WHERE tenant_id = %s AND decision_id = %s", (tenant_id, decision_id)
    ).fetchone()
    return _record(row) if row else None


def case_decisions(conn: Connection, tenant_id: str, case_id: str) -> list[DecisionRecord]:
    """A review case's history: the decision that opened it and every decision on it, oldest first."""
    rows = conn.execute(
        """SELECT * FROM resolver.decision WHERE tenant_id = %s AND case_id = %s
           ORDER BY created_at, decision_id""",
        (tenant_id, case_id),
    ).fetchall()
    return [_record(row) for row in rows]


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """How a reviewer settled a review case: the item the listing went to (None: no item, or dismissed)."""

    case_id: str
    action: str
    item_id: str | None


def human_case_outcomes(conn: Connection, tenant_id: str, catalog_id: str) -> list[CaseOutcome]:
    """The last decision a person (reviewer or operator) made on each review case of the catalog."""
    with conn.cursor(row_factory=class_row(CaseOutcome)) as cur:
        return cur.execute(
            """SELECT DISTINCT ON (case_id) case_id, action, effects->>'item_id' AS item_id
           FROM resolver.decision
           WHERE tenant_id = %s AND catalog_id = %s AND case_id IS NOT NULL AND actor !~ '^rule:'
             AND action IN ('map_listing', 'create_item_and_map', 'dismiss_case')
           ORDER BY case_id, created_at DESC, decision_id DESC""",
            (tenant_id, catalog_id),
        ).fetchall()


@dataclass(frozen=True, slots=True)
class AutomaticMapping:
    """A listing an automatic rule mapped, and whether a person later mapped it to another item."""

    decision_id: str
    actor: str
    listing_id: str
    item_id: str
    corrected: bool
    created_at: datetime


def automatic_mappings(
    conn: Connection, tenant_id: str, catalog_id: str, actors: Sequence[str]
) -> list[AutomaticMapping]:
    """Every ``map_listing`` decision by one of ``actors`` in the catalog, each with whether a person (reviewer or
    operator) later corrected it: split the listing off the item it was mapped to (the split names the mapping's
    decision among its prior decisions), or mapped it to another item. The live check of a rule's precision."""
    with conn.cursor(row_factory=class_row(AutomaticMapping)) as cur:
        return cur.execute(
            """SELECT a.decision_id, a.actor, a.effects->>'listing_id' AS listing_id, a.effects->>'item_id' AS item_id,
                  EXISTS (SELECT 1 FROM resolver.decision h
                          WHERE h.tenant_id = a.tenant_id AND h.catalog_id = a.catalog_id AND h.actor !~ '^rule:'
                            AND (h.created_at, h.decision_id) > (a.created_at, a.decision_id)
                            AND ((h.action = 'split_item' AND h.prior_decisions ? a.decision_id)
                                 OR (h.action IN ('map_listing', 'create_item_and_map')
                                     AND h.effects->>'listing_id' = a.effects->>'listing_id'
                                     AND h.effects->>'item_id' IS DISTINCT FROM a.effects->>'item_id'))) AS corrected,
                  a.created_at
           FROM resolver.decision a
           WHERE a.tenant_id = %s AND a.catalog_id = %s AND a.action = 'map_listing' AND a.actor = ANY(%s)
           ORDER BY a.created_at, a.decision_id""",
            (tenant_id, catalog_id, list(actors)),
        ).fetchall()


def latest_human_detail(
    conn: Connection, tenant_id: str, case_ids: Sequence[str], key: str
) -> tuple[str, Any] | None:
    """The newest decision by a person (reviewer or operator) on one of ``case_ids`` whose details hold ``key``:
    its id and that detail (a reviewer's offer choice, ``details.offer``)."""
    if not case_ids:
        return None
    row = conn.execute(
        """SELECT decision_id, details->%s AS detail FROM resolver.decision
           WHERE tenant_id = %s AND case_id = ANY(%s) AND details ? %s AND actor !~ '^rule:'
           ORDER BY created_at DESC, decision_id DESC
           LIMIT 1""",
        (key, tenant_id, list(case_ids), key),
    ).fetchone()
    return None if row is None else (str(row["decision_id"]), row["detail"])

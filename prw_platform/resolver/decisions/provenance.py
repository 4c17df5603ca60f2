"""A decision as an operator reads it (if_admin_read ``GET /v1/decisions/{id}``): the immutable row with its
provenance (actor, rationale, evidence refs, prior decision refs), the facts it wrote (one aggregate revision per
event, with the state the event carries) and its outbox events (position, type, published or not). Events that
retention pruned are still listed from the decision's own record, without their state."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prw_platform.db.database import Connection
from prw_platform.resolver.decisions.commands import EventRef
from prw_platform.resolver.decisions.records import DecisionRecord, get_decision
from prw_platform.resolver.stream import outbox


@dataclass(frozen=True, slots=True)
class DecisionEvent:
    ref: EventRef
    #: The accepted state of the aggregate revision (the event's payload); None once retention pruned it.
    state: dict[str, Any] | None
    dependencies: tuple[dict[str, Any], ...]
    published_at: datetime | None
    pruned: bool


@dataclass(frozen=True, slots=True)
class DecisionDetail:
    record: DecisionRecord
    events: tuple[DecisionEvent, ...]


def decision_detail(conn: Connection, tenant_id: str, decision_id: str) -> DecisionDetail | None:
    record = get_decision(conn, tenant_id, decision_id)
    if record is None:
        return None
    stored = {e.event_id: e for e in outbox.events_of_decision(conn, tenant_id, decision_id)}
    return DecisionDetail(record, tuple(_event(ref, stored.get(ref.event_id)) for ref in record.events))


def _event(ref: EventRef, stored: outbox.StoredEvent | None) -> DecisionEvent:
    if stored is None:
        return DecisionEvent(ref, None, (), None, pruned=True)
    body = stored.body
    return DecisionEvent(
        ref,
        body.get("payload"),
        tuple(body.get("dependencies") or ()),
        stored.published_at,
        pruned=False,
    )

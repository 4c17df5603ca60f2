"""AW-04, product consumer apply: one delivery, one product transaction, then the caller acknowledges.

Per delivery (role product_app, ``app.tenant_id`` = the event's tenant, INV-06):

1. scope check (unknown pair: ``ScopeNotProjected``, DLQ) and epoch check (another epoch: audited in the inbox
   and terminally ignored, never relabeled, no progress);
2. inbox insert ON CONFLICT DO NOTHING: a conflict is a duplicate, nothing else is written;
3. revision check: revision <= applied revision is stale, recorded as ignored;
4. dependency check: a dependency applied below its named revision parks the event;
5. apply the full state and set the applied revision, then release what the application made ready, cascading;
6. advance the greatest contiguous processed position;
7. commit (``Database.run``), and only then return the outcome so the caller acks ("AW-04: ack only after commit").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from prw_platform.contracts import AcceptedChange, ItemPayload, ListingPayload, MappingPayload, ReleasePayload
from prw_platform.db.database import Connection, Database
from prw_platform.product import progress
from prw_platform.product.consumer import inbox
from prw_platform.product.consumer.outcomes import DeliveryResult, Outcome
from prw_platform.product.consumer.projection import (
    applied_revision,
    set_applied_revision,
    upsert_item,
    upsert_listing,
    upsert_mapping,
)
from prw_platform.product.errors import RejectedDelivery, ScopeNotProjected
from prw_platform.product.events import ProductEvent, Requirement, event_from_change, parse_delivery
from prw_platform.product.releases import apply_release
from prw_platform.product.scopes import ProjectedScope, find_scope


def apply_delivery(db: Database, message: Mapping[str, Any]) -> DeliveryResult:
    """Apply one product.accepted-change.v1 message and commit.

    Raises ``RejectedDelivery`` (SCHEMA_INVALID, SCOPE_NOT_PROJECTED, ...) for the DLQ, and
    ``DatabaseUnavailable`` (DB_UNAVAILABLE, retryable) when ``Database.run`` used up its retries: the caller
    leaves the message unacknowledged and the queue redelivers it (if_accepted_change: "The consumer retries on DB
    unavailable")."""
    event = parse_delivery(message)
    return db.run(
        partial(_deliver, event=event),
        tenant_id=event.change.tenant_id,
        # if_db: never retry after an ambiguous commit without an idempotency check; the inbox row is the key.
        verify_commit=partial(recorded_result, change=event.change),
    )


@dataclass(frozen=True, slots=True)
class BatchEntry:
    message_index: int
    result: DeliveryResult | None = None
    rejection: RejectedDelivery | None = None


def apply_batch(db: Database, messages: Iterable[Mapping[str, Any]]) -> list[BatchEntry]:
    """Apply messages one transaction each, in the order given. A rejected message becomes an entry for the DLQ;
    database unavailability propagates, and the committed ones come back as duplicates when redelivered."""
    entries: list[BatchEntry] = []
    for index, message in enumerate(messages):
        try:
            entries.append(BatchEntry(index, result=apply_delivery(db, message)))
        except RejectedDelivery as rejection:
            entries.append(BatchEntry(index, rejection=rejection))
    return entries


@dataclass(frozen=True, slots=True)
class Readiness:
    """The revision and dependency checks, read-only: APPLIED means ready to apply."""

    outcome: Outcome
    waiting_for: Requirement | None = None


def check_readiness(conn: Connection, scope: ProjectedScope, event: ProductEvent) -> Readiness:
    # AW-04 revision check: "Event rev <= applied rev for the aggregate -> record as ignored".
    if event.revision <= applied_revision(conn, scope, event.aggregate):
        return Readiness(Outcome.IGNORED_STALE_REVISION)
    # AW-04 dependency check: docs/events.md, a dependency is met once its applied revision is >= the named one.
    for requirement in event.requirements():
        if applied_revision(conn, scope, requirement.aggregate) < requirement.revision:
            return Readiness(Outcome.PARKED, requirement)
    return Readiness(Outcome.APPLIED)


def _deliver(conn: Connection, event: ProductEvent) -> DeliveryResult:
    change = event.change
    # if_accepted_change: scope comes from the envelope the relay stamped from the outbox row, never the payload.
    scope = find_scope(conn, change.tenant_id, change.catalog_id, lock=True)
    if scope is None:
        raise ScopeNotProjected(
            f"({change.tenant_id}, {change.catalog_id}) is not projected by this product service",
            event_id=change.event_id,
        )
    # if_accepted_change: "Check epoch before inbox; old-history events are terminally ignored, never relabeled."
    if change.history_epoch != scope.history_epoch:
        inbox.record_old_epoch(conn, change)
        return DeliveryResult(change.event_id, Outcome.IGNORED_OLD_EPOCH)

    contiguous = progress.lock_stream(conn, scope)
    # The checks only read, so the outcome is known when the inbox row goes in; on a conflict nothing has been
    # written and nothing else will be: the duplicate commits with no effect.
    readiness = check_readiness(conn, scope, event)
    if not inbox.insert(conn, scope, event, readiness.outcome):
        return DeliveryResult(change.event_id, Outcome.IGNORED_DUPLICATE, contiguous_position=contiguous)

    released: tuple[str, ...] = ()
    if readiness.waiting_for is not None:
        inbox.park(conn, scope, event, readiness.waiting_for)
    elif readiness.outcome is Outcome.APPLIED:
        _apply(conn, scope, event)
        released = _release_parked(conn, scope, event)
    through = progress.advance(conn, scope, contiguous)
    return DeliveryResult(change.event_id, readiness.outcome, released, through)


def _apply(conn: Connection, scope: ProjectedScope, event: ProductEvent) -> None:
    payload = event.payload
    if isinstance(payload, ItemPayload):
        upsert_item(conn, scope, event, payload)
    elif isinstance(payload, ListingPayload):
        upsert_listing(conn, scope, event, payload)
    elif isinstance(payload, MappingPayload):
        upsert_mapping(conn, scope, event, payload)
    elif isinstance(payload, ReleasePayload):
        apply_release(conn, scope, event, payload)
    set_applied_revision(conn, scope, event)


def _release_parked(conn: Connection, scope: ProjectedScope, applied: ProductEvent) -> tuple[str, ...]:
    """AW-04: "released when the dependency applies", in the same transaction, cascading until nothing more is
    ready. An event released while something else is still missing parks again, waiting for that."""
    settled: list[str] = []
    newly_applied = deque([(applied.aggregate, applied.revision)])
    while newly_applied:
        aggregate, revision = newly_applied.popleft()
        for parked in inbox.unpark_ready(conn, scope, aggregate, revision):
            event = event_from_change(AcceptedChange.model_validate(parked.message))
            readiness = check_readiness(conn, scope, event)
            if readiness.waiting_for is not None:
                inbox.park(conn, scope, event, readiness.waiting_for)
                continue
            inbox.settle(conn, scope, event.event_id, readiness.outcome)
            settled.append(event.event_id)
            if readiness.outcome is Outcome.APPLIED:
                _apply(conn, scope, event)
                newly_applied.append((event.aggregate, event.revision))
    return tuple(settled)


def recorded_result(conn: Connection, change: AcceptedChange) -> DeliveryResult | None:
    """The outcome the inbox recorded for this event, or None if no transaction committed it."""
    outcome = inbox.recorded_outcome(conn, change)
    return DeliveryResult(change.event_id, outcome) if outcome is not None else None

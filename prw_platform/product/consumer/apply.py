"""AW-04, product consumer apply: several deliveries of one stream in one product transaction, then the caller
acknowledges them.

Per transaction (role product_app, ``app.tenant_id`` = the stream's tenant, INV-06), for the deliveries of one
(tenant, catalog) stream in receive order:

1. scope check (unknown pair: ``ScopeNotProjected``, DLQ) and epoch check (another epoch: audited in the inbox
   and terminally ignored, never relabeled, no progress);
2. the stream's progress row is locked (deliveries of one stream apply one transaction at a time), then the
   inbox is probed once for the batch's event ids and positions: an event id already there (or earlier in the
   batch) is a duplicate and writes nothing; another event at a settled position is a ``PositionConflict``;
3. each fresh event, in receive order, against the applied revisions (read once per batch, kept in memory):
   revision <= applied revision is stale, recorded as ignored; a dependency applied below its named revision
   parks the event; otherwise its full state is applied and what it made ready is released, cascading (parked
   events of earlier transactions and of this batch alike);
4. the inbox rows, parked rows, applied revisions and projection rows are written set-based (one statement per
   table), then the greatest contiguous processed position advances;
5. commit (``Database.run``), and only then return the outcomes so the caller acks ("AW-04: ack only after
   commit"). A crash between the commit and the acks re-delivers every message of the batch: each is then a
   duplicate.

Same rules, same final state as one transaction per delivery (INV-08): only the number of round trips changes.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from prw_platform.contracts import AcceptedChange, ItemPayload, ListingPayload, MappingPayload, ReleasePayload
from prw_platform.db.database import Connection, Database
from prw_platform.product import progress
from prw_platform.product.consumer import inbox
from prw_platform.product.consumer.merchant_projection import (
    MERCHANT_FACTS,
    record_observations,
    upsert_merchant_facts,
)
from prw_platform.product.consumer.outcomes import DeliveryResult, Outcome
from prw_platform.product.consumer.picture_projection import PICTURE_FACTS, upsert_picture_facts
from prw_platform.product.consumer.projection import (
    AppliedRow,
    applied_revisions,
    upsert_applied_revisions,
    upsert_items,
    upsert_listings,
    upsert_mappings,
)
from prw_platform.product.errors import PositionConflict, RejectedDelivery, ScopeNotProjected
from prw_platform.product.events import (
    AggregateKey,
    ProductEvent,
    Requirement,
    event_from_change,
    parse_delivery,
)
from prw_platform.product.releases import apply_release
from prw_platform.product.scopes import ProjectedScope, find_scope

#: What one event of a batch came to: a committed outcome, or a rejection for the DLQ.
Settlement = DeliveryResult | RejectedDelivery


def apply_delivery(db: Database, message: Mapping[str, Any]) -> DeliveryResult:
    """Apply one product.accepted-change.v1 message and commit.

    Raises ``RejectedDelivery`` (SCHEMA_INVALID, SCOPE_NOT_PROJECTED, POSITION_CONFLICT, ...) for the DLQ, and
    ``DatabaseUnavailable`` (DB_UNAVAILABLE, retryable) when ``Database.run`` used up its retries: the caller
    leaves the message unacknowledged and the queue redelivers it (if_accepted_change: "The consumer retries on DB
    unavailable")."""
    (settled,) = apply_events(db, [parse_delivery(message)])
    if isinstance(settled, RejectedDelivery):
        raise settled
    return settled


@dataclass(frozen=True, slots=True)
class ShadowTarget:
    """Where a rebuild's catch-up applies: its isolated generation (never served until cutover) and its own
    cursor (if_accepted_change: "Shadow catch-up has a separate cursor and lease; it never advances the live
    cursor"). Dedupe, revisions and parking are the generation's own: the same rules, separate state."""

    generation: int
    #: ``progress.REBUILD_CONSUMER`` (spelled out: progress imports this package).
    consumer: str = "product_rebuild"


def apply_events(
    db: Database, events: Sequence[ProductEvent], shadow: ShadowTarget | None = None
) -> list[Settlement]:
    """Apply the parsed events of ONE (tenant, catalog) stream in one product transaction, in the order given,
    and commit. One settlement per event, in the same order. ``shadow``: into a rebuild's generation instead of
    the serving one."""
    if not events:
        return []
    first = events[0].change
    if any((e.change.tenant_id, e.change.catalog_id) != (first.tenant_id, first.catalog_id) for e in events):
        raise ValueError("apply_events takes the events of one (tenant, catalog) stream")
    return db.run(
        partial(deliver_in, events=events, shadow=shadow),
        tenant_id=first.tenant_id,
        # if_db: never retry after an ambiguous commit without an idempotency check. The inbox is the key: a
        # re-run after a commit that did happen finds every event there and records them as duplicates.
        verify_commit=_rerun,
        # BEGIN, the tenant setting and the statements up to the first read share a round trip, and so do the
        # writes nothing reads back (the progress row's insert before its lock) and the COMMIT after the last read.
        pipeline=True,
    )


@dataclass(frozen=True, slots=True)
class BatchEntry:
    message_index: int
    result: DeliveryResult | None = None
    rejection: RejectedDelivery | None = None


def apply_batch(db: Database, messages: Iterable[Mapping[str, Any]]) -> list[BatchEntry]:
    """Parse messages, then apply them one transaction per stream, each stream's in the order given. A rejected
    message becomes an entry for the DLQ; database unavailability propagates (nothing of the failed stream's
    transaction committed; committed streams come back as duplicates when redelivered)."""
    entries: dict[int, BatchEntry] = {}
    streams: dict[tuple[str, str], list[tuple[int, ProductEvent]]] = defaultdict(list)
    for index, message in enumerate(messages):
        try:
            event = parse_delivery(message)
        except RejectedDelivery as rejection:
            entries[index] = BatchEntry(index, rejection=rejection)
            continue
        streams[(event.change.tenant_id, event.change.catalog_id)].append((index, event))
    for stream in streams.values():
        settled = apply_events(db, [event for _, event in stream])
        for (index, _), outcome in zip(stream, settled, strict=True):
            entries[index] = (
                BatchEntry(index, rejection=outcome)
                if isinstance(outcome, RejectedDelivery)
                else BatchEntry(index, result=outcome)
            )
    return [entries[index] for index in sorted(entries)]


@dataclass(frozen=True, slots=True)
class Readiness:
    """The revision and dependency checks, read-only: APPLIED means ready to apply."""

    outcome: Outcome
    waiting_for: Requirement | None = None


def check_readiness(revision_of: Callable[[AggregateKey], int], event: ProductEvent) -> Readiness:
    # AW-04 revision check: "Event rev <= applied rev for the aggregate -> record as ignored".
    if event.revision <= revision_of(event.aggregate):
        return Readiness(Outcome.IGNORED_STALE_REVISION)
    # AW-04 dependency check: docs/events.md, a dependency is met once its applied revision is >= the named one.
    for requirement in event.requirements():
        if revision_of(requirement.aggregate) < requirement.revision:
            return Readiness(Outcome.PARKED, requirement)
    return Readiness(Outcome.APPLIED)


def _rerun(conn: Connection) -> None:
    return None


def deliver_in(
    conn: Connection, events: Sequence[ProductEvent], shadow: ShadowTarget | None = None
) -> list[Settlement]:
    """The events of one stream, in the caller's transaction (``apply_events``; a rebuild's cutover finishes its
    catch-up in the transaction that swaps the generation)."""
    change = events[0].change
    # if_accepted_change: scope comes from the envelope the relay stamped from the outbox row, never the payload.
    # FOR SHARE: a rebuild's cutover holds the row FOR UPDATE, which pauses the live applier until it commits;
    # READ COMMITTED then re-reads the row, so the applier continues in the new serving generation.
    scope = find_scope(conn, change.tenant_id, change.catalog_id, lock=True)
    if scope is None:
        return [
            ScopeNotProjected(
                f"({e.change.tenant_id}, {e.change.catalog_id}) is not projected by this product service",
                event_id=e.event_id,
            )
            for e in events
        ]
    settled: list[Settlement | None] = [None] * len(events)
    current: list[int] = []
    for index, event in enumerate(events):
        # if_accepted_change: "Check epoch before inbox; old-history events are terminally ignored, never
        # relabeled."
        if event.change.history_epoch != scope.history_epoch:
            inbox.record_old_epoch(conn, event.change)
            settled[index] = DeliveryResult(event.event_id, Outcome.IGNORED_OLD_EPOCH)
        else:
            current.append(index)
    if not current:
        return [s for s in settled if s is not None]

    consumer = progress.LIVE_CONSUMER
    if shadow is not None:
        scope = replace(scope, serving_generation=shadow.generation)
        consumer = shadow.consumer
    contiguous = progress.lock_stream(conn, scope, consumer)
    batch = _StreamBatch(conn, scope)
    fresh = batch.screen([events[i] for i in current])
    for index, screened in zip(current, fresh, strict=True):
        if isinstance(screened, (RejectedDelivery, DeliveryResult)):
            settled[index] = screened
    ready = [
        (index, events[index]) for index, screened in zip(current, fresh, strict=True) if screened is None
    ]
    batch.load([event for _, event in ready])
    outcomes = {index: batch.deliver(event) for index, event in ready}
    batch.flush()
    through = progress.advance(conn, scope, contiguous, consumer)
    for index, (outcome, released) in outcomes.items():
        settled[index] = DeliveryResult(events[index].event_id, outcome, released, through)
    for index in current:
        result = settled[index]
        if isinstance(result, DeliveryResult) and result.outcome is Outcome.IGNORED_DUPLICATE:
            settled[index] = DeliveryResult(result.event_id, result.outcome, contiguous_position=through)
    return [s for s in settled if s is not None]


@dataclass
class _Parked:
    event: ProductEvent
    waiting_for: Requirement
    #: The inbox row was written by an earlier transaction (outcome parked): settling it is an UPDATE.
    stored: bool


@dataclass
class _StreamBatch:
    """One transaction's work on one stream: the applied revisions in memory, the writes buffered."""

    conn: Connection
    scope: ProjectedScope
    revisions: dict[AggregateKey, int] = field(default_factory=dict)
    #: Per aggregate, the revision through which the parked events (of earlier transactions) waiting for it are
    #: known to this batch.
    parked_checked: dict[AggregateKey, int] = field(default_factory=dict)
    #: Parked events waiting for an aggregate: of earlier transactions (taken out of parked_event when
    #: released) and of this batch.
    waiting: dict[AggregateKey, list[_Parked]] = field(default_factory=lambda: defaultdict(list))
    new_inbox: dict[str, tuple[ProductEvent, Outcome]] = field(default_factory=dict)
    settle_stored: dict[str, Outcome] = field(default_factory=dict)
    park_rows: dict[str, _Parked] = field(default_factory=dict)
    applied: dict[AggregateKey, AppliedRow] = field(default_factory=dict)
    items: dict[str, tuple[ProductEvent, ItemPayload]] = field(default_factory=dict)
    listings: dict[str, tuple[ProductEvent, ListingPayload]] = field(default_factory=dict)
    mappings: dict[str, tuple[ProductEvent, MappingPayload]] = field(default_factory=dict)
    #: merchant, merchant_source, shipping_policy: aggregate type -> id -> the last applied event.
    merchant_facts: dict[str, dict[str, ProductEvent]] = field(default_factory=lambda: defaultdict(dict))
    #: item_pictures, product_class: aggregate type -> id -> the last applied event (seed 004).
    picture_facts: dict[str, dict[str, ProductEvent]] = field(default_factory=lambda: defaultdict(dict))
    #: (listing, revision) -> the listing.observed event: the inventory history (merchant_projection.py).
    observations: dict[tuple[str, int], tuple[ProductEvent, ListingPayload]] = field(default_factory=dict)

    def screen(self, events: Sequence[ProductEvent]) -> list[Settlement | None]:
        """AW-04 inbox check, one probe for the batch: None for a fresh event, else its settlement."""
        known = inbox.known(self.conn, self.scope, [e.event_id for e in events], [e.position for e in events])
        ids = set(known.event_ids)
        positions = dict(known.positions)
        screened: list[Settlement | None] = []
        for event in events:
            if event.event_id in ids:
                screened.append(DeliveryResult(event.event_id, Outcome.IGNORED_DUPLICATE))
            elif positions.get(event.position, event.event_id) != event.event_id:
                screened.append(
                    PositionConflict(
                        f"position {event.position} of {self.scope.catalog_id}/{self.scope.history_epoch} "
                        "belongs to another event",
                        event_id=event.event_id,
                    )
                )
            else:
                ids.add(event.event_id)
                positions[event.position] = event.event_id
                screened.append(None)
        return screened

    def load(self, events: Sequence[ProductEvent]) -> None:
        """The applied revisions and the stored parked events the batch's events may touch, read once."""
        keys = {e.aggregate for e in events} | {r.aggregate for e in events for r in e.requirements()}
        self.revisions.update(applied_revisions(self.conn, self.scope, keys))
        # The most each aggregate can reach in this batch from its own events; what a cascade brings beyond that is
        # asked for when it happens (``_release``).
        reach: dict[AggregateKey, int] = {}
        for event in events:
            reach[event.aggregate] = max(reach.get(event.aggregate, 0), event.revision)
        self._take_stored_parked(reach)

    def revision(self, key: AggregateKey) -> int:
        if key not in self.revisions:
            self.revisions.update(applied_revisions(self.conn, self.scope, {key}))
        return self.revisions.get(key, 0)

    def deliver(self, event: ProductEvent) -> tuple[Outcome, tuple[str, ...]]:
        readiness = check_readiness(self.revision, event)
        self.new_inbox[event.event_id] = (event, readiness.outcome)
        if isinstance(event.payload, ListingPayload):
            # An observation is recorded even when the listing moved past it (a listing event never parks).
            self.observations[(event.payload.listing, event.revision)] = (event, event.payload)
        if readiness.waiting_for is not None:
            self._park(_Parked(event, readiness.waiting_for, stored=False))
            return readiness.outcome, ()
        if readiness.outcome is Outcome.APPLIED:
            self._apply(event)
            return readiness.outcome, self._release(event)
        return readiness.outcome, ()

    def _park(self, parked: _Parked) -> None:
        self.park_rows[parked.event.event_id] = parked
        self.waiting[parked.waiting_for.aggregate].append(parked)

    def _take_stored_parked(self, reach: Mapping[AggregateKey, int]) -> None:
        """Take up the stored parked events waiting for each aggregate at a revision it can now reach, and the
        ones those could release in turn: one read per level of the cascade for every aggregate of that level,
        instead of one per aggregate when ``_release`` gets there. A taken event that is not released stays
        stored (only the ones this batch settles or parks again are rewritten at ``flush``)."""
        taken: list[ProductEvent] = []
        while True:
            ranges = {
                key: (self.parked_checked.get(key, 0), through)
                for key, through in reach.items()
                if through > self.parked_checked.get(key, 0)
            }
            if not ranges:
                break
            for key, (_, through) in ranges.items():
                self.parked_checked[key] = through
            level: dict[AggregateKey, int] = {}
            for row in inbox.parked_waiting_for(self.conn, self.scope, ranges):
                event = event_from_change(AcceptedChange.model_validate(row.message))
                self.waiting[row.waiting_for.aggregate].append(_Parked(event, row.waiting_for, stored=True))
                taken.append(event)
                # Released and applied, it brings its own aggregate to its revision.
                level[event.aggregate] = max(level.get(event.aggregate, 0), event.revision)
            reach = level
        if not taken:
            return
        # What their readiness checks will ask once released: read together now, not one lookup each.
        needed = {e.aggregate for e in taken} | {r.aggregate for e in taken for r in e.requirements()}
        if unknown := needed - self.revisions.keys():
            self.revisions.update(applied_revisions(self.conn, self.scope, unknown))

    def _apply(self, event: ProductEvent) -> None:
        payload = event.payload
        if isinstance(payload, ItemPayload):
            self.items[payload.item] = (event, payload)
        elif isinstance(payload, ListingPayload):
            self.listings[payload.listing] = (event, payload)
        elif isinstance(payload, MappingPayload):
            self.mappings[payload.listing] = (event, payload)
        elif event.aggregate.type in MERCHANT_FACTS:
            self.merchant_facts[event.aggregate.type][event.aggregate.id] = event
        elif event.aggregate.type in PICTURE_FACTS:
            self.picture_facts[event.aggregate.type][event.aggregate.id] = event
        elif isinstance(payload, ReleasePayload):
            # Writes the public tables only (through public_store), which nothing buffered here touches.
            apply_release(self.conn, self.scope, event, payload)
        self.revisions[event.aggregate] = event.revision
        self.applied[event.aggregate] = AppliedRow(event.aggregate, event.revision, event.position)

    def _release(self, applied: ProductEvent) -> tuple[str, ...]:
        """AW-04: "released when the dependency applies", in the same transaction, cascading until nothing more
        is ready. An event released while something else is still missing parks again, waiting for that."""
        settled: list[str] = []
        newly_applied = deque([(applied.aggregate, applied.revision)])
        while newly_applied:
            aggregate, revision = newly_applied.popleft()
            if revision > self.parked_checked.get(aggregate, 0):
                self._take_stored_parked({aggregate: revision})
            waiting = self.waiting.get(aggregate)
            if not waiting:
                continue
            ready = sorted((p for p in waiting if p.waiting_for.revision <= revision), key=_position)
            if not ready:
                continue
            self.waiting[aggregate] = [p for p in waiting if p.waiting_for.revision > revision]
            for parked in ready:
                self.park_rows.pop(parked.event.event_id, None)
                readiness = check_readiness(self.revision, parked.event)
                if readiness.waiting_for is not None:
                    self._park(_Parked(parked.event, readiness.waiting_for, parked.stored))
                    continue
                self._settle(parked, readiness.outcome)
                settled.append(parked.event.event_id)
                if readiness.outcome is Outcome.APPLIED:
                    self._apply(parked.event)
                    newly_applied.append((parked.event.aggregate, parked.event.revision))
        return tuple(settled)

    def _settle(self, parked: _Parked, outcome: Outcome) -> None:
        if parked.stored:
            self.settle_stored[parked.event.event_id] = outcome
        else:
            self.new_inbox[parked.event.event_id] = (parked.event, outcome)

    def flush(self) -> None:
        """The batch's writes, one statement per table. A stored parked event this batch took up (released, or
        parked again, possibly waiting for another dependency) loses its parked_event row; the ones still
        waiting get theirs back."""
        conn, scope = self.conn, self.scope
        taken = set(self.settle_stored) | {p.event.event_id for p in self.park_rows.values() if p.stored}
        # Writes only, none read back: one pipeline sends them all in one round trip (errors surface at its end).
        with conn.pipeline():
            inbox.delete_parked(conn, scope, sorted(taken))
            inbox.insert_settled(conn, scope, list(self.new_inbox.values()))
            inbox.settle_many(conn, scope, self.settle_stored)
            inbox.park_many(conn, scope, [(p.event, p.waiting_for) for p in self.park_rows.values()])
            upsert_applied_revisions(conn, scope, list(self.applied.values()))
            upsert_items(conn, scope, list(self.items.values()))
            upsert_listings(conn, scope, list(self.listings.values()))
            upsert_mappings(conn, scope, list(self.mappings.values()))
            for aggregate_type, latest in self.merchant_facts.items():
                upsert_merchant_facts(conn, scope, aggregate_type, list(latest.values()))
            for aggregate_type, latest in self.picture_facts.items():
                upsert_picture_facts(conn, scope, aggregate_type, list(latest.values()))
            record_observations(conn, scope, list(self.observations.values()))


def _position(parked: _Parked) -> int:
    return parked.event.position


def recorded_result(conn: Connection, change: AcceptedChange) -> DeliveryResult | None:
    """The outcome the inbox recorded for this event, or None if no transaction committed it."""
    outcome = inbox.recorded_outcome(conn, change)
    return DeliveryResult(change.event_id, outcome) if outcome is not None else None

"""The decision service and the listing decisions (AW-01): automatic rules and reviewers map a listing, create an
item for it, or open or decide a review case.

Under the cursor lock a replayed idempotency key returns the existing result (nothing written); a reviewer's
decision takes the case revision (INV-04 -> STALE_CASE_REVISION); the plan checks INV-01/02/07; then the
``DecisionWriter`` writes the decision, its facts at revision + 1 and its events. ``apply_decision`` runs inside a
caller's transaction (the resolution consumer commits its inbox row with it); ``decide`` in its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar

from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection, Database
from prw_platform.plugins.types import AttributeDefinition
from prw_platform.resolver import catalogs
from prw_platform.resolver.decisions import (
    cases,
    catalog_decisions,
    facts,
    identity,
    invariants,
    item_merges,
    releases,
)
from prw_platform.resolver.decisions.catalog_decisions import (
    AuthorizeRelease,
    ItemRetired,
    PendingRelease,
    ReleaseAuthorized,
    ReleasePolicyChange,
    RetireItem,
    SetReleasePolicy,
)
from prw_platform.resolver.decisions.commands import (
    Command,
    CreateItemAndMap,
    DecideCase,
    DecisionResult,
    ItemFacts,
    ListingObservation,
    MapListing,
    OpenReviewCase,
)
from prw_platform.resolver.decisions.errors import (
    CaseNotFound,
    IdempotencyConflict,
    InvariantViolation,
    ItemExists,
    SourceNotInCatalog,
)
from prw_platform.resolver.decisions.events import EventBatch
from prw_platform.resolver.decisions.facts import ItemState, ListingState, MappingState
from prw_platform.resolver.decisions.item_merges import ItemsMerged, ItemSplit, MergeItems, SplitItem
from prw_platform.resolver.decisions.offer_choices import AVAILABILITY, CURRENCY, PRICE, OfferChoice
from prw_platform.resolver.decisions.provenance import DecisionDetail, decision_detail
from prw_platform.resolver.decisions.records import (
    case_decisions,
    find_decision_by_key,
    request_fingerprint,
    send_find_decision_by_key,
)
from prw_platform.resolver.decisions.review import (
    ProfileDefinitions,
    ReviewDecision,
    read_case,
    to_command,
)
from prw_platform.resolver.decisions.writer import DecisionWriter, StreamLocator
from prw_platform.resolver.stream.cursor import send_lock_cursor

Definitions = Mapping[str, AttributeDefinition]
#: (conn, tenant_id, capture_id, now): a human decision on the capture's case committed, in its transaction
#: (the composition root binds intake's receipts: in_review -> accepted; intake imports this package).
CaseDecided = Callable[[Connection, str, str, datetime], None]


class DecisionService:
    """AW-01 for callers that know a (tenant, catalog), not its stream: the composition root binds the resolver
    database, the stream locator (the control plane's current history epoch) and the platform's clock."""

    def __init__(
        self,
        db: Database,
        streams: StreamLocator,
        profiles: ProfileDefinitions,
        *,
        case_decided: CaseDecided | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self._db = db
        self.streams = streams
        self._profiles = profiles
        self._case_decided = case_decided
        self._clock = clock

    def decide(
        self, cmd: Command, tenant_id: str, catalog_id: str, *, definitions: Definitions | None = None
    ) -> DecisionResult:
        """One decision in its own READ COMMITTED transaction on the catalog's current stream. A reviewer's new
        item is always checked against its profile's definitions (INV-02), passed or not."""
        if definitions is None and isinstance(cmd, DecideCase) and cmd.item is not None:
            definitions = self._definitions(cmd.item.profile)
        stream = self.streams(tenant_id, catalog_id)
        return decide(cmd, self._db, stream, clock=self._clock, definitions=definitions)

    def decide_review(self, request: ReviewDecision, tenant_id: str) -> DecisionResult:
        """if_review_decision: a human decision on a review case of ``tenant_id`` (AW-01 in one transaction). Once
        it commits, the capture's receipt moves from in_review to accepted in the same transaction."""
        case = read_case(self._db, tenant_id, request.case_id)
        cmd, definitions = to_command(request, case, self._definitions)
        cmd = replace(cmd, idempotency_key=_actor_key(request.actor, cmd.idempotency_key))
        stream = self.streams(tenant_id, case.catalog_id)

        def work(conn: Connection) -> DecisionResult:
            result = apply_decision(conn, cmd, stream, clock=self._clock, definitions=definitions)
            if not result.replayed and self._case_decided is not None:
                self._case_decided(conn, tenant_id, case.capture_id, self._clock())
            return result

        return _run(self._db, cmd, stream, work)

    def release(self, cmd: AuthorizeRelease, tenant_id: str) -> ReleaseAuthorized:
        """Authorize a release of the catalog's accepted state (AW-01 under the stream cursor lock)."""
        return self._catalog_decision(cmd, tenant_id, catalog_decisions.authorize_release)

    def set_release_policy(self, cmd: SetReleasePolicy, tenant_id: str) -> ReleasePolicyChange:
        """Switch the catalog between manual and automatic release, recorded as a decision."""
        return self._catalog_decision(cmd, tenant_id, catalog_decisions.set_release_policy)

    def pending_releases(self, tenant_id: str) -> list[PendingRelease]:
        """The tenant's catalogs, their release policy and what a release would publish now (read only)."""
        return self._db.run(
            lambda conn: catalog_decisions.pending_releases(conn, tenant_id),
            tenant_id=tenant_id,
            read_only=True,
        )

    def retire_item(self, cmd: RetireItem, tenant_id: str) -> ItemRetired:
        """INV-07: retire an item; the next release removes it from the public catalog."""
        return self._catalog_decision(cmd, tenant_id, catalog_decisions.retire_item)

    def merge_items(self, cmd: MergeItems, tenant_id: str) -> ItemsMerged:
        """A reviewer merges a duplicate item into another: its listings move to the survivor, it is retired, and
        the next release redirects its public id to the survivor (``item_merges``)."""
        return self._catalog_decision(cmd, tenant_id, item_merges.merge_items)

    def split_item(self, cmd: SplitItem, tenant_id: str) -> ItemSplit:
        """A reviewer moves listings off an item to a new item (``item_merges``); the new item's attributes are
        checked against the installed profile (INV-02)."""

        def split(conn: Connection, cmd: SplitItem, stream: StreamKey, clock: Clock) -> ItemSplit:
            return item_merges.split_item(conn, cmd, stream, clock, self._definitions)

        return self._catalog_decision(cmd, tenant_id, split)

    def decision(self, tenant_id: str, decision_id: str) -> DecisionDetail | None:
        """if_admin_read: the decision of ``tenant_id`` with its facts, events and provenance; None if absent."""
        return self._db.run(
            lambda conn: decision_detail(conn, tenant_id, decision_id), tenant_id=tenant_id, read_only=True
        )

    def _catalog_decision(
        self,
        cmd: _CatalogCommand,
        tenant_id: str,
        decision: Callable[[Connection, _CatalogCommand, StreamKey, Clock], _Outcome],
    ) -> _Outcome:
        """An operator's decision on a catalog in its own transaction."""
        cmd = replace(cmd, idempotency_key=_actor_key(cmd.actor, cmd.idempotency_key))
        stream = catalog_decisions.catalog_stream(self._db, self.streams, tenant_id, cmd.catalog_id)
        key = cmd.idempotency_key

        def work(conn: Connection) -> _Outcome:
            return decision(conn, cmd, stream, self._clock)

        def committed(conn: Connection) -> _Outcome | None:
            # if_db: after an ambiguous commit, the key tells whether the first attempt committed.
            assert key is not None
            return work(conn) if find_decision_by_key(conn, stream.tenant_id, key) else None

        return self._db.run(work, tenant_id=stream.tenant_id, verify_commit=committed if key else None)

    def _definitions(self, pin: str) -> Definitions:
        try:
            return self._profiles(pin)
        except Exception as error:  # the registry's UNKNOWN_PROFILE_VERSION
            raise InvariantViolation("INV-02", f"profile {pin} is not installed: {error}") from error


_CatalogCommand = TypeVar(
    "_CatalogCommand", AuthorizeRelease, SetReleasePolicy, RetireItem, MergeItems, SplitItem
)
_Outcome = TypeVar("_Outcome", ReleaseAuthorized, ReleasePolicyChange, ItemRetired, ItemsMerged, ItemSplit)


def _actor_key(actor: str, key: str | None) -> str | None:
    """Keys are the caller's: two operators may pick the same one."""
    return None if key is None else f"{actor}:{key}"


@dataclass
class _Plan:
    """What a decision changes, computed under the cursor lock before anything exported is written."""

    action: str
    listing: ListingState | None = None
    listing_changed: bool = False
    new_item: ItemState | None = None
    identifiers: tuple[identity.IdentifierKey, ...] = ()
    previous_mapping: MappingState | None = None
    mapping: MappingState | None = None
    target: ItemState | None = None
    case: cases.ReviewCase | None = None
    new_case: OpenReviewCase | None = None
    case_status: str | None = None
    evidence: tuple[str, ...] = ()
    prior_decisions: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def current_mapping(self) -> MappingState | None:
        return self.mapping or self.previous_mapping

    def add_events(self, batch: EventBatch) -> None:
        if self.new_item:
            batch.item_created(self.new_item)
        if self.listing and self.listing_changed:
            batch.listing_observed(self.listing)
        if self.mapping and self.target and self.listing:
            previous = self.previous_mapping.item_id if self.previous_mapping else None
            batch.mapping_changed(self.mapping, previous, self.target, self.listing)


def decide(
    cmd: Command,
    db: Database,
    stream: StreamKey,
    *,
    clock: Clock = utc_now,
    definitions: Definitions | None = None,
) -> DecisionResult:
    """Run one decision in its own transaction. After an ambiguous commit the idempotency key (if any) tells
    whether the first attempt committed (if_db: never retry after an ambiguous commit without a check)."""
    return _run(
        db, cmd, stream, lambda conn: apply_decision(conn, cmd, stream, clock=clock, definitions=definitions)
    )


def _run(
    db: Database, cmd: Command, stream: StreamKey, work: Callable[[Connection], DecisionResult]
) -> DecisionResult:
    key = cmd.idempotency_key
    verify: Callable[[Connection], DecisionResult | None] | None = None
    if key is not None:

        def verify(conn: Connection) -> DecisionResult | None:
            found = find_decision_by_key(conn, stream.tenant_id, key)
            return found.result(replayed=False) if found else None

    # Pipeline mode: every write travels with the next read (or the COMMIT) instead of costing a round trip of
    # its own; the statements still run in order, the cursor lock first (AW-01).
    return db.run(work, tenant_id=stream.tenant_id, verify_commit=verify, pipeline=True)


def apply_decision(
    conn: Connection,
    cmd: Command,
    stream: StreamKey,
    *,
    clock: Clock = utc_now,
    definitions: Definitions | None = None,
) -> DecisionResult:
    """AW-01 inside the caller's transaction (which must set ``app.tenant_id`` to the stream's tenant).

    The reads are sent together, the cursor lock first, and judged afterwards in the seed's order; in pipeline
    mode (``decide``) they cost one round trip with BEGIN, the writes a second and the COMMIT a third. The
    server runs them in the order sent, so every read starts once the lock is held (AW-01: nothing is read for
    a decision before its stream is locked) and each sees what the writer it waited for committed."""
    locked = send_lock_cursor(conn, stream)
    key = cmd.idempotency_key
    replay = send_find_decision_by_key(conn, stream.tenant_id, key) if key is not None else None
    reads = None if isinstance(cmd, DecideCase) else _send_observation_reads(conn, cmd, stream)
    policy = catalogs.send_release_policy(conn, stream.tenant_id, stream.catalog_id)

    writer = DecisionWriter(conn, locked(), clock())
    fingerprint = request_fingerprint(cmd)
    if replay is not None:
        existing = replay()
        if existing is not None:
            if existing.request_sha256 != fingerprint:
                raise IdempotencyConflict(f"idempotency key {key} was used for another decision")
            return existing.result(replayed=True)

    if isinstance(cmd, DecideCase):
        plan = _plan_case_decision(conn, cmd, stream, writer.decision_id, definitions)
    else:
        assert reads is not None
        plan = _plan(cmd, stream, writer.decision_id, definitions, reads)
        if isinstance(cmd, OpenReviewCase) and plan.previous_mapping is not None:
            # A review case opened on a mapped listing reports the item it is mapped to (read only then).
            plan.target = facts.get_item(conn, stream.tenant_id, plan.previous_mapping.item_id)
    record = writer.write(
        plan.action,
        cmd.actor,
        cmd.rationale,
        plan.details,
        events=plan.add_events,
        facts=lambda: _apply_facts(conn, stream.tenant_id, plan, writer.now),
        release=_release(conn, writer, plan, policy()),
        evidence=plan.evidence,
        observed_at=plan.listing.observed_at if plan.listing else None,
        prior_decisions=plan.prior_decisions,
        # The case a reviewer decided (at its new revision) or a rule opened; null for automatic mappings.
        case_id=plan.case.case_id if plan.case else None,
        case_revision=plan.case.revision if plan.case else None,
        item_id=plan.target.item_id if plan.target and plan.action != "open_review_case" else None,
        listing_id=plan.listing.listing_id if plan.listing else None,
        idempotency_key=key,
        request_sha256=fingerprint,
    )
    return record.result(replayed=False)


@dataclass(frozen=True, slots=True)
class _TargetReads:
    """The reads about the item a decision maps to: the new item's id and identifiers (create), or the
    existing item (map)."""

    item_id: str | None = None
    item: Callable[[], ItemState | None] | None = None
    #: create: the new item's strong identifiers and the check that they are free (INV-01/07 via identity).
    identifiers: tuple[identity.IdentifierKey, ...] = ()
    identifiers_free: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class _ObservationReads:
    """What a decision on a listing observation reads, sent in one go right after the cursor lock."""

    source_catalog: Callable[[], str | None]
    listing: Callable[[], ListingState | None]
    mapping: Callable[[], MappingState | None]
    target: _TargetReads


def _send_observation_reads(
    conn: Connection, cmd: CreateItemAndMap | MapListing | OpenReviewCase, stream: StreamKey
) -> _ObservationReads:
    tenant, obs = stream.tenant_id, cmd.listing
    return _ObservationReads(
        source_catalog=catalogs.send_source_catalog(conn, tenant, obs.source_id),
        listing=facts.send_find_listing(conn, tenant, obs.source_id, obs.natural_key),
        mapping=facts.send_find_mapping(conn, tenant, obs.source_id, obs.natural_key),
        target=_send_target_reads(
            conn,
            stream,
            cmd.item if isinstance(cmd, CreateItemAndMap) else None,
            cmd.item_id if isinstance(cmd, MapListing) else None,
        ),
    )


def _send_target_reads(
    conn: Connection, stream: StreamKey, new_item: ItemFacts | None, item_id: str | None
) -> _TargetReads:
    tenant = stream.tenant_id
    if new_item is not None:
        new_id = new_item.item_id or f"itm_{uuid.uuid4().hex[:24]}"
        keys = identity.identifier_keys(new_item.gtin, new_item.brand, new_item.mpn)
        return _TargetReads(
            item_id=new_id,
            item=facts.send_get_item(conn, tenant, new_id),
            identifiers=keys,
            identifiers_free=identity.send_identifiers_check(conn, tenant, stream.catalog_id, keys)
            if keys
            else None,
        )
    if item_id is not None:
        return _TargetReads(item_id=item_id, item=facts.send_get_item(conn, tenant, item_id))
    return _TargetReads()


def _plan(
    cmd: CreateItemAndMap | MapListing | OpenReviewCase,
    stream: StreamKey,
    decision_id: str,
    definitions: Definitions | None,
    reads: _ObservationReads,
) -> _Plan:
    plan = _observe(stream, cmd.listing, reads)
    plan.evidence = tuple(dict.fromkeys((*cmd.evidence, cmd.listing.capture_id)))
    assert plan.listing is not None
    if isinstance(cmd, OpenReviewCase):
        plan.action = "open_review_case"
        plan.new_case = cmd
        plan.case = cases.ReviewCase(
            case_id=cases.case_id_for(decision_id),
            catalog_id=stream.catalog_id,
            kind=cmd.kind,
            status=cases.AWAITING_HUMAN,
            revision=1,
            capture_id=cmd.listing.capture_id,
            listing_id=plan.listing.listing_id,
            source_id=plan.listing.source_id,
            opened_by=decision_id,
        )
        plan.previous_mapping = reads.mapping()
        plan.details = {"kind": cmd.kind, "case_id": plan.case.case_id}
        return plan
    if isinstance(cmd, CreateItemAndMap):
        plan.action = "create_item_and_map"
        _create_item(stream, plan, cmd.item, definitions, reads.target)
    else:
        plan.action = "map_listing"
    _map(plan, reads.target, reads.mapping(), decision_id)
    return plan


def _plan_case_decision(
    conn: Connection, cmd: DecideCase, stream: StreamKey, decision_id: str, definitions: Definitions | None
) -> _Plan:
    tenant = stream.tenant_id
    case = cases.take_case_revision(conn, tenant, cmd.case_id, cmd.expected_revision)
    if case.catalog_id != stream.catalog_id:
        raise CaseNotFound(f"no review case {cmd.case_id} in catalog {stream.catalog_id}")
    # The case names its listing: its reads and the target's travel together (one round trip in pipeline mode).
    listing_read = facts.send_get_listing(conn, tenant, case.listing_id)
    mapping_read = facts.send_get_mapping(conn, tenant, case.listing_id)
    create = cmd.action == "create_item"
    target = _send_target_reads(
        conn,
        stream,
        cmd.item if create else None,
        cmd.item_id if cmd.action != "dismiss" and not create else None,
    )
    listing = listing_read()
    assert listing is not None  # a foreign key guarantees it
    plan = _Plan(action="dismiss_case", listing=listing, case=case)
    plan.evidence = tuple(dict.fromkeys((*cmd.evidence, case.capture_id)))
    plan.details = {"decision": cmd.action}
    if cmd.review_action:
        plan.details["review_action"] = cmd.review_action
    if cmd.family:
        plan.details["family"] = cmd.family
    if cmd.corrections:
        plan.details["corrections"] = dict(cmd.corrections)
    # AW-01 "prior decision refs": the decision that opened the case and, when a reviewer decides it again (a
    # correction at its current revision), every earlier decision on it, so the history links them.
    plan.prior_decisions = (
        (case.opened_by,)
        if case.status == cases.AWAITING_HUMAN
        else tuple(d.decision_id for d in case_decisions(conn, tenant, case.case_id))
    )
    if cmd.offer is not None:
        # The reviewer's offer values go on the case's listing (a later capture's observation is left as it is).
        plan.details["offer"] = cmd.offer.document()
        offered = _with_offer(listing, cmd.offer, case.capture_id)
        if offered is not None:
            plan.listing, plan.listing_changed = offered, True
    if cmd.action == "dismiss":
        plan.case_status = cases.DISMISSED
        return plan
    plan.case_status = cases.DECIDED
    if create:
        assert cmd.item is not None
        plan.action = "create_item_and_map"
        _create_item(stream, plan, cmd.item, definitions, target)
    else:
        assert cmd.item_id is not None
        plan.action = "map_listing"
    _map(plan, target, mapping_read(), decision_id)
    return plan


def _observe(stream: StreamKey, obs: ListingObservation, reads: _ObservationReads) -> _Plan:
    if reads.source_catalog() != stream.catalog_id:
        raise SourceNotInCatalog(f"source {obs.source_id} is not a source of catalog {stream.catalog_id}")
    current = reads.listing()
    observed = facts.observe_listing(current, stream.catalog_id, obs)
    return _Plan(action="", listing=observed or current, listing_changed=observed is not None)


def _create_item(
    stream: StreamKey, plan: _Plan, item: ItemFacts, definitions: Definitions | None, reads: _TargetReads
) -> None:
    invariants.check_attributes(item.attributes, definitions)
    assert reads.item_id is not None
    assert reads.item is not None
    if reads.item() is not None:
        raise ItemExists(f"item {reads.item_id} already exists")
    if reads.identifiers_free is not None:
        reads.identifiers_free()
    plan.new_item = facts.new_item(reads.item_id, stream.catalog_id, item)
    plan.identifiers = reads.identifiers


def _map(plan: _Plan, reads: _TargetReads, previous: MappingState | None, decision_id: str) -> None:
    """Map the plan's listing to the new item or to ``reads``' item (INV-07), replacing ``previous``."""
    assert plan.listing is not None
    assert reads.item_id is not None
    listing = plan.listing
    item_id = reads.item_id
    new = plan.new_item
    if new is not None and new.item_id == item_id:
        target: ItemState | None = new
    else:
        assert reads.item is not None
        target = reads.item()
    plan.target = invariants.check_mapping_target(target, item_id, listing)
    plan.previous_mapping = previous
    if previous is not None:
        plan.prior_decisions = tuple(dict.fromkeys((*plan.prior_decisions, previous.decision_id)))
    if previous is None or previous.item_id != item_id:
        plan.mapping = facts.next_mapping(previous, listing, item_id, decision_id)
    plan.details = {**plan.details, "listing_id": listing.listing_id, "item_id": item_id}


def _release(
    conn: Connection, writer: DecisionWriter, plan: _Plan, policy: catalogs.ReleasePolicy
) -> releases.Release | None:
    """An automatic catalog publishes the decision's item and mapping when the catalog does not publish them yet."""
    mapping, item, listing = plan.current_mapping, plan.target, plan.listing
    if not writer.publishes_automatically(policy) or mapping is None or item is None or listing is None:
        return None
    items, listings = releases.unreleased(
        conn, writer.stream.tenant_id, [item], [releases.ReleasedListing(listing, mapping)]
    )
    return writer.release(items=items, listings=listings) if items or listings else None


def _apply_facts(conn: Connection, tenant: str, plan: _Plan, now: datetime) -> None:
    if plan.new_item:
        facts.insert_item(conn, tenant, plan.new_item, now)
        identity.insert_identifiers(
            conn, tenant, plan.new_item.catalog_id, plan.new_item.item_id, plan.identifiers
        )
    if plan.listing and plan.listing_changed:
        facts.write_listing(conn, tenant, plan.listing, now)
    if plan.new_case is not None and plan.case is not None:
        cases.open_case(conn, tenant, plan.case, plan.new_case.candidates, plan.new_case.case_evidence, now)
    if plan.mapping:
        facts.write_mapping(conn, tenant, plan.mapping, now)
    if plan.case is not None and plan.case_status is not None:
        cases.set_case_status(conn, tenant, plan.case.case_id, plan.case_status, now)


def _with_offer(listing: ListingState, offer: OfferChoice, capture_id: str) -> ListingState | None:
    """The listing's next revision with the chosen offer values, or None when nothing changes or the listing shows
    a newer capture than the case's (a choice never overwrites a later observation)."""
    if listing.capture_id != capture_id:
        return None
    keys = offer.keys
    chosen = replace(
        listing,
        revision=listing.revision + 1,
        price=offer.price if PRICE in keys else listing.price,
        currency=offer.currency if CURRENCY in keys else listing.currency,
        availability=offer.availability if AVAILABILITY in keys else listing.availability,
    )
    return None if chosen.payload() == listing.payload() else chosen

"""An operator's decisions on a whole catalog: release its accepted state now, switch its release policy between
manual and automatic, and retire an item (INV-07). Each is an AW-01 decision (``DecisionWriter``); an
Idempotency-Key returns the first result, as for reviewer decisions.

A release authorizes everything accepted and not yet released (active items, current listing mappings, merchant
facts, pictures and classes at their current revisions) and removes every published item retired since; when
there is nothing, ``NothingToRelease`` (409 NOTHING_TO_RELEASE) and nothing is written. A retired item is at
revision + 1 with status ``retired``; the next release (in the same transaction when the catalog publishes
automatically) removes it and the listings it owned from the public catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from prw_platform.clock import Clock
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection, Database
from prw_platform.resolver import catalogs
from prw_platform.resolver.decisions import facts, releases
from prw_platform.resolver.decisions.commands import EventRef
from prw_platform.resolver.decisions.errors import (
    CatalogNotFound,
    IdempotencyConflict,
    ItemAlreadyRetired,
    ItemNotFound,
    NothingToRelease,
)
from prw_platform.resolver.decisions.records import DecisionRecord, find_decision_by_key, request_fingerprint
from prw_platform.resolver.decisions.writer import DecisionWriter, StreamLocator

if TYPE_CHECKING:
    from prw_platform.resolver.catalogs import ReleasePolicy

AUTHORIZE_RELEASE = "authorize_release"
SET_RELEASE_POLICY = "set_release_policy"
RETIRE_ITEM = "retire_item"


@dataclass(frozen=True, slots=True)
class AuthorizeRelease:
    """Release the catalog's accepted state now (``POST /v1/releases``, ``prw release``)."""

    catalog_id: str
    actor: str
    rationale: str
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class SetReleasePolicy:
    """Switch the catalog's release policy (``PUT /v1/catalogs/{id}/release-policy``)."""

    catalog_id: str
    policy: ReleasePolicy
    actor: str
    rationale: str
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class RetireItem:
    """Retire an item of the catalog (``prw items retire``): final, INV-07 keeps every mapping away from it."""

    catalog_id: str
    item_id: str
    actor: str
    rationale: str
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class ReleaseAuthorized:
    decision_id: str
    catalog_id: str
    release_id: str
    publication_revision: int
    items: int
    listings: int
    #: The outbox events the release committed (one ``release.authorized``), in position order.
    events: tuple[EventRef, ...]
    created_at: datetime
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class ItemRetired:
    decision_id: str
    catalog_id: str
    item_id: str
    #: The item revision that retired it.
    revision: int
    #: ``catalog_item.updated``, then ``release.authorized`` when the catalog publishes automatically.
    events: tuple[EventRef, ...]
    created_at: datetime
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class ReleasePolicyChange:
    catalog_id: str
    previous: ReleasePolicy
    policy: ReleasePolicy
    #: The decision that recorded the switch; None when the catalog already had ``policy`` (nothing written).
    decision_id: str | None
    replayed: bool = False

    @property
    def changed(self) -> bool:
        return self.decision_id is not None


def authorize_release(
    conn: Connection, cmd: AuthorizeRelease, stream: StreamKey, clock: Clock
) -> ReleaseAuthorized:
    """AW-01 for a release, inside the caller's transaction (``app.tenant_id`` = the stream's tenant)."""
    writer = DecisionWriter.lock(conn, stream, clock)
    fingerprint = request_fingerprint(cmd)
    replayed = replayed_decision(conn, stream.tenant_id, cmd.idempotency_key, fingerprint)
    if replayed is not None:
        return _release_of(replayed, replayed=True)
    tenant = stream.tenant_id
    items, listings = _unreleased(conn, tenant, stream.catalog_id)
    merchants = releases.unreleased_merchant_facts(conn, tenant, stream.catalog_id)
    retired = releases.unreleased_retirements(conn, tenant, stream.catalog_id)
    merged = releases.unreleased_merges(conn, tenant, stream.catalog_id)
    pictures = releases.unreleased_file_facts(conn, tenant, stream.catalog_id)
    if not items and not listings and not merchants and not retired and not merged and not pictures:
        raise NothingToRelease(f"catalog {stream.catalog_id} has nothing accepted that is not released")
    release = writer.release(
        items=items,
        listings=listings,
        merchants=merchants.merchants,
        merchant_sources=merchants.merchant_sources,
        shipping_policies=merchants.shipping_policies,
        retired_items=retired,
        merged_items=merged,
        file_facts=pictures,
    )
    details = {
        "release_id": release.release_id,
        "publication_revision": release.publication_revision,
        "items": len(items),
        "listings": len(listings),
        "merchants": len(merchants.merchants),
        "merchant_sources": len(merchants.merchant_sources),
        "shipping_policies": len(merchants.shipping_policies),
        "retired_items": len(retired),
        "merged_items": len(merged),
        "pictures_and_classes": len(pictures),
    }
    record = writer.write(
        AUTHORIZE_RELEASE,
        cmd.actor,
        cmd.rationale,
        details,
        release=release,
        # Provenance: the decisions whose mappings this release makes public.
        prior_decisions=tuple(dict.fromkeys(entry.mapping.decision_id for entry in listings)),
        idempotency_key=cmd.idempotency_key,
        request_sha256=fingerprint,
    )
    return _release_of(record, replayed=False)


def retire_item(conn: Connection, cmd: RetireItem, stream: StreamKey, clock: Clock) -> ItemRetired:
    """AW-01 for a retirement, inside the caller's transaction (``app.tenant_id`` = the stream's tenant)."""
    writer = DecisionWriter.lock(conn, stream, clock)
    fingerprint = request_fingerprint(cmd)
    replayed = replayed_decision(conn, stream.tenant_id, cmd.idempotency_key, fingerprint)
    if replayed is not None:
        return _retired_of(replayed, replayed=True)
    current = facts.get_item(conn, stream.tenant_id, cmd.item_id)
    if current is None or current.catalog_id != stream.catalog_id:
        raise ItemNotFound(f"no item {cmd.item_id} in catalog {stream.catalog_id}")
    if current.status == facts.RETIRED:
        raise ItemAlreadyRetired(f"item {cmd.item_id} is retired already")
    retired = replace(current, revision=current.revision + 1, status=facts.RETIRED)
    automatic = writer.publishes_automatically(current_policy(conn, stream.tenant_id, stream.catalog_id))
    record = writer.write(
        RETIRE_ITEM,
        cmd.actor,
        cmd.rationale,
        {"item_id": retired.item_id, "revision": retired.revision},
        # catalog_item.updated: the full state, status retired
        events=lambda batch: batch.item_created(retired),
        facts=lambda: facts.write_retirement(conn, stream.tenant_id, retired, writer.now),
        release=writer.release(retired_items=(retired,)) if automatic else None,
        item_id=retired.item_id,
        idempotency_key=cmd.idempotency_key,
        request_sha256=fingerprint,
    )
    return _retired_of(record, replayed=False)


def set_release_policy(
    conn: Connection, cmd: SetReleasePolicy, stream: StreamKey, clock: Clock
) -> ReleasePolicyChange:
    """The switch under the cursor lock, so every decision of the stream commits under one policy or the other.
    It writes no event: the product service sees releases, not policies."""
    writer = DecisionWriter.lock(conn, stream, clock)
    fingerprint = request_fingerprint(cmd)
    replayed = replayed_decision(conn, stream.tenant_id, cmd.idempotency_key, fingerprint)
    if replayed is not None:
        return _policy_of(replayed, replayed=True)
    previous = current_policy(conn, stream.tenant_id, stream.catalog_id)
    if previous == cmd.policy:
        return ReleasePolicyChange(stream.catalog_id, previous, cmd.policy, None)
    record = writer.write(
        SET_RELEASE_POLICY,
        cmd.actor,
        cmd.rationale,
        {"release_policy": cmd.policy, "previous": previous},
        facts=lambda: catalogs.write_release_policy(conn, stream.tenant_id, stream.catalog_id, cmd.policy),
        idempotency_key=cmd.idempotency_key,
        request_sha256=fingerprint,
    )
    return _policy_of(record, replayed=False)


def catalog_stream(db: Database, streams: StreamLocator, tenant_id: str, catalog_id: str) -> StreamKey:
    """The catalog's stream; an unknown catalog is NOT_FOUND before the control plane is asked for it."""
    db.run(lambda conn: current_policy(conn, tenant_id, catalog_id), tenant_id=tenant_id, read_only=True)
    return streams(tenant_id, catalog_id)


def current_policy(conn: Connection, tenant_id: str, catalog_id: str) -> ReleasePolicy:
    try:
        return catalogs.release_policy(conn, tenant_id, catalog_id)
    except LookupError as missing:
        raise CatalogNotFound(f"no catalog {catalog_id} in tenant {tenant_id}") from missing


@dataclass(frozen=True, slots=True)
class PendingRelease:
    """What ``POST /v1/releases`` would authorize now for a catalog (the console's "Release now" preview)."""

    catalog_id: str
    name: str
    release_policy: ReleasePolicy
    items: int
    listings: int
    #: Merchants, source bindings and shipping policies together (each a fact a release publishes).
    merchant_facts: int = 0
    #: Published items retired since, and items merged since: the release removes them from the public catalog
    #: (INV-07), a merged one's id redirecting to its survivor.
    retirements: int = 0
    #: Item pictures and product classes saved or deleted since (seed 004).
    pictures_and_classes: int = 0

    @property
    def anything(self) -> bool:
        return bool(
            self.items
            or self.listings
            or self.merchant_facts
            or self.retirements
            or self.pictures_and_classes
        )


def pending_releases(conn: Connection, tenant_id: str) -> list[PendingRelease]:
    """Each catalog of the tenant with the counts a release would publish now; reads only, takes no lock, so
    a release made meanwhile may find less (or NOTHING_TO_RELEASE)."""
    pending = []
    for catalog in catalogs.catalog_policies(conn, tenant_id):
        items, listings = _unreleased(conn, tenant_id, catalog.catalog_id)
        merchants = releases.unreleased_merchant_facts(conn, tenant_id, catalog.catalog_id)
        retired = releases.unreleased_retirements(conn, tenant_id, catalog.catalog_id)
        merged = releases.unreleased_merges(conn, tenant_id, catalog.catalog_id)
        pictures = releases.unreleased_file_facts(conn, tenant_id, catalog.catalog_id)
        pending.append(
            PendingRelease(
                catalog.catalog_id,
                catalog.name,
                catalog.release_policy,
                len(items),
                len(listings),
                len(merchants.merchants) + len(merchants.merchant_sources) + len(merchants.shipping_policies),
                len(retired) + len(merged),
                len(pictures),
            )
        )
    return pending


def _unreleased(
    conn: Connection, tenant_id: str, catalog_id: str
) -> tuple[tuple[facts.ItemState, ...], tuple[releases.ReleasedListing, ...]]:
    """Every active item and public mapping of the catalog that the catalog does not publish yet. Only mappings
    whose item is active: a retired item is never published (INV-07)."""
    active = facts.active_items(conn, tenant_id, catalog_id)
    active_ids = {i.item_id for i in active}
    mappings = [
        releases.ReleasedListing(listing, mapping)
        for listing, mapping in facts.mapped_listings(conn, tenant_id, catalog_id)
        if mapping.item_id in active_ids
    ]
    return releases.unreleased(conn, tenant_id, active, mappings)


def replayed_decision(
    conn: Connection, tenant_id: str, idempotency_key: str | None, fingerprint: str
) -> DecisionRecord | None:
    """The decision an operator's command with this key already made (its replay), or None; the same key with
    another command (``fingerprint``) is IDEMPOTENCY_CONFLICT. Asked under the cursor lock."""
    if idempotency_key is None:
        return None
    existing = find_decision_by_key(conn, tenant_id, idempotency_key)
    if existing is not None and existing.request_sha256 != fingerprint:
        raise IdempotencyConflict(f"idempotency key {idempotency_key} was used for another request")
    return existing


def _release_of(record: DecisionRecord, *, replayed: bool) -> ReleaseAuthorized:
    details = record.details
    return ReleaseAuthorized(
        decision_id=record.decision_id,
        catalog_id=record.stream.catalog_id,
        release_id=str(details["release_id"]),
        publication_revision=int(details["publication_revision"]),
        items=int(details["items"]),
        listings=int(details["listings"]),
        events=record.events,
        created_at=record.created_at,
        replayed=replayed,
    )


def _policy_of(record: DecisionRecord, *, replayed: bool) -> ReleasePolicyChange:
    details = record.details
    return ReleasePolicyChange(
        catalog_id=record.stream.catalog_id,
        previous="automatic" if details["previous"] == "automatic" else "manual",
        policy="automatic" if details["release_policy"] == "automatic" else "manual",
        decision_id=record.decision_id,
        replayed=replayed,
    )


def _retired_of(record: DecisionRecord, *, replayed: bool) -> ItemRetired:
    details = record.details
    return ItemRetired(
        decision_id=record.decision_id,
        catalog_id=record.stream.catalog_id,
        item_id=str(details["item_id"]),
        revision=int(details["revision"]),
        events=record.events,
        created_at=record.created_at,
        replayed=replayed,
    )

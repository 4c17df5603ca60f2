"""Accepted-change events of one decision (docs/events.md): one per affected aggregate revision, numbered from
the locked cursor, each naming the aggregate revisions it depends on.

Payloads are the contract models of ``prw_platform.contracts``; ``VOCABULARY[type].document`` checks each one
against its event type (aggregate, id, revision, undeclared keys, dependency types) before it enters the outbox,
so a payload the product service would dead-letter as SCHEMA_INVALID rolls the decision back instead (AW-01).
"""

from __future__ import annotations

from datetime import datetime

from prw_platform.contracts import (
    CATALOG_ITEM,
    ITEM_PICTURES,
    LISTING,
    LISTING_MAPPING,
    MERCHANT,
    MERCHANT_SOURCE,
    RELEASE,
    SHIPPING_POLICY,
    VOCABULARY,
    AcceptedChange,
    AggregateRevision,
    EventPayload,
    MappingPayload,
    ProductClassDeletedPayload,
    StreamKey,
)
from prw_platform.resolver.decisions.commands import EventRef
from prw_platform.resolver.decisions.facts import ItemState, ListingState, MappingState
from prw_platform.resolver.decisions.merchants import MerchantSourceState, MerchantState, ShippingPolicyState
from prw_platform.resolver.decisions.releases import Release
from prw_platform.resolver.files.published import FileFact


class EventBatch:
    """Builds the events of one decision in position order, starting after the locked cursor."""

    def __init__(
        self,
        stream: StreamKey,
        committed_position: int,
        decision_id: str,
        accepted_at: datetime,
        evidence: tuple[str, ...],
        observed_at: datetime | None,
    ) -> None:
        self._stream = stream
        self._next_position = committed_position + 1
        self._decision_id = decision_id
        self._accepted_at = accepted_at
        self._evidence = evidence
        self._observed_at = observed_at
        self.events: list[AcceptedChange] = []

    def _add(
        self,
        event_type: str,
        aggregate: AggregateRevision,
        payload: EventPayload,
        dependencies: tuple[AggregateRevision, ...] = (),
    ) -> None:
        document = VOCABULARY[event_type].document(aggregate, payload, dependencies)
        ordinal = len(self.events) + 1
        self.events.append(
            AcceptedChange(
                # Unique in the stream: the decision id is unique per tenant, the ordinal within the decision.
                event_id=f"evt_{self._decision_id.removeprefix('dec_')}_{ordinal}",
                tenant_id=self._stream.tenant_id,
                catalog_id=self._stream.catalog_id,
                history_epoch=self._stream.history_epoch,
                sequence=self._next_position,
                type=event_type,
                aggregate=aggregate,
                dependencies=dependencies,
                decision_id=self._decision_id,
                evidence=self._evidence,
                observed_at=self._observed_at,
                accepted_at=self._accepted_at,
                payload=document,
            )
        )
        self._next_position += 1

    def item_created(self, item: ItemState) -> None:
        kind = "catalog_item.created" if item.revision == 1 else "catalog_item.updated"
        self._add(kind, _rev(CATALOG_ITEM, item.item_id, item.revision), item.payload())

    def item_merged(self, merged: ItemState, survivor: ItemState) -> None:
        """``catalog_item.merged``: ``merged`` at the revision that retired it into ``survivor``."""
        self._add(
            "catalog_item.merged",
            _rev(CATALOG_ITEM, merged.item_id, merged.revision),
            merged.payload(),
            # docs/events.md: the surviving item at its current revision.
            (_rev(CATALOG_ITEM, survivor.item_id, survivor.revision),),
        )

    def listing_observed(self, listing: ListingState) -> None:
        self._add("listing.observed", _rev(LISTING, listing.listing_id, listing.revision), listing.payload())

    def mapping_changed(
        self, mapping: MappingState, previous_item: str | None, target: ItemState, listing: ListingState
    ) -> None:
        kind = "listing_mapping.created" if mapping.revision == 1 else "listing_mapping.corrected"
        self._add(
            kind,
            _rev(LISTING_MAPPING, mapping.listing_id, mapping.revision),
            MappingPayload(listing=mapping.listing_id, previous_item=previous_item, item=mapping.item_id),
            # docs/events.md: the target item at its current revision, the listing at its current revision.
            (
                _rev(CATALOG_ITEM, target.item_id, target.revision),
                _rev(LISTING, listing.listing_id, listing.revision),
            ),
        )

    def merchant_changed(self, merchant: MerchantState) -> None:
        kind = "merchant.created" if merchant.revision == 1 else "merchant.updated"
        self._add(kind, _rev(MERCHANT, merchant.merchant_id, merchant.revision), merchant.payload())

    def source_bound(self, binding: MerchantSourceState, merchant: MerchantState) -> None:
        self._add(
            "merchant.source_bound",
            _rev(MERCHANT_SOURCE, binding.source_id, binding.revision),
            binding.payload(),
            (_rev(MERCHANT, merchant.merchant_id, merchant.revision),),
        )

    def shipping_policy_accepted(self, policy: ShippingPolicyState, merchant: MerchantState) -> None:
        self._add(
            "shipping_policy.accepted",
            _rev(SHIPPING_POLICY, policy.merchant_id, policy.revision),
            policy.payload(),
            (_rev(MERCHANT, merchant.merchant_id, merchant.revision),),
        )

    def file_fact_changed(self, fact: FileFact) -> None:
        """``item_pictures.saved``, ``product_class.saved`` or ``product_class.deleted`` (seed 004)."""
        aggregate = _rev(fact.aggregate_type, fact.aggregate_id, fact.revision)
        if fact.payload is not None:
            kind = "item_pictures.saved" if fact.aggregate_type == ITEM_PICTURES else "product_class.saved"
            self._add(kind, aggregate, fact.payload)
        else:
            self._add(
                "product_class.deleted", aggregate, ProductClassDeletedPayload(class_id=fact.aggregate_id)
            )

    def release_authorized(self, release: Release) -> None:
        # docs/events.md: every item, mapping, merchant, binding and shipping policy revision it publishes, and the
        # revision that retired or merged each item it removes.
        dependencies = (
            *(_rev(CATALOG_ITEM, i.item_id, i.revision) for i in release.items),
            *(_rev(LISTING_MAPPING, r.mapping.listing_id, r.mapping.revision) for r in release.listings),
            *(_rev(MERCHANT, m.merchant_id, m.revision) for m in release.merchants),
            *(_rev(MERCHANT_SOURCE, b.source_id, b.revision) for b in release.merchant_sources),
            *(_rev(SHIPPING_POLICY, p.merchant_id, p.revision) for p in release.shipping_policies),
            *(_rev(CATALOG_ITEM, i.item_id, i.revision) for i in release.retired_items),
            *(_rev(CATALOG_ITEM, i.item_id, i.revision) for i in release.merged_items),
            *(_rev(f.aggregate_type, f.aggregate_id, f.revision) for f in release.file_facts),
        )
        self._add(
            "release.authorized",
            _rev(RELEASE, release.release_id, release.publication_revision),
            release.payload(),
            dependencies,
        )

    def refs(self) -> tuple[EventRef, ...]:
        return tuple(
            EventRef(e.event_id, e.sequence, e.type, e.aggregate.type, e.aggregate.id, e.aggregate.revision)
            for e in self.events
        )


def _rev(aggregate_type: str, aggregate_id: str, revision: int) -> AggregateRevision:
    return AggregateRevision(type=aggregate_type, id=aggregate_id, revision=revision)

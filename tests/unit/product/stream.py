"""A test double of the resolver's outbox for one stream: builds product.accepted-change.v1 messages following
docs/events.md (revisions +1 per aggregate, full-state payloads, dependencies, incremental releases).

Pure Python (no database), shared by the unit, integration and property tests of the product consumer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from prw_platform.contracts import AcceptedChange, AggregateRevision

TENANT = "ten_synth_a"
OTHER_TENANT = "ten_synth_b"
CATALOG = "cat_primary"
EPOCH = "hep_ten_synth_a_cat_primary_1"
_T0 = datetime(2026, 10, 11, 9, 0, tzinfo=UTC)


@dataclass
class StreamBuilder:
    tenant_id: str = TENANT
    catalog_id: str = CATALOG
    history_epoch: str = EPOCH
    position: int = 0
    revisions: dict[tuple[str, str], int] = field(default_factory=dict)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    listings: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: listing -> item, the current mapping
    mappings: dict[str, str] = field(default_factory=dict)
    #: what the catalog publishes: item -> revision; listing -> (item, mapping revision, listing revision)
    released_items: dict[str, int] = field(default_factory=dict)
    released_listings: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    #: merchant facts: aggregate type -> id -> payload, and what the catalog publishes of them (-> revision).
    merchant_facts: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    released_merchant_facts: dict[tuple[str, str], int] = field(default_factory=dict)
    #: item_pictures / product_class (seed 004): (type, id) -> payload (None: a deleted class), and what the
    #: catalog publishes of them (-> revision).
    picture_facts: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    released_picture_facts: dict[tuple[str, str], int] = field(default_factory=dict)

    def revision(self, aggregate_type: str, aggregate_id: str) -> int:
        return self.revisions.get((aggregate_type, aggregate_id), 0)

    def item(
        self,
        item_id: str,
        *,
        title: str = "Lumen P5 1 TB SSD",
        brand: str | None = "Lumen",
        gtin: str | None = None,
        mpn: str | None = None,
        status: str = "active",
        attributes: dict[str, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        payload = {
            "item": item_id,
            "profile": "np_storage@1",
            "status": status,
            "title": title,
            "brand": brand,
            "identifiers": {"gtin": gtin, "mpn": mpn},
            "attributes": attributes or {},
        }
        self.items[item_id] = payload
        kind = "created" if self.revision("catalog_item", item_id) == 0 else "updated"
        return self._event(f"catalog_item.{kind}", "catalog_item", item_id, payload)

    def merge(self, item_id: str, into: str) -> dict[str, Any]:
        """``catalog_item.merged``: ``item_id`` retired into ``into``, which it depends on at its current revision
        (remap the merged item's listings first, with ``mapping``)."""
        payload = {**self.items[item_id], "status": "retired", "merged_into": into}
        self.items[item_id] = payload
        survivor = AggregateRevision(
            type="catalog_item", id=into, revision=self.revision("catalog_item", into)
        )
        return self._event("catalog_item.merged", "catalog_item", item_id, payload, (survivor,))

    def listing(
        self,
        listing_id: str,
        *,
        title: str = "Lumen P5 SSD 1TB (retail)",
        price: str = "89.90",
        source_id: str = "src_shop_a",
    ) -> dict[str, Any]:
        payload = {
            "listing": listing_id,
            "source_id": source_id,
            "url": f"https://shop.example/{listing_id}",
            "title": title,
            "price": price,
            "currency": "EUR",
            "availability": "in_stock",
            "observed_at": "2026-10-10T03:31:55+00:00",
        }
        self.listings[listing_id] = payload
        return self._event("listing.observed", "listing", listing_id, payload)

    def mapping(self, listing_id: str, item_id: str) -> dict[str, Any]:
        previous = self.mappings.get(listing_id)
        self.mappings[listing_id] = item_id
        kind = "created" if previous is None else "corrected"
        dependencies = (
            AggregateRevision(
                type="catalog_item", id=item_id, revision=self.revision("catalog_item", item_id)
            ),
            AggregateRevision(type="listing", id=listing_id, revision=self.revision("listing", listing_id)),
        )
        payload = {"listing": listing_id, "from": previous, "item": item_id}
        return self._event(f"listing_mapping.{kind}", "listing_mapping", listing_id, payload, dependencies)

    def merchant(
        self, merchant_id: str, *, name: str = "Lumen Store", url: str | None = None
    ) -> dict[str, Any]:
        payload = {"merchant": merchant_id, "name": name, "url": url}
        kind = "created" if self.revision("merchant", merchant_id) == 0 else "updated"
        return self._merchant_fact(f"merchant.{kind}", "merchant", merchant_id, payload)

    def bind_source(self, source_id: str, merchant_id: str) -> dict[str, Any]:
        payload = {"source_id": source_id, "merchant": merchant_id}
        return self._merchant_fact(
            "merchant.source_bound", "merchant_source", source_id, payload, merchant_id
        )

    def shipping_policy(
        self,
        merchant_id: str,
        rates: dict[str, str],
        *,
        currency: str = "EUR",
        free_shipping_threshold: str | None = None,
    ) -> dict[str, Any]:
        payload = {
            "merchant": merchant_id,
            "currency": currency,
            "rates": [{"destination": d, "rate": r} for d, r in sorted(rates.items())],
            "free_shipping_threshold": free_shipping_threshold,
        }
        return self._merchant_fact(
            "shipping_policy.accepted", "shipping_policy", merchant_id, payload, merchant_id
        )

    def _merchant_fact(
        self,
        event_type: str,
        aggregate_type: str,
        aggregate_id: str,
        payload: dict[str, Any],
        merchant_id: str | None = None,
    ) -> dict[str, Any]:
        self.merchant_facts.setdefault(aggregate_type, {})[aggregate_id] = payload
        dependencies = (
            ()
            if merchant_id is None
            else (
                AggregateRevision(
                    type="merchant", id=merchant_id, revision=self.revision("merchant", merchant_id)
                ),
            )
        )
        return self._event(event_type, aggregate_type, aggregate_id, payload, dependencies)

    def item_pictures(
        self, item_id: str, main: dict[str, Any] | None, gallery: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """``item_pictures.saved``: the item's whole set of pictures (each a ``contracts.Picture`` document)."""
        payload = {"item": item_id, "main": main, "gallery": list(gallery or [])}
        self.picture_facts[("item_pictures", item_id)] = payload
        return self._event("item_pictures.saved", "item_pictures", item_id, payload)

    def product_class(
        self, class_id: str, name: str, picture: dict[str, Any] | None, members: list[str]
    ) -> dict[str, Any]:
        payload = {"class": class_id, "name": name, "picture": picture, "members": sorted(members)}
        self.picture_facts[("product_class", class_id)] = payload
        return self._event("product_class.saved", "product_class", class_id, payload)

    def delete_class(self, class_id: str) -> dict[str, Any]:
        self.picture_facts[("product_class", class_id)] = None
        return self._event("product_class.deleted", "product_class", class_id, {"class": class_id})

    def _released_picture_facts(self) -> tuple[dict[str, list[dict[str, Any]]], list[AggregateRevision]]:
        """What the release adds of item pictures and classes, and removes of deleted classes."""
        entries: dict[str, list[dict[str, Any]]] = {"item_pictures": [], "classes": [], "removed_classes": []}
        dependencies = []
        for (aggregate_type, aggregate_id), payload in sorted(self.picture_facts.items()):
            revision = self.revision(aggregate_type, aggregate_id)
            released = self.released_picture_facts.get((aggregate_type, aggregate_id), 0)
            if released >= revision or (payload is None and released == 0):
                continue
            self.released_picture_facts[(aggregate_type, aggregate_id)] = revision
            dependencies.append(AggregateRevision(type=aggregate_type, id=aggregate_id, revision=revision))
            if payload is None:
                entries["removed_classes"].append({"class": aggregate_id, "revision": revision})
            elif aggregate_type == "item_pictures":
                entries["item_pictures"].append(
                    {"item": aggregate_id, "revision": revision, "fields": payload}
                )
            else:
                entries["classes"].append({"class": aggregate_id, "revision": revision, "fields": payload})
        return entries, dependencies

    def _released_merchant_facts(self) -> dict[str, list[dict[str, Any]]]:
        """What the release adds of merchants, bindings and policies; updates the released revisions."""
        entries: dict[str, list[dict[str, Any]]] = {
            "merchants": [],
            "merchant_sources": [],
            "shipping_policies": [],
        }
        shapes = (
            ("merchant", "merchants"),
            ("merchant_source", "merchant_sources"),
            ("shipping_policy", "shipping_policies"),
        )
        for aggregate_type, key in shapes:
            for aggregate_id, payload in sorted(self.merchant_facts.get(aggregate_type, {}).items()):
                revision = self.revision(aggregate_type, aggregate_id)
                if self.released_merchant_facts.get((aggregate_type, aggregate_id), 0) == revision:
                    continue
                self.released_merchant_facts[(aggregate_type, aggregate_id)] = revision
                if aggregate_type == "merchant_source":
                    entry = {"source_id": aggregate_id, "merchant": payload["merchant"], "revision": revision}
                else:
                    entry = {"merchant": aggregate_id, "revision": revision, "fields": dict(payload)}
                entries[key].append(entry)
        return entries

    def has_unreleased(self) -> bool:
        items, listings = self._unreleased()
        unreleased_facts = any(
            self.released_merchant_facts.get((aggregate_type, aggregate_id), 0)
            < self.revision(aggregate_type, aggregate_id)
            for aggregate_type, facts in self.merchant_facts.items()
            for aggregate_id in facts
        )
        unreleased_pictures = any(
            self.released_picture_facts.get(key, 0) < self.revision(*key)
            and (payload is not None or self.released_picture_facts.get(key, 0) > 0)
            for key, payload in self.picture_facts.items()
        )
        return bool(items or listings or unreleased_facts or unreleased_pictures or self._unreleased_merges())

    def _unreleased_merges(self) -> list[str]:
        return [
            item_id
            for item_id, payload in sorted(self.items.items())
            if payload.get("merged_into")
            and self.released_items.get(item_id, 0) < self.revision("catalog_item", item_id)
        ]

    def release(self) -> dict[str, Any]:
        """Publish what changed since the last release (like the resolver's automatic policy)."""
        items, listings = self._unreleased()
        release_id = f"rel_{self.catalog_id}"
        publication_revision = self.revision("release", release_id) + 1
        entries_items = []
        dependencies = []
        for item_id in items:
            revision = self.revision("catalog_item", item_id)
            fields = {k: v for k, v in self.items[item_id].items() if k != "status"}
            entries_items.append({"item": item_id, "revision": revision, "fields": fields})
            dependencies.append(AggregateRevision(type="catalog_item", id=item_id, revision=revision))
            self.released_items[item_id] = revision
        merged_entries = []
        for item_id in self._unreleased_merges():
            revision = self.revision("catalog_item", item_id)
            merged_entries.append(
                {"item": item_id, "revision": revision, "into": self.items[item_id]["merged_into"]}
            )
            dependencies.append(AggregateRevision(type="catalog_item", id=item_id, revision=revision))
            self.released_items[item_id] = revision
        entries_listings = []
        for listing_id in listings:
            item_id = self.mappings[listing_id]
            mapping_revision = self.revision("listing_mapping", listing_id)
            listing_revision = self.revision("listing", listing_id)
            entries_listings.append(
                {
                    "listing": listing_id,
                    "item": item_id,
                    "mapping_revision": mapping_revision,
                    "listing_revision": listing_revision,
                    "fields": dict(self.listings[listing_id]),
                }
            )
            dependencies.append(
                AggregateRevision(type="listing_mapping", id=listing_id, revision=mapping_revision)
            )
            self.released_listings[listing_id] = (item_id, mapping_revision, listing_revision)
        merchant_entries = self._released_merchant_facts()
        for key, aggregate_type, id_key in (
            ("merchants", "merchant", "merchant"),
            ("merchant_sources", "merchant_source", "source_id"),
            ("shipping_policies", "shipping_policy", "merchant"),
        ):
            dependencies += [
                AggregateRevision(type=aggregate_type, id=entry[id_key], revision=entry["revision"])
                for entry in merchant_entries[key]
            ]
        picture_entries, picture_dependencies = self._released_picture_facts()
        dependencies += picture_dependencies
        payload = {
            "release": release_id,
            "publication_revision": publication_revision,
            "items": entries_items,
            "listings": entries_listings,
            # Only when the release publishes some: a release of items alone looks as it always did.
            **{key: entries for key, entries in merchant_entries.items() if entries},
            **{key: entries for key, entries in picture_entries.items() if entries},
            **({"merged_items": merged_entries} if merged_entries else {}),
        }
        return self._event("release.authorized", "release", release_id, payload, tuple(dependencies))

    def _unreleased(self) -> tuple[list[str], list[str]]:
        items = [
            item_id
            for item_id, payload in sorted(self.items.items())
            if payload["status"] == "active"
            and self.released_items.get(item_id, 0) < self.revision("catalog_item", item_id)
        ]
        public = set(self.released_items) | set(items)
        listings = [
            listing_id
            for listing_id, item_id in sorted(self.mappings.items())
            if item_id in public
            and self.released_listings.get(listing_id)
            != (item_id, self.revision("listing_mapping", listing_id), self.revision("listing", listing_id))
        ]
        return items, listings

    def _event(
        self,
        event_type: str,
        aggregate_type: str,
        aggregate_id: str,
        payload: dict[str, Any],
        dependencies: tuple[AggregateRevision, ...] = (),
    ) -> dict[str, Any]:
        self.position += 1
        key = (aggregate_type, aggregate_id)
        self.revisions[key] = self.revisions.get(key, 0) + 1
        change = AcceptedChange(
            event_id=f"evt_{self.tenant_id}_{self.history_epoch}_{self.position:05d}",
            tenant_id=self.tenant_id,
            catalog_id=self.catalog_id,
            history_epoch=self.history_epoch,
            sequence=self.position,
            type=event_type,
            aggregate=AggregateRevision(type=aggregate_type, id=aggregate_id, revision=self.revisions[key]),
            dependencies=dependencies,
            # Internal references every event carries; no public serializer may emit them.
            decision_id=f"dec_{self.position:05d}",
            evidence=(f"cap_{self.position:05d}",),
            observed_at=_T0,
            accepted_at=_T0 + timedelta(seconds=self.position),
            payload=payload,
        )
        return change.to_message()

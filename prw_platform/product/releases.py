"""Apply a ``release.authorized`` event: the public snapshot and the release pointer, in one transaction
(if_product_query: only an applied release publishes).

The public rows are copied from the release's snapshot, never from the live projection, so an item revision applied
after the release was authorized stays private until a later release; a retired item the release names leaves the
public catalog with the listings it owned, and a merged one leaves a redirect to the item it was merged into. The
rows are written through ``public_store``, which owns
``public_item``, ``public_listing`` and ``release_pointer``.
"""

from __future__ import annotations

from typing import Any

from prw_platform.contracts import EventPayload, ReleasePayload
from prw_platform.db.database import Connection
from prw_platform.product.events import ProductEvent
from prw_platform.product.public import store as public_store
from prw_platform.product.public.fields import (
    public_class_fields,
    public_item_fields,
    public_listing_fields,
    public_merchant_fields,
    public_pictures_fields,
    public_policy_fields,
)
from prw_platform.product.public.rows import PublicItem, PublicListing, PublicMerchant
from prw_platform.product.scopes import ProjectedScope


def apply_release(
    conn: Connection, scope: ProjectedScope, event: ProductEvent, release: ReleasePayload
) -> None:
    """Called by the consumer once the release's dependencies (and the previous release) are applied."""
    for retired in release.retired_items:
        public_store.withdraw_item(conn, scope, retired.item)
    for merged in release.merged_items:
        # Its listings are in this release under the survivor: withdrawn first, they are published again below.
        public_store.withdraw_item(conn, scope, merged.item)
        public_store.redirect_item(conn, scope, merged.item, merged.into, release.publication_revision)
    for item in release.items:
        public_store.publish_item(
            conn,
            scope,
            PublicItem(
                item_id=item.item,
                published_revision=item.revision,
                publication_revision=release.publication_revision,
                fields=public_item_fields({**_snapshot(item.fields), "item": item.item}),
            ),
        )
    for listing in release.listings:
        public_store.publish_listing(
            conn,
            scope,
            PublicListing(
                listing_id=listing.listing,
                item_id=listing.item,
                publication_revision=release.publication_revision,
                fields=public_listing_fields({**_snapshot(listing.fields), "listing": listing.listing}),
            ),
            mapping_revision=listing.mapping_revision,
            listing_revision=listing.listing_revision,
        )
    _publish_merchants(conn, scope, release)
    _publish_pictures(conn, scope, release)
    public_store.point_release(
        conn,
        scope,
        release_id=release.release,
        publication_revision=release.publication_revision,
        event_id=event.event_id,
        position=event.position,
    )


def _publish_merchants(conn: Connection, scope: ProjectedScope, release: ReleasePayload) -> None:
    """Merchants, source bindings and shipping policies the release publishes, from its snapshot."""
    publication = release.publication_revision
    for merchant in release.merchants:
        fields = public_merchant_fields(_snapshot(merchant.fields))
        public_store.publish_merchant(
            conn, scope, PublicMerchant(merchant.merchant, merchant.revision, publication, fields, (), None)
        )
    for binding in release.merchant_sources:
        public_store.publish_merchant_source(
            conn, scope, binding.source_id, binding.merchant, binding.revision, publication
        )
    for policy in release.shipping_policies:
        public_store.publish_shipping_policy(
            conn,
            scope,
            policy.merchant,
            policy.revision,
            publication,
            public_policy_fields(_snapshot(policy.fields)),
        )


def _publish_pictures(conn: Connection, scope: ProjectedScope, release: ReleasePayload) -> None:
    """Item pictures and product classes the release publishes, and the deleted classes it removes, from its
    snapshot (seed 004): a picture saved after the release was authorized stays private, and the
    public one keeps serving until a later release names the new one."""
    publication = release.publication_revision
    for pictures in release.item_pictures:
        public_store.publish_item_pictures(
            conn,
            scope,
            pictures.item,
            pictures.revision,
            publication,
            public_pictures_fields(_snapshot(pictures.fields)),
        )
    for removed in release.removed_classes:
        public_store.withdraw_class(conn, scope, removed.class_id)
    for product_class in release.classes:
        public_store.publish_class(
            conn,
            scope,
            product_class.class_id,
            product_class.revision,
            publication,
            public_class_fields(_snapshot(product_class.fields)),
        )


def _snapshot(fields: EventPayload) -> dict[str, Any]:
    """The snapshot as the event carried it: the keys it had (no defaults filled in) and any undeclared ones,
    which the whitelist then drops."""
    return fields.model_dump(mode="json", by_alias=True, exclude_unset=True)

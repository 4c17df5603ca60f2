"""AW-04 for merchants, source bindings, shipping policies and inventory observations, on a real
PostgreSQL as product_app: the same dedupe / stale revision / dependency parking rules as items (INV-08), history
kept for inventory, and nothing public until a release publishes it (if_product_query)."""

from __future__ import annotations

from typing import Any

from prw_platform.db.database import Database
from prw_platform.product.consumer import Outcome, apply_delivery
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.reports import public_counts
from prw_platform.product.scopes import ProjectedScope
from tests.integration.product.tables import parked_event_ids
from tests.unit.product.stream import CATALOG, TENANT, StreamBuilder


def _rows(owner_db: Database, query: str) -> list[dict[str, Any]]:
    with owner_db.transaction() as conn:
        return conn.execute(query).fetchall()


def test_a_binding_before_its_merchant_parks_and_applies_when_the_merchant_does(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    merchant = stream.merchant("mer_shop_a", name="Shop A")
    binding = stream.bind_source("src_shop_a", "mer_shop_a")
    policy = stream.shipping_policy("mer_shop_a", {"DE": "4.90"})

    assert apply_delivery(product_db, binding).outcome is Outcome.PARKED
    assert apply_delivery(product_db, policy).outcome is Outcome.PARKED
    assert parked_event_ids(owner_db) == [binding["event_id"], policy["event_id"]]
    applied = apply_delivery(product_db, merchant)

    assert applied.outcome is Outcome.APPLIED
    assert applied.released == (binding["event_id"], policy["event_id"])
    assert applied.contiguous_position == 3
    assert _rows(owner_db, "SELECT source_id, revision, fields FROM product.merchant_source_projection") == [
        {"source_id": "src_shop_a", "revision": 1, "fields": binding["payload"]}
    ]
    assert _rows(owner_db, "SELECT merchant_id, revision FROM product.shipping_policy_projection") == [
        {"merchant_id": "mer_shop_a", "revision": 1}
    ]


def test_a_merchant_revision_older_than_the_applied_one_is_stale(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    first = stream.merchant("mer_shop_a", name="Shop A")
    second = stream.merchant("mer_shop_a", name="Shop A Direct")

    assert apply_delivery(product_db, second).outcome is Outcome.APPLIED
    assert apply_delivery(product_db, first).outcome is Outcome.IGNORED_STALE_REVISION
    assert apply_delivery(product_db, first).outcome is Outcome.IGNORED_DUPLICATE
    assert _rows(owner_db, "SELECT revision, fields->>'name' AS name FROM product.merchant_projection") == [
        {"revision": 2, "name": "Shop A Direct"}
    ]


def test_every_observation_is_kept_once_whatever_the_order(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    observations = [stream.listing("lst_1", price=price) for price in ("89.90", "84.50", "79.00")]

    outcomes = [apply_delivery(product_db, observations[i]).outcome for i in (2, 0, 1, 0)]

    assert outcomes == [
        Outcome.APPLIED,
        Outcome.IGNORED_STALE_REVISION,
        Outcome.IGNORED_STALE_REVISION,
        Outcome.IGNORED_DUPLICATE,
    ]
    history = _rows(
        owner_db,
        """SELECT listing_revision, price::text AS price, currency, availability, observed_at, position
             FROM product.inventory_observation ORDER BY listing_revision""",
    )
    assert [(row["listing_revision"], row["price"], row["position"]) for row in history] == [
        (1, "89.90", 1),
        (2, "84.50", 2),
        (3, "79.00", 3),
    ]
    assert {(row["currency"], row["availability"]) for row in history} == {("EUR", "in_stock")}
    assert _rows(owner_db, "SELECT revision FROM product.listing_projection") == [{"revision": 3}]


def test_merchants_and_listing_merchants_are_public_only_once_released(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, owner_db: Database
) -> None:
    messages = [
        stream.item("itm_a"),
        stream.listing("lst_1"),
        stream.mapping("lst_1", "itm_a"),
        stream.merchant("mer_shop_a", name="Shop A"),
        stream.bind_source("src_shop_a", "mer_shop_a"),
    ]
    for message in messages:
        apply_delivery(product_db, message)
    assert PublicCatalog(product_db, TENANT, CATALOG).merchants().entries == ()
    assert PublicCatalog(product_db, TENANT, CATALOG).merchant("mer_shop_a").entry is None

    assert public_counts(owner_db)["public_merchants"] == 0
    apply_delivery(product_db, stream.release())
    # The operator's product_projection asset counts them.
    assert (
        public_counts(owner_db)["public_merchants"],
        public_counts(owner_db)["inventory_observations"],
    ) == (1, 1)

    (merchant,) = PublicCatalog(product_db, TENANT, CATALOG).merchants().entries
    assert (merchant.merchant_id, merchant.sources, merchant.publication_revision) == (
        "mer_shop_a",
        ("src_shop_a",),
        1,
    )
    listings = PublicCatalog(product_db, TENANT, CATALOG).item_listings("itm_a")
    (entry,) = listings.listings
    assert entry.merchant is not None
    assert (entry.merchant.merchant_id, entry.merchant.name) == ("mer_shop_a", "Shop A")
    # A later binding is applied, not public, until the next release.
    for message in (stream.merchant("mer_shop_c"), stream.bind_source("src_shop_a", "mer_shop_c")):
        apply_delivery(product_db, message)
    (entry,) = PublicCatalog(product_db, TENANT, CATALOG).item_listings("itm_a").listings
    assert entry.merchant is not None
    assert entry.merchant.merchant_id == "mer_shop_a"

"""The resolver's inventory history (migration 0021): every accepted listing observation is appended to
``resolver.inventory_observation`` in the decision transaction that writes the listing's revision; the table is
append-only for ``resolver_app``; a snapshot export reads it (``facts.inventory_history``)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from alembic import command

from prw_platform.db.database import Database
from prw_platform.db.errors import InsufficientPrivilege
from prw_platform.db.migrate import MAIN, alembic_config
from prw_platform.resolver.decisions import facts
from tests.integration.resolver.decision_builders import T0, Catalog


def test_each_accepted_observation_of_a_listing_is_appended_with_the_revision_that_carried_it(
    catalog: Catalog, resolver_db: Database
) -> None:
    created = catalog.decide(catalog.create(1))
    assert created.item_id
    catalog.decide(catalog.map("rec_1", created.item_id, price="119.00", observed_at=T0 + timedelta(days=1)))
    catalog.decide(catalog.map("rec_1", created.item_id, price="99.50", observed_at=T0 + timedelta(days=2)))

    history = resolver_db.run(
        lambda conn: facts.inventory_history(conn, catalog.tenant_id, catalog.stream.catalog_id),
        tenant_id=catalog.tenant_id,
        read_only=True,
    )
    assert [(h.listing_revision, h.price, h.observed_at) for h in history] == [
        (1, Decimal("129.00"), T0),
        (2, Decimal("119.00"), T0 + timedelta(days=1)),
        (3, Decimal("99.50"), T0 + timedelta(days=2)),
    ]
    assert {h.listing_id for h in history} == {created.listing_id}
    assert history[-1].export_line() == {
        "listing": created.listing_id,
        "listing_revision": 3,
        "price": "99.50",
        "currency": "EUR",
        "availability": "in_stock",
        "observed_at": (T0 + timedelta(days=2)).isoformat(),
    }
    # The listing's events carry the same revisions: one listing.observed per observation.
    assert [r["aggregate_revision"] for r in catalog.outbox() if r["event_type"] == "listing.observed"] == [
        1,
        2,
        3,
    ]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE resolver.inventory_observation SET price = 1",
        "DELETE FROM resolver.inventory_observation",
    ],
)
def test_the_inventory_history_is_append_only_for_the_resolver(
    catalog: Catalog, resolver_db: Database, statement: str
) -> None:
    catalog.decide(catalog.create(1))
    with pytest.raises(InsufficientPrivilege):
        resolver_db.run(lambda conn: conn.execute(statement), tenant_id=catalog.tenant_id)


def test_the_migration_backfills_each_listing_with_its_current_observation(
    catalog: Catalog, resolver_db: Database, db_url: str
) -> None:
    """Migration 0021 on a database with listings: the history before it is not known on the resolver side, so each
    listing's history starts at its current revision (a downgrade to 0020 and back stands in for the upgrade)."""
    created = catalog.decide(catalog.create(1))
    assert created.item_id
    catalog.decide(catalog.map("rec_1", created.item_id, price="119.00", observed_at=T0 + timedelta(days=1)))
    config = alembic_config(MAIN, db_url)
    command.downgrade(config, "0020_released_fields")
    command.upgrade(config, "heads")

    history = resolver_db.run(
        lambda conn: facts.inventory_history(conn, catalog.tenant_id, catalog.stream.catalog_id),
        tenant_id=catalog.tenant_id,
        read_only=True,
    )
    assert [(h.listing_id, h.listing_revision, h.price) for h in history] == [
        (created.listing_id, 2, Decimal("119.00"))
    ]

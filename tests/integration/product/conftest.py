"""Fixtures for the product consumer tests: a projected stream (role product_app) on a real PostgreSQL.

The product tests only touch the ``product`` schema, so they share one migrated database per module and empty the
schema before each test, instead of cloning two databases per test: the same isolation, a fraction of the time.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from prw_platform.db.database import Database
from prw_platform.product.scopes import ProjectedScope, project_catalog
from tests.support.postgres import MAIN, fresh_database
from tests.unit.product.stream import CATALOG, EPOCH, TENANT, StreamBuilder

PRODUCT_TABLES = (
    "projected_scope",
    "inbox",
    "applied_revision",
    "parked_event",
    "item_projection",
    "listing_projection",
    "listing_mapping_projection",
    "progress",
    "release_pointer",
    "public_item",
    "public_listing",
    "merchant_projection",
    "merchant_source_projection",
    "shipping_policy_projection",
    "inventory_observation",
    "public_merchant",
    "public_merchant_source",
    "public_shipping_policy",
    "item_pictures_projection",
    "product_class_projection",
    "public_item_pictures",
    "public_class",
    "public_item_redirect",
)


@pytest.fixture(scope="module")
def product_module_db_url(pg_admin_url: str, pg_templates: dict[str, str]) -> Iterator[str]:
    with fresh_database(pg_admin_url, pg_templates[MAIN], "prw_product") as url:
        yield url


@pytest.fixture
def db_url(product_module_db_url: str) -> str:
    """Overrides the suite's ``db_url``: the module's database with an empty product schema."""
    # DELETE, not TRUNCATE: a handful of rows, and TRUNCATE's new relation files cost more than the rows.
    with psycopg.connect(product_module_db_url) as conn:
        for table in PRODUCT_TABLES:
            conn.execute(f"DELETE FROM product.{table}")  # noqa: S608  # names from the constant above
    return product_module_db_url


@pytest.fixture
def scope(product_db: Database) -> ProjectedScope:
    return project_catalog(product_db, TENANT, CATALOG, EPOCH)


@pytest.fixture
def stream() -> StreamBuilder:
    return StreamBuilder()

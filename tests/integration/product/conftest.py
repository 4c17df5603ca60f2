"""Fixtures for the product consumer tests: a projected stream (role product_app) and inspection helpers."""

from __future__ import annotations

import pytest

from prw_platform.db.database import Database
from prw_platform.product.scopes import ProjectedScope, project_catalog
from tests.unit.product.stream import CATALOG, EPOCH, TENANT, StreamBuilder


@pytest.fixture
def scope(product_db: Database) -> ProjectedScope:
    return project_catalog(product_db, TENANT, CATALOG, EPOCH)


@pytest.fixture
def stream() -> StreamBuilder:
    return StreamBuilder()

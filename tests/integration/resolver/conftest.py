"""Fixtures for the decision path (AW-01) and relay (AW-03) tests (real PostgreSQL, roles resolver_app and
resolver_relay)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.resolver.catalogs import SourceSpec
from tests.integration.resolver.decision_builders import Catalog, provision


@pytest.fixture
def catalog(resolver_db: Database, control_db: Database, owner_db: Database) -> Catalog:
    """ten_primary / cat_primary with the automatic release policy (the demo's default)."""
    return provision(resolver_db, control_db, owner_db)


@pytest.fixture
def manual_catalog(resolver_db: Database, control_db: Database, owner_db: Database) -> Catalog:
    return provision(
        resolver_db,
        control_db,
        owner_db,
        catalog_id="cat_manual",
        release_policy="manual",
        sources=(SourceSpec("src_manual", "Manual source"),),
    )


@pytest.fixture
def wide_resolver_db(db_url: str) -> Iterator[Database]:
    """resolver_app with room for many concurrent writers."""
    db = Database(db_url, role=roles.RESOLVER_APP, max_size=12, application_name="prw-test-writers").open()
    yield db
    db.close()


@pytest.fixture
def provision_catalog_for(
    resolver_db: Database, control_db: Database, owner_db: Database
) -> Callable[..., Catalog]:
    def make(**kwargs: Any) -> Catalog:
        return provision(resolver_db, control_db, owner_db, **kwargs)

    return make

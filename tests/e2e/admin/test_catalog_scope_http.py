"""Reads of the admin origin are scoped to the active tenant like its writes (INV-06): a catalog, a class or an
item the tenant does not have (another tenant's, or nobody's) is 404 NOT_FOUND, never an empty 200 that tells
a read of another tenant's catalog apart from a write to it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from prw_platform.bootstrap import Platform
from prw_platform.db.database import Database
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from tests.e2e.admin.conftest import OTHER_TENANT, Operator
from tests.integration.files.conftest import Items
from tests.integration.resolution.pipeline import CATALOG

#: A catalog only the other tenant has, with a class and an item of its own.
OTHER_CATALOG, OTHER_CLASS, OTHER_ITEM = "cat_b", "cls_b_tools", "itm_b_anvil"


@pytest.fixture
def other_tenant_catalog(admin_platform: Platform, owner_db: Database, catalogs: None) -> None:
    admin_platform.catalogs.provision(
        CatalogSpec(OTHER_TENANT, OTHER_CATALOG, "B", "manual", (SourceSpec("src_b_web", "B web"),))
    )
    Items(owner_db).add(OTHER_ITEM, tenant_id=OTHER_TENANT, catalog_id=OTHER_CATALOG)
    admin_platform.catalog_files.create_class(
        OTHER_TENANT, OTHER_CATALOG, OTHER_CLASS, "Tools", picture=None, members=[], actor="operator:otto"
    )


@pytest.mark.parametrize(
    "path",
    [
        f"/v1/catalogs/{OTHER_CATALOG}/classes",
        "/v1/catalogs/cat_nowhere/classes",
        f"/v1/classes/{OTHER_CLASS}",
        f"/v1/items/{OTHER_ITEM}/pictures",
    ],
)
def test_a_read_of_what_the_tenant_does_not_have_is_404_like_a_write(
    path: str, login: Callable[[str], Operator], other_tenant_catalog: None
) -> None:
    ada = login("ada")  # operator_admin of the primary tenant only
    write = ada.http.post(
        f"/v1/catalogs/{OTHER_CATALOG}/classes",
        json={"class_id": "cls_mine", "name": "Mine"},
        headers={"X-CSRF-Token": ada.csrf},
    )

    read = ada.http.get(path)

    assert (write.status_code, write.json()["error"]["code"]) == (404, "NOT_FOUND")
    assert (read.status_code, read.json()["error"]["code"]) == (404, "NOT_FOUND"), read.text
    # The tenant's own catalog still reads (an empty list: it has no classes yet).
    assert ada.http.get(f"/v1/catalogs/{CATALOG}/classes").json() == {"classes": []}

"""What the product origin needs from the core: the one released catalog this deployment serves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from prw_platform.db.database import Database
from prw_platform.product.queries import (
    DEFAULT_PAGE_SIZE,
    ItemFilters,
    ItemPage,
    PublicItem,
    get_public_item,
    list_public_items,
)

#: if_product_query Tenant: "Deployment binds ten_primary and tenant-private cat_primary."
DEFAULT_TENANT_ID: Final = "ten_primary"
DEFAULT_CATALOG_ID: Final = "cat_primary"


@dataclass(frozen=True)
class PublicCatalog:
    """The released catalog of one (tenant, catalog) pair. Scope comes from the deployment, never from the
    request: public reads carry no identity (if_product_query Authentication), so no caller can pick a tenant
    (INV-06)."""

    db: Database
    tenant_id: str
    catalog_id: str

    def items(
        self, filters: ItemFilters, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> ItemPage:
        return list_public_items(
            self.db, self.tenant_id, self.catalog_id, filters, limit=limit, cursor=cursor
        )

    def item(self, item_id: str) -> PublicItem | None:
        return get_public_item(self.db, self.tenant_id, self.catalog_id, item_id)


@dataclass(frozen=True)
class ProductApiServices:
    catalog: PublicCatalog


def build_product_services(
    product_db: Database,
    *,
    tenant_id: str = DEFAULT_TENANT_ID,
    catalog_id: str = DEFAULT_CATALOG_ID,
) -> ProductApiServices:
    """``product_db`` acts as ``product_app`` (if_db: the API's statement timeout is 5 s:
    ``Database(..., role=PRODUCT_APP, statement_timeout_ms=5_000)``)."""
    return ProductApiServices(PublicCatalog(product_db, tenant_id, catalog_id))

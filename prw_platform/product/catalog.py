"""The public catalog service: the released catalog of one (tenant, catalog) pair, as the product API serves it.

Scope comes from the deployment, never from the request: public reads carry no identity (if_product_query
Authentication), so no caller can pick a tenant (INV-06). Built by the composition root
(``Platform.public_catalog``) over ``product_app`` with the API's statement timeout.
"""

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
#: How long a readiness probe waits for the database (a connection and ``SELECT 1``).
READINESS_TIMEOUT_SECONDS: Final = 2.0


@dataclass(frozen=True)
class PublicCatalog:
    db: Database
    tenant_id: str
    catalog_id: str

    def items(
        self, filters: ItemFilters, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> ItemPage:
        return list_public_items(
            self.db, self.tenant_id, self.catalog_id, filters, limit=limit, cursor=cursor
        )

    def ready(self, timeout_s: float = READINESS_TIMEOUT_SECONDS) -> None:
        """Readiness of the product API: its database pool answers ``SELECT 1`` within ``timeout_s``; else
        ``DatabaseUnavailable`` (503 STORAGE_UNAVAILABLE, retry later)."""
        self.db.ready(timeout_s)

    def item(self, item_id: str) -> PublicItem | None:
        return get_public_item(self.db, self.tenant_id, self.catalog_id, item_id)

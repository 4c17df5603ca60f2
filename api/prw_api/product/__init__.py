"""The product origin (public reads, if_product_query): ``create_app(settings, services)``."""

from prw_api.product.app import create_app
from prw_api.product.services import (
    DEFAULT_CATALOG_ID,
    DEFAULT_TENANT_ID,
    ProductApiServices,
    PublicCatalog,
    build_product_services,
)

__all__ = [
    "DEFAULT_CATALOG_ID",
    "DEFAULT_TENANT_ID",
    "ProductApiServices",
    "PublicCatalog",
    "build_product_services",
    "create_app",
]

"""The product origin (public reads, if_product_query): ``create_app(settings, catalog)``."""

from prw_api.product.app import create_app

__all__ = ["create_app"]

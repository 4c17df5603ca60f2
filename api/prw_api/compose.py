"""The API apps built from a ``Platform`` (the composition root): what ``prw demo`` and ``prw dev`` serve."""

from __future__ import annotations

from fastapi import FastAPI

from prw_api.intake.app import create_app as create_intake_app
from prw_api.intake.services import build_intake_services
from prw_api.product.app import create_app as create_product_app
from prw_api.product.services import build_product_services
from prw_platform.bootstrap import Platform
from prw_platform.resolver.intake import QueueJobEnqueuer


def intake_app(platform: Platform) -> FastAPI:
    """The intake origin: resolver_app with API timeouts, jobs sent to the resolution queue after commit."""
    return create_intake_app(
        platform.settings,
        build_intake_services(
            platform.settings,
            resolver_db=platform.resolver_api_db,
            control_db=platform.control_db,
            enqueuer=QueueJobEnqueuer(platform.resolution_queue),
            store=platform.store,
        ),
    )


def product_app(platform: Platform, tenant_id: str, catalog_id: str) -> FastAPI:
    """The product origin for one released catalog (if_product_query: the deployment binds the pair)."""
    return create_product_app(
        platform.settings,
        build_product_services(platform.product_api_db, tenant_id=tenant_id, catalog_id=catalog_id),
    )

"""Decisions and served catalogs for product end-to-end tests on real parts: a rule's ``CreateItemAndMap`` as the
decision service takes it (AW-01), and a manual catalog provisioned on both sides and served by the product app."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal

import httpx

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform
from prw_platform.plugins.types import NormalizedAttribute
from prw_platform.product.scopes import project_catalog
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.decisions import CreateItemAndMap, ItemFacts, ListingObservation
from tests.integration.resolver.decision_builders import gtin_for


def create_and_map(catalog_id: str, source_id: str, tag: str, n: int) -> CreateItemAndMap:
    """Item ``n`` (an SSD of ``n`` TB with a strong identifier) and its listing on ``source_id``."""
    return CreateItemAndMap(
        item=ItemFacts(
            profile="np_storage@2",
            title=f"Strata P5 {n} TB",
            brand="Corvana",
            gtin=gtin_for(n),
            mpn=f"CVN-SP5-{n}T0",
            attributes=(NormalizedAttribute("storage:capacity", Decimal(n * 1000), 1, unit="GB"),),
        ),
        listing=ListingObservation(
            source_id=source_id,
            observed_at=datetime(2026, 11, 1, tzinfo=UTC),
            capture_id=f"cap_{tag}_{n:04d}",
            url=f"https://{tag}.example/p/{n}",
            native_record_id=f"rec_{n}",
            title=f"Strata P5 SSD {n}",
            price=Decimal("129.00"),
            currency="EUR",
            availability="in_stock",
        ),
        actor="rule:create_on_required_identifiers@1",
        rationale="no item has these identifiers",
        idempotency_key=f"job:{catalog_id}:cap_{tag}_{n:04d}:identity:1",
    )


@contextmanager
def served_manual_catalog(
    platform: Platform, tenant_id: str, catalog_id: str, source_id: str
) -> Iterator[httpx.Client]:
    """A manual catalog with one source and its product projection, served by the product app over HTTP."""
    provisioned = platform.catalogs.provision(
        CatalogSpec(tenant_id, catalog_id, catalog_id, "manual", (SourceSpec(source_id, source_id),))
    )
    project_catalog(platform.product_db, tenant_id, catalog_id, provisioned.stream.history_epoch)
    with (
        BackgroundServer(compose.product_app(platform, tenant_id, catalog_id)) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        yield http

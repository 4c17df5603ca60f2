"""A retired item leaves the public catalog at the next release (INV-07, issue 9 item 2), on real parts: an item
created by the decision service (AW-01) on a manual catalog and released, retired by an operator's decision, the
relay (AW-03), the product consumer (AW-04) and the product app over HTTP. Until the release it stays public;
after it ``GET /v1/items/{id}`` is 404 NOT_FOUND, ``GET /v1/items`` no longer lists it and its listings have no
public owner any more, while the other item keeps its own."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

import httpx
import pytest

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform
from prw_platform.plugins.types import NormalizedAttribute
from prw_platform.product.scopes import project_catalog
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.decisions import CreateItemAndMap, ItemFacts, ListingObservation
from prw_platform.runtime import drain
from prw_platform.services import AuthorizeRelease, RetireItem
from tests.integration.resolver.decision_builders import gtin_for

TENANT, CATALOG, SOURCE = "ten_retire", "cat_retire", "src_retire_web"
OPERATOR = "operator:ops_anna"


def _create(n: int) -> CreateItemAndMap:
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
            source_id=SOURCE,
            observed_at=datetime(2026, 11, 1, tzinfo=UTC),
            capture_id=f"cap_retire_{n:04d}",
            url=f"https://retire.example/p/{n}",
            native_record_id=f"rec_{n}",
            title=f"Strata P5 SSD {n}",
            price=Decimal("129.00"),
            currency="EUR",
            availability="in_stock",
        ),
        actor="rule:create_on_required_identifiers@1",
        rationale="no item has these identifiers",
        idempotency_key=f"job:{CATALOG}:cap_retire_{n:04d}:identity:1",
    )


@pytest.fixture
def product(platform: Platform) -> Iterator[httpx.Client]:
    """A manual catalog with its product projection, served by the product app."""
    provisioned = platform.catalogs.provision(
        CatalogSpec(TENANT, CATALOG, "Retired items", "manual", (SourceSpec(SOURCE, "Retire web"),))
    )
    project_catalog(platform.product_db, TENANT, CATALOG, provisioned.stream.history_epoch)
    with (
        BackgroundServer(compose.product_app(platform, TENANT, CATALOG)) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        yield http


def _release(platform: Platform) -> None:
    platform.decisions.release(AuthorizeRelease(CATALOG, OPERATOR, "publish the catalog"), TENANT)
    drain(platform)


def _public_items(product: httpx.Client) -> list[str]:
    return [entry["item"] for entry in product.get("/v1/items").json()["items"]]


def test_a_retired_item_leaves_the_public_catalog_with_its_listings_at_the_next_release(
    platform: Platform, product: httpx.Client
) -> None:
    kept, retired = (platform.decisions.decide(_create(n), TENANT, CATALOG).item_id for n in (1, 2))
    assert kept is not None
    assert retired is not None
    _release(platform)
    assert sorted(_public_items(product)) == sorted([kept, retired])
    assert product.get(f"/v1/sources/{SOURCE}").json()["listings"] == 2

    platform.decisions.retire_item(RetireItem(CATALOG, retired, OPERATOR, "discontinued"), TENANT)
    drain(platform)
    assert product.get(f"/v1/items/{retired}").status_code == 200  # retired internally, still released

    _release(platform)

    gone = product.get(f"/v1/items/{retired}")
    assert gone.status_code == 404, gone.text
    assert gone.json()["error"]["code"] == "NOT_FOUND"
    assert product.get(f"/v1/items/{retired}/listings").status_code == 404
    assert _public_items(product) == [kept]
    source = product.get(f"/v1/sources/{SOURCE}").json()
    assert (source["listings"], source["items"], source["publication_revision"]) == (1, 1, 2)
    (own,) = product.get(f"/v1/items/{kept}/listings").json()["listings"]
    assert own["url"] == "https://retire.example/p/1"

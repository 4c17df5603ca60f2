"""Gap closure on real parts: decisions committed by the decision service (AW-01), relayed to the
PostgreSQL accepted-change queue (AW-03), one delivery lost and one dead-lettered on the way, the product
consumer (AW-04) stuck behind the gap, then the ``gaps`` stage fetching the stream from the resolver's export
stream over HTTP (the intake app on loopback, GET /v1/exports/events, a product principal with exports:read) and
reaching the head. Also one test per error row of the export route."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import psycopg
import pytest
from pydantic import SecretStr

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.product import reports as product_reports
from prw_platform.product.scopes import project_catalog
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.decisions import CreateItemAndMap
from prw_platform.runtime import Budget, drain, run_stage
from prw_platform.services import COLLECTOR_SCOPES, PRODUCT_SCOPES, ClientSpec, ProvisionedClient
from tests.e2e.product.decisions import create_and_map

TENANT, CATALOG, SOURCE = "ten_gaps", "cat_gaps", "src_gaps_web"


def create(n: int) -> CreateItemAndMap:
    return create_and_map(CATALOG, SOURCE, "gaps", n)


@dataclass
class Deployment:
    platform: Platform
    export_url: str
    product_client: ProvisionedClient
    collector_client: ProvisionedClient
    history_epoch: str


@pytest.fixture
def deployment(platform: Platform) -> Iterator[Deployment]:
    provisioned = platform.catalogs.provision(
        CatalogSpec(TENANT, CATALOG, "Gaps", "manual", (SourceSpec(SOURCE, "Gaps web"),))
    )
    epoch = provisioned.stream.history_epoch
    project_catalog(platform.product_db, TENANT, CATALOG, epoch)
    product_client = platform.clients.create(
        ClientSpec(TENANT, CATALOG, "product", "product_live", (), PRODUCT_SCOPES)
    )
    collector_client = platform.clients.create(
        ClientSpec(TENANT, CATALOG, "cw_gaps", "ci_gaps_01", (SOURCE,), COLLECTOR_SCOPES)
    )
    with BackgroundServer(compose.intake_app(platform)) as intake:
        yield Deployment(platform, intake.url, product_client, collector_client, epoch)


def consumer(deployment: Deployment, settings: Settings) -> Platform:
    """The product consumer's own platform, configured for the export stream like a product deployment."""
    return bootstrap(
        settings.model_copy(
            update={
                "exports_url": deployment.export_url,
                "exports_client_id": deployment.product_client.client_id,
                "exports_client_secret": SecretStr(deployment.product_client.client_secret),
                "gap_fetch_after_seconds": 0,
            }
        )
    )


def token(http: httpx.Client, client: ProvisionedClient) -> str:
    response = http.post(
        "/v1/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": client.client_id,
            "client_secret": client.client_secret,
        },
    )
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def lose_delivery(platform: Platform, position: int) -> None:
    """The queue loses the message of ``position`` (deleted as the owner: no consumer ever sees it)."""
    with psycopg.connect(platform.urls.main, autocommit=True) as conn:
        deleted = conn.execute(
            "DELETE FROM queue.message WHERE queue_name = 'accepted-changes' AND (body->>'sequence')::int = %s",
            (position,),
        ).rowcount
    assert deleted == 1


def corrupt_delivery(platform: Platform, position: int) -> None:
    """The message of ``position`` arrives broken (its payload lost a required key): dead-lettered."""
    with psycopg.connect(platform.urls.main, autocommit=True) as conn:
        changed = conn.execute(
            """UPDATE queue.message SET body = (body::jsonb - 'accepted_at')::json
               WHERE queue_name = 'accepted-changes' AND (body->>'sequence')::int = %s""",
            (position,),
        ).rowcount
    assert changed == 1


def test_lost_and_dead_lettered_deliveries_are_fetched_from_the_export_stream_and_progress_reaches_the_head(
    deployment: Deployment, deployment_settings: Settings
) -> None:
    platform = deployment.platform
    for n in range(1, 5):
        platform.decisions.decide(create(n), TENANT, CATALOG)  # 3 events each: item, listing, mapping
    run_stage(platform, "relay", Budget(batches=10))
    lose_delivery(platform, 1)  # the first item: its listing mapping parks behind it
    corrupt_delivery(platform, 7)

    with consumer(deployment, deployment_settings) as product:
        applied = run_stage(product, "apply", Budget(batches=5))
        assert applied.counts.get("dead_lettered SCHEMA_INVALID") == 1
        (stuck,) = product_reports.all_stream_progress(product.operator_db)
        assert stuck.applied_position == 0
        assert stuck.parked_count >= 1
        assert stuck.gap_opened_at is not None

        closed = run_stage(product, "gaps", Budget(batches=1))

        assert closed.taken == 1
        assert closed.counts["advanced"] == 12
        (progress,) = product_reports.all_stream_progress(product.operator_db)
        assert (progress.applied_position, progress.parked_count, progress.gap_opened_at) == (12, 0, None)
        # Nothing left to do: the pipeline (gaps included) is drained.
        assert not product.gap_closer.has_work()
        # The durable position goes to resolver retention control once, then nothing is left.
        assert run_stage(product, "progress").taken == 1
        assert set(drain(product).taken.values()) == {0}


def test_export_stream_serves_the_committed_events_in_position_order_with_the_head(
    deployment: Deployment,
) -> None:
    platform = deployment.platform
    for n in range(1, 3):
        platform.decisions.decide(create(n), TENANT, CATALOG)
    with httpx.Client(base_url=deployment.export_url) as http:
        bearer = {"Authorization": f"Bearer {token(http, deployment.product_client)}"}
        page = http.get(
            "/v1/exports/events",
            params={"after": 2, "history_epoch": deployment.history_epoch, "limit": 3},
            headers=bearer,
        )
    assert page.status_code == 200, page.text
    body = page.json()
    assert [e["sequence"] for e in body["events"]] == [3, 4, 5]
    assert (body["head"], body["after"], body["next_after"]) == (6, 2, 5)
    assert {(e["tenant_id"], e["catalog_id"]) for e in body["events"]} == {(TENANT, CATALOG)}


@pytest.mark.parametrize(
    ("case", "status", "code"),
    [
        ("no token", 401, "INVALID_TOKEN"),
        ("collector token without exports:read", 403, "MISSING_SCOPE"),
        ("another catalog", 403, "TENANT_SCOPE_DENIED"),
        ("unknown history epoch", 404, "NOT_FOUND"),
        ("limit above 1000", 422, "VALIDATION_FAILED"),
        ("negative after", 422, "VALIDATION_FAILED"),
    ],
)
def test_export_stream_error_rows(deployment: Deployment, case: str, status: int, code: str) -> None:
    params: dict[str, str | int] = {"after": 0, "history_epoch": deployment.history_epoch}
    with httpx.Client(base_url=deployment.export_url) as http:
        headers = {"Authorization": f"Bearer {token(http, deployment.product_client)}"}
        if case == "no token":
            headers = {}
        elif case == "collector token without exports:read":
            headers = {"Authorization": f"Bearer {token(http, deployment.collector_client)}"}
        elif case == "another catalog":
            params["catalog_id"] = "cat_other"
        elif case == "unknown history epoch":
            params["history_epoch"] = "hep_unknown"
        elif case == "limit above 1000":
            params["limit"] = 1001
        else:
            params["after"] = -1
        response = http.get("/v1/exports/events", params=params, headers=headers)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code

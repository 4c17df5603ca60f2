"""The item list and item detail are ``async`` routes reading on the server's event loop
(``Database.read_row_async``): they answer as before, their connections are a pool of the
server's loop (``<application_name>-async`` in pg_stat_activity), and the app's lifespan closes that pool when the
server stops, leaving the sync pool to its owner."""

from __future__ import annotations

import inspect
import time
from pathlib import Path

import httpx
import psycopg

from prw_api.product import create_app
from prw_api.product.routes import items
from prw_api.server import BackgroundServer
from prw_platform.config import Settings
from prw_platform.db import roles
from prw_platform.db.database import Database
from tests.e2e.product.catalog import Catalog
from tests.e2e.product.conftest import served_catalog

APPLICATION = "prw-e2e-loop-reads"


def _backends(url: str, application_name: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application_name,)
        ).fetchone()
    return int(row[0]) if row else 0


def test_the_hot_routes_are_coroutines() -> None:
    # A sync route pays a hop to a worker thread per request (bench/README.md has its CPU cost).
    assert inspect.iscoroutinefunction(items.list_items)
    assert inspect.iscoroutinefunction(items.get_item)


def test_list_and_detail_read_on_a_pool_of_the_servers_loop_which_the_server_closes(
    product_api_db_url: str, catalog: Catalog, tmp_path: Path
) -> None:
    with Database(product_api_db_url, role=roles.PRODUCT_APP, max_size=2, application_name=APPLICATION) as db:
        app = create_app(Settings(data_dir=tmp_path), served_catalog(db))
        with BackgroundServer(app) as server, httpx.Client(base_url=server.url, timeout=10) as http:
            page = http.get("/v1/items", params={"limit": 2})
            assert page.status_code == 200, page.text
            first = page.json()["items"][0]["item"]
            detail = http.get(f"/v1/items/{first}")
            assert detail.status_code == 200, detail.text
            assert (
                http.get(f"/v1/items/{first}", headers={"If-None-Match": detail.headers["ETag"]}).status_code
                == 304
            )
            assert _backends(product_api_db_url, f"{APPLICATION}-async") >= 1
        deadline = time.monotonic() + 60  # a bound for a loaded machine, not a timing
        while _backends(product_api_db_url, f"{APPLICATION}-async") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _backends(product_api_db_url, f"{APPLICATION}-async") == 0
        # The sync pool is its owner's to close: still there, still answering.
        assert _backends(product_api_db_url, APPLICATION) >= 1
        assert db.read_row("SELECT 1 AS one", {}, tenant_id=None) == {"one": 1}

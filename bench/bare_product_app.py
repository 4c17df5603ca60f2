"""The baseline of ``bench_product_api.py``: a bare FastAPI app over psycopg, served by uvicorn with the same number
of worker processes as ``prw serve product``, reading the same ``product.public_item`` rows.

Each route does the least a public read of the same shape must do: one primary-key SELECT on a pooled
connection (``GET /items/{id}``), or one filtered keyset SELECT of a page (``GET /items?brand=&capacity=``), and
return the stored JSON. No release pointer, no listings, no tenant scoping, no cursor, no validation, no
serializer: what the platform adds on top is what the ratio measures.

    BENCH_DATABASE_URL=... uvicorn bare_product_app:create_app --factory --workers 2 --app-dir bench
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

_ITEM = "SELECT item_id, fields FROM product.public_item WHERE tenant_id = %s AND catalog_id = %s AND generation = 1 AND item_id = %s"
_PAGE = """SELECT item_id, fields FROM product.public_item
            WHERE tenant_id = %s AND catalog_id = %s AND generation = 1 AND lower(fields->>'brand') = lower(%s)
              AND fields->'attributes'->'storage:capacity'->>'value' = %s
            ORDER BY item_id LIMIT 20"""


def create_app() -> FastAPI:
    tenant, catalog = os.environ["BENCH_TENANT_ID"], os.environ["BENCH_CATALOG_ID"]
    pool = ConnectionPool(
        os.environ["BENCH_DATABASE_URL"],
        min_size=1,
        max_size=10,
        open=False,
        kwargs={"autocommit": True, "row_factory": dict_row},
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool.open(wait=True)
        try:
            yield
        finally:
            pool.close()

    app = FastAPI(lifespan=lifespan)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "alive"}

    @app.get("/items/{item_id}")
    def item(item_id: str) -> dict[str, Any]:
        with pool.connection() as conn:
            row = conn.execute(_ITEM, (tenant, catalog, item_id)).fetchone()
        if row is None:
            raise HTTPException(404)
        return row

    @app.get("/items")
    def items(brand: str, capacity: str) -> dict[str, Any]:
        with pool.connection() as conn:
            rows = conn.execute(_PAGE, (tenant, catalog, brand, capacity)).fetchall()
        return {"items": rows}

    return app

"""The baseline of ``bench_intake.py``: a bare FastAPI app over psycopg, served by uvicorn with the same number of
worker processes as ``prw serve intake``, on the same database server.

Each route does the least the platform's route of the same shape must do: parse the JSON body, one INSERT and
COMMIT on a pooled connection (``POST /captures``, ``POST /uploads``), or write the bytes to a file with fsync and
record them (``PUT /uploads/{id}``). No authentication, no idempotency lookup, no receipt, no job, no queue, no
tenant scoping: what the platform adds on top is what the ratio measures.

    BENCH_DATABASE_URL=... uvicorn bare_intake_app:create_app --factory --workers 2 --app-dir bench
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from psycopg_pool import ConnectionPool
from starlette.concurrency import run_in_threadpool

TABLES = (
    "CREATE TABLE IF NOT EXISTS public.bare_capture"
    " (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, idempotency_key text UNIQUE, body jsonb)",
    "CREATE TABLE IF NOT EXISTS public.bare_upload"
    " (upload_id text PRIMARY KEY, sha256 text, bytes bigint, stored boolean NOT NULL DEFAULT false)",
)


def create_tables(conninfo: str) -> None:
    """Called once by the benchmark before the server starts."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        for statement in TABLES:
            conn.execute(statement)


def create_app() -> FastAPI:
    pool = ConnectionPool(os.environ["BENCH_DATABASE_URL"], min_size=1, max_size=10, open=False)
    store = Path(os.environ["BENCH_STORE_DIR"])

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

    @app.post("/captures", status_code=202)
    def capture(request_body: dict[str, Any], request: Request) -> dict[str, str]:
        key = request.headers.get("idempotency-key")
        with pool.connection() as conn:  # commits when the block ends
            conn.execute(
                "INSERT INTO public.bare_capture (idempotency_key, body) VALUES (%s, %s)",
                (key, json.dumps(request_body)),
            )
        return {"status": "accepted"}

    @app.post("/uploads", status_code=201)
    def declare(request_body: dict[str, Any]) -> dict[str, Any]:
        upload_id = uuid.uuid4().hex
        with pool.connection() as conn:
            conn.execute(
                "INSERT INTO public.bare_upload (upload_id, sha256, bytes) VALUES (%s, %s, %s)",
                (upload_id, request_body["sha256"], request_body["bytes"]),
            )
        return {"target": {"method": "PUT", "url": f"/uploads/{upload_id}", "headers": {}}}

    @app.put("/uploads/{upload_id}", status_code=201)
    async def put_bytes(upload_id: str, request: Request) -> dict[str, str]:
        data = await request.body()

        def store_bytes() -> None:
            with (store / upload_id).open("wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            with pool.connection() as conn:
                conn.execute("UPDATE public.bare_upload SET stored = true WHERE upload_id = %s", (upload_id,))

        await run_in_threadpool(store_bytes)
        return {"status": "stored"}

    return app

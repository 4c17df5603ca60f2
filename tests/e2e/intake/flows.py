"""What a collector does over HTTP, step by step (docs/collectors.md shows the same requests with curl)."""

from __future__ import annotations

import hashlib
from typing import Any

import httpx

from tests.e2e.intake.conftest import Collector
from tests.integration.intake.helpers import PAGE, SOURCE, WORKER

KEY = f"{WORKER}:p5-1t-hs:2026-10-10T03:31:55Z"


def declare(collector: Collector, data: bytes = PAGE, **overrides: Any) -> httpx.Response:
    body: dict[str, Any] = {
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "media_type": "text/html",
        "source_id": SOURCE,
    }
    body.update(overrides)
    return collector.http.post("/v1/artifacts/uploads", json=body, headers=collector.headers)


def put_bytes(
    collector: Collector, url: str, data: bytes, headers: dict[str, str] | None = None
) -> httpx.Response:
    return collector.http.put(url, content=data, headers={**collector.headers, **(headers or {})})


def upload(collector: Collector, data: bytes = PAGE) -> str:
    """Declare and PUT; the artifact's ref."""
    declared = declare(collector, data)
    assert declared.status_code in (200, 201), declared.text
    body = declared.json()
    if body["status"] == "pending":
        stored = put_bytes(collector, body["target"]["url"], data, body["target"]["headers"])
        assert stored.status_code == 200, stored.text
    ref: str = body["ref"]
    return ref


def capture(ref: str, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schema_version": "capture/1",
        "source_id": SOURCE,
        "native_record_id": "p5-1t-hs",
        "url": "https://lumen.example/p/p5-1t-hs",
        "observed_at": "2026-10-10T03:31:55Z",
        "artifacts": [{"ref": ref}],
    }
    body.update(overrides)
    return body


def submit(collector: Collector, body: dict[str, Any], key: str | None = KEY) -> httpx.Response:
    headers = dict(collector.headers)
    if key is not None:
        headers["Idempotency-Key"] = key
    return collector.http.post("/v1/captures", json=body, headers=headers)


def error_of(response: httpx.Response) -> tuple[int, str, bool]:
    """(status, code, retryable) of the platform's error body ``{"error": {"code", "message", "retryable"}}``."""
    error = response.json()["error"]
    assert set(error) == {"code", "message", "retryable"}
    return response.status_code, error["code"], error["retryable"]

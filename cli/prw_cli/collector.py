"""A small collector over the intake HTTP API (docs/collectors.md): token, declare, streamed upload, capture.

``prw demo`` plays a collector with it; the end-to-end tests use it too. It speaks HTTP only: it knows nothing of
the platform's internals.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from types import TracebackType

import httpx


@dataclass(frozen=True, slots=True)
class Submitted:
    """One POST /v1/captures: the HTTP status (202 stored, 200 idempotent replay) and the receipt."""

    status: int
    receipt_id: str
    capture_id: str
    receipt_status: str
    upload: str  # "uploaded" or "already_stored"


class IntakeError(RuntimeError):
    def __init__(self, response: httpx.Response) -> None:
        body = (
            response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        )
        error = body.get("error", body)
        self.status = response.status_code
        self.code = str(error.get("code") or error.get("error") or response.status_code)
        super().__init__(f"{response.request.method} {response.request.url.path}: {self.status} {self.code}")


class Collector:
    def __init__(
        self, base_url: str, client_id: str, client_secret: str, *, worker_id: str, timeout: float = 15.0
    ) -> None:
        self._http = httpx.Client(base_url=base_url, timeout=timeout)
        self._client_id = client_id
        self._client_secret = client_secret
        self.worker_id = worker_id
        self._token: str | None = None

    def __enter__(self) -> Collector:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._http.close()

    def token(self) -> str:
        if self._token is None:
            response = self._http.post(
                "/v1/oauth/token",
                data={"grant_type": "client_credentials"},
                auth=(self._client_id, self._client_secret),
            )
            _check(response)
            self._token = str(response.json()["access_token"])
        return self._token

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}"}

    def upload(self, source_id: str, data: bytes, media_type: str) -> tuple[str, str]:
        """Declare the artifact and PUT its bytes unless already stored; returns (sha256, how)."""
        sha256 = hashlib.sha256(data).hexdigest()
        declared = self._http.post(
            "/v1/artifacts/uploads",
            headers=self._auth(),
            json={"sha256": sha256, "bytes": len(data), "media_type": media_type, "source_id": source_id},
        )
        _check(declared)
        body = declared.json()
        if body.get("status") == "already_stored":
            return sha256, "already_stored"
        target = body["target"]
        put = self._http.request(
            target["method"], target["url"], headers={**self._auth(), **target["headers"]}, content=data
        )
        _check(put)
        return sha256, "uploaded"

    def submit(
        self,
        *,
        source_id: str,
        native_record_id: str,
        observed_at: str,
        data: bytes,
        media_type: str = "text/html",
        url: str | None = None,
    ) -> Submitted:
        """Upload the page and submit its capture under the idempotency key worker:record:observed_at."""
        sha256, how = self.upload(source_id, data, media_type)
        capture: dict[str, object] = {
            "schema_version": "capture/1",
            "source_id": source_id,
            "native_record_id": native_record_id,
            "observed_at": observed_at,
            "artifacts": [{"sha256": sha256}],
        }
        if url:
            capture["url"] = url
        response = self._http.post(
            "/v1/captures",
            headers={**self._auth(), "Idempotency-Key": f"{self.worker_id}:{native_record_id}:{observed_at}"},
            json=capture,
        )
        _check(response)
        receipt = response.json()
        return Submitted(
            status=response.status_code,
            receipt_id=str(receipt["receipt_id"]),
            capture_id=str(receipt["capture_id"]),
            receipt_status=str(receipt["status"]),
            upload=how,
        )


def _check(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise IntakeError(response)

"""``CollectorClient``: one collector instance's HTTP conversation with intake (docs/collectors.md): token,
register, heartbeat, declare and upload, capture, receipt. Every request goes through one retry loop
(``prw_cli.collect.retry``); a capture keeps its ``Idempotency-Key`` on every attempt, so a retry after a lost
answer is a replay, never a second capture.

It speaks HTTP only and imports nothing of the platform: a collector author can use it as a library.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from prw_cli.collect.errors import IntakeError, transport_kind
from prw_cli.collect.retry import RetryPolicy, is_retryable_status, parse_retry_after

#: Seed 003 client timeouts, seconds: token and register 10, declare 10, PUT 120, capture 15, receipt and
#: heartbeat 5.
TIMEOUTS = {"token": 10.0, "register": 10.0, "declare": 10.0, "put": 120.0, "capture": 15.0}
TIMEOUTS |= {"receipt": 5.0, "heartbeat": 5.0}
CHUNK_BYTES = 64 * 1024
USER_AGENT = "prw-collect/0.1"


@dataclass(frozen=True, slots=True)
class RetryEvent:
    """One failed attempt that will be retried: the step, the attempt that failed, why, and the wait."""

    step: str
    attempt: int
    reason: str  # an HTTP status and code ("503 STORAGE_UNAVAILABLE") or a network failure ("read_error")
    delay: float


@dataclass(frozen=True, slots=True)
class Registration:
    instance_id: str
    lease_seconds: float
    heartbeat_url: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Uploaded:
    sha256: str
    ref: str
    how: str  # "uploaded", "presigned" or "already_stored"
    attempts: int


@dataclass(frozen=True, slots=True)
class Captured:
    """A POST /v1/captures: 202 stored, or 200 the existing receipt (a replay of the same key and body)."""

    status: int
    receipt_id: str
    capture_id: str
    receipt_status: str
    idempotency_key: str
    attempts: int


def capture_key(source_id: str, native_record_id: str, sha256: str) -> str:
    """The Idempotency-Key of a capture, from what it is: the same source, record and bytes always give the same
    key, so a rerun (or a retry after a lost answer) replays instead of storing twice. Intake takes 1 to 255
    visible ASCII characters; a record id that does not fit is hashed."""
    key = f"{source_id}:{native_record_id}:{sha256}"
    if len(key) <= 255 and key.isascii() and key.isprintable() and " " not in key:
        return key
    record = hashlib.sha256(native_record_id.encode()).hexdigest()[:32]
    return f"{source_id}:h{record}:{sha256}"


def file_sha256(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK_BYTES):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _file_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK_BYTES):
            yield chunk


class CollectorClient:
    """``with CollectorClient(url, client_id, secret) as client: client.upload(...); client.capture(...)``.

    ``retry`` sets the backoff (its ``sleep`` and ``random`` are injectable); ``on_retry`` sees every retried
    attempt; ``transport`` is an httpx transport (tests pass ``httpx.MockTransport``); ``timeout`` replaces the
    seed's per-step timeouts by one. Thread-safe: the heartbeat
    thread shares the client and its token."""

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        retry: RetryPolicy | None = None,
        on_retry: Callable[[RetryEvent], None] | None = None,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        timeout: float | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url, transport=transport, headers={"User-Agent": USER_AGENT}
        )
        self._client_id = client_id
        self._client_secret = client_secret
        self.retry = retry or RetryPolicy()
        # if_heartbeat: "Best effort: retry once after 5 s, then skip to the next interval."
        self.heartbeat_retry = RetryPolicy(5.0, 5.0, 2, sleep=self.retry.sleep, random=lambda: 1.0)
        self.on_retry = on_retry
        self._clock = clock
        # The seed's per-step client timeouts, or one for every step (a benchmark under load).
        self.timeouts = TIMEOUTS if timeout is None else dict.fromkeys(TIMEOUTS, timeout)
        self._lock = threading.Lock()
        self._token: str | None = None
        self._token_renew_at = 0.0
        self.claims: dict[str, Any] = {}

    def __enter__(self) -> CollectorClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- token ---------------------------------------------------------------------------------------------------

    def token(self) -> str:
        """A bearer token, fetched again before it expires (there is no refresh token): renewed once 80 % of its
        ``expires_in`` has passed, so no request leaves with a token about to expire."""
        with self._lock:
            if self._token is None or self._clock() >= self._token_renew_at:
                response, _ = self._send(
                    "token",
                    "POST",
                    "/v1/oauth/token",
                    bearer=False,
                    data={"grant_type": "client_credentials"},
                    auth=(self._client_id, self._client_secret),
                )
                body = response.json()
                self._token = str(body["access_token"])
                self._token_renew_at = self._clock() + 0.8 * float(body.get("expires_in", 300))
                self.claims = _jwt_claims(self._token)
            return self._token

    @property
    def instance_id(self) -> str:
        self.token()
        return str(self.claims.get("sub", ""))

    @property
    def worker_id(self) -> str:
        self.token()
        return str(self.claims.get("worker", ""))

    # -- registration and heartbeat ------------------------------------------------------------------------------

    def register(
        self,
        targets: list[str],
        *,
        version: str = "0.1.0",
        runtime: str = "local-process",
        runtime_kind: str = "scheduled",
        capabilities: tuple[str, ...] = ("html",),
        **extra: Any,
    ) -> Registration | None:
        """POST /v1/workers/register (if_collector_bootstrap): an upsert keyed by the instance, answering its lease.
        None when the server has no such route (404): registration is skipped, the collector still submits."""
        body = {
            "worker_id": self.worker_id,
            "instance_id": self.instance_id,
            "version": version,
            "runtime": runtime,
            "runtime_kind": runtime_kind,
            "targets": targets,
            "capabilities": list(capabilities),
            **extra,
        }
        try:
            response, _ = self._send("register", "POST", "/v1/workers/register", json=body)
        except IntakeError as error:
            if error.status == 404:
                return None
            raise
        answer = response.json()
        return Registration(
            instance_id=str(answer.get("instance_id", self.instance_id)),
            lease_seconds=float(answer.get("lease_seconds", 90)),
            heartbeat_url=str(answer.get("heartbeat_url", f"/v1/workers/{self.instance_id}/heartbeat")),
            body=answer,
        )

    def heartbeat(
        self, run: dict[str, Any] | None = None, *, at: str, heartbeat_url: str | None = None
    ) -> dict[str, Any] | None:
        """POST /v1/workers/{id}/heartbeat (if_heartbeat): liveness, or with a run report. ``at`` keys it with the
        instance (a duplicate is recorded once), so send it with sub-second precision. Best effort: one retry
        after 5 s. None when the server has no such route or instance (404). CredentialRevoked propagates."""
        url = heartbeat_url or f"/v1/workers/{self.instance_id}/heartbeat"
        body: dict[str, Any] = {"instance_id": self.instance_id, "at": at}
        if run is not None:
            body["run"] = run
        try:
            response, _ = self._send("heartbeat", "POST", url, json=body, policy=self.heartbeat_retry)
        except IntakeError as error:
            if error.status == 404:
                return None
            raise
        answer: dict[str, Any] = response.json()
        return answer

    # -- artifacts, captures, receipts ---------------------------------------------------------------------------

    def upload(
        self, source_id: str, data: bytes | Path, media_type: str, *, presigned: bool = True
    ) -> Uploaded:
        """Declare the artifact, then PUT its bytes (streamed from a file) unless intake already stores them.
        With ``presigned`` the declare asks for a direct object-store URL; intake answers one when its store can
        presign (S3, R2), and its own streamed target otherwise."""
        if isinstance(data, Path):
            sha256, size = file_sha256(data)
            path = data

            def content() -> Iterator[bytes] | bytes:
                return _file_chunks(path)
        else:
            sha256, size = hashlib.sha256(data).hexdigest(), len(data)
            payload = data

            def content() -> Iterator[bytes] | bytes:
                return payload

        declaration: dict[str, Any] = {
            "sha256": sha256,
            "bytes": size,
            "media_type": media_type,
            "source_id": source_id,
        }
        if presigned:
            declaration["mode"] = "presigned"
        declared, attempts = self._send("declare", "POST", "/v1/artifacts/uploads", json=declaration)
        body = declared.json()
        if body.get("status") == "already_stored":
            return Uploaded(sha256, str(body["ref"]), "already_stored", attempts)
        target = body["target"]
        headers = {str(k): str(v) for k, v in target.get("headers", {}).items()}
        url = str(target["url"])
        # if_artifact_upload: intake's own target is PUT /v1/artifacts/uploads/{upload_id} with the bearer token;
        # any other URL is a presigned capability, sent exactly the headers given and no token.
        streamed_path = f"/v1/artifacts/uploads/{body['upload_id']}"
        if urlsplit(url).path.endswith(streamed_path):
            _, attempts = self._send("put", target["method"], streamed_path, headers=headers, content=content)
            return Uploaded(sha256, str(body["ref"]), "uploaded", attempts)
        _, attempts = self._send(
            "put", target["method"], url, headers=headers, content=content, bearer=False, absolute=True
        )
        return Uploaded(sha256, str(body["ref"]), "presigned", attempts)

    def capture(
        self,
        *,
        source_id: str,
        native_record_id: str,
        observed_at: str,
        artifacts: list[str],
        url: str | None = None,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Captured:
        """POST /v1/captures citing stored artifacts (by sha256). The key defaults to ``capture_key`` of the
        source, record and first artifact; every retry sends the same key and body."""
        body: dict[str, Any] = {
            "schema_version": "capture/1",
            "source_id": source_id,
            "native_record_id": native_record_id,
            "observed_at": observed_at,
            "artifacts": [{"sha256": sha256} for sha256 in artifacts],
            **fields,
        }
        if url:
            body["url"] = url
        key = idempotency_key or capture_key(source_id, native_record_id, artifacts[0])
        response, attempts = self._send(
            "capture", "POST", "/v1/captures", json=body, headers={"Idempotency-Key": key}
        )
        receipt = response.json()
        return Captured(
            status=response.status_code,
            receipt_id=str(receipt["receipt_id"]),
            capture_id=str(receipt["capture_id"]),
            receipt_status=str(receipt["status"]),
            idempotency_key=key,
            attempts=attempts,
        )

    def receipt(self, receipt_id: str) -> dict[str, Any]:
        """GET /v1/receipts/{id} (if_receipt_get): a receipt of this stable instance."""
        response, _ = self._send("receipt", "GET", f"/v1/receipts/{receipt_id}")
        answer: dict[str, Any] = response.json()
        return answer

    # -- the one retry loop --------------------------------------------------------------------------------------

    def _send(
        self,
        step: str,
        method: str,
        url: str,
        *,
        bearer: bool = True,
        absolute: bool = False,
        headers: dict[str, str] | None = None,
        content: Callable[[], Iterator[bytes] | bytes] | None = None,
        policy: RetryPolicy | None = None,
        **kwargs: Any,
    ) -> tuple[httpx.Response, int]:
        """Send until success, a refusal that must not be retried, or the policy's last attempt; returns the
        response and the number of attempts. Retries 408, 429, 5xx and network failures, waiting the policy's
        full-jitter backoff or ``Retry-After`` when longer; never another 4xx."""
        policy = policy or self.retry
        target = url if absolute else urljoin(self.base_url + "/", url.lstrip("/"))
        attempt = 0
        while True:
            attempt += 1
            request_headers = dict(headers or {})
            if bearer:
                request_headers["Authorization"] = f"Bearer {self.token()}"
            body = {"content": content()} if content is not None else {}
            retry_after: float | None = None
            try:
                response = self._http.request(
                    method, target, headers=request_headers, timeout=self.timeouts[step], **body, **kwargs
                )
            except httpx.TransportError as error:
                reason = transport_kind(error)
                if attempt >= policy.attempts:
                    raise IntakeError(step, None, reason, str(error), attempts=attempt) from error
            else:
                if response.status_code < 400:
                    return response, attempt
                failure = IntakeError.from_response(step, response, attempt)
                if not is_retryable_status(response.status_code) or attempt >= policy.attempts:
                    raise failure
                reason = f"{failure.status} {failure.code}"
                retry_after = parse_retry_after(response.headers.get("retry-after"))
            delay = policy.delay(attempt, retry_after)
            if self.on_retry is not None:
                self.on_retry(RetryEvent(step, attempt, reason, delay))
            policy.sleep(delay)


def _jwt_claims(token: str) -> dict[str, Any]:
    """The token's claims, read without verifying (intake verifies; the collector only learns its binding:
    ``sub`` the stable instance, ``worker``, ``sources``)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}
    return claims if isinstance(claims, dict) else {}


__all__ = [
    "Captured",
    "CollectorClient",
    "Registration",
    "RetryEvent",
    "Uploaded",
    "capture_key",
    "file_sha256",
]

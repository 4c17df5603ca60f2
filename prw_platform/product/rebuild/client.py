"""The product side's client of the resolver's export API for a rebuild (seed 003 if_projection_bootstrap), over
HTTP as the product principal (scope exports:read): the product never imports the resolver.

* ``POST /v1/exports/snapshots`` (Idempotency-Key: the same key returns the same export), then
  ``GET /v1/exports/snapshots/{id}`` until ready (202 pending: poll);
* each object through its signed link, checked against the manifest's sha256 and count before anything is loaded;
* ``POST .../lease`` to renew the lease throughout load and catch-up, ``DELETE .../lease`` after the cutover;
* ``GET /v1/exports/events?after=W&lease_id=…&history_epoch=…`` for the retained tail.

The seed's error table decides what a call does: 202 pending → poll; 401 CREDENTIAL_REVOKED, 403
TENANT_SCOPE_DENIED, 410 EXPORT_EXPIRED → do not retry: ``RebuildRefused`` (the rebuild fails clearly, nothing is
swapped; 410 means "request a new export"); 503 UNAVAILABLE (or the network) → retry with exponential backoff and
full jitter (base 1 s, cap 5 min, at most 8 attempts), then ``RebuildRefused`` with the last code. An expired
signed link (410 on an object) is fixed by re-GETting the manifest for fresh links, once.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

import httpx

from prw_platform.contracts import StreamKey
from prw_platform.product.gaps import ExportedPage, ExportUnavailable, HttpExportSource

#: if_projection_bootstrap Retries: "Exponential backoff with full jitter (base 1 s, cap 5 min, max 8 attempts)".
BACKOFF_BASE_SECONDS: Final = 1.0
BACKOFF_CAP_SECONDS: Final = 300.0
MAX_ATTEMPTS: Final = 8


class RebuildRefused(Exception):
    """The export API refused the rebuild for good (or ran out of retries): nothing is swapped."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class ManifestObject:
    aggregate: str
    sha256: str
    size: int
    count: int
    url: str


@dataclass(frozen=True, slots=True)
class Manifest:
    export_id: str
    tenant_id: str
    catalog_id: str
    history_epoch: str
    #: W: the committed cursor the snapshot was read at (the shadow generation's starting position).
    position: int
    lease_id: str
    objects: tuple[ManifestObject, ...]


class SnapshotSource(Protocol):
    """What a rebuild needs of the export API (``HttpSnapshotSource``)."""

    def request_export(self, tenant_id: str, catalog_id: str, idempotency_key: str) -> str: ...

    def manifest(self, export_id: str) -> Manifest | None:
        """The ready manifest, None while pending."""
        ...

    def object_data(self, export_id: str, obj: ManifestObject) -> bytes:
        """The object's bytes, verified against the manifest's sha256 (``RebuildRefused`` CHECKSUM_MISMATCH)."""
        ...

    def renew_lease(self, export_id: str) -> None: ...

    def release_lease(self, export_id: str) -> None: ...

    def events(self, stream: StreamKey, after: int, limit: int, lease_id: str) -> ExportedPage: ...


def full_jitter(attempt: int, base: float = BACKOFF_BASE_SECONDS, cap: float = BACKOFF_CAP_SECONDS) -> float:
    """Seconds to wait before attempt ``attempt + 1`` (AWS's "full jitter": uniform in [0, min(cap, base·2^n)])."""
    return random.uniform(0.0, min(cap, base * (2 ** max(attempt - 1, 0))))


class HttpSnapshotSource:
    """``SnapshotSource`` over HTTP, sharing the export stream client's credentials and token
    (``gaps.HttpExportSource``)."""

    def __init__(
        self,
        export: HttpExportSource,
        *,
        max_attempts: int = MAX_ATTEMPTS,
        backoff: Callable[[int], float] = full_jitter,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._export = export
        self._max_attempts = max_attempts
        self._backoff = backoff
        self._sleep = sleep

    # -- the calls ----------------------------------------------------------------------------------------------
    def request_export(self, tenant_id: str, catalog_id: str, idempotency_key: str) -> str:
        # The scope is the token's; the body names it so that a client of another catalog is refused (403
        # TENANT_SCOPE_DENIED) instead of exporting what it is bound to.
        response = self._call(
            "POST",
            "/v1/exports/snapshots",
            json={"tenant_id": tenant_id, "catalog_id": catalog_id},
            headers={"Idempotency-Key": idempotency_key},
        )
        return str(response.json()["export_id"])

    def manifest(self, export_id: str) -> Manifest | None:
        response = self._call("GET", f"/v1/exports/snapshots/{export_id}")
        if response.status_code == 202:
            return None
        body = response.json()
        return Manifest(
            export_id=body["export_id"],
            tenant_id=body["tenant_id"],
            catalog_id=body["catalog_id"],
            history_epoch=body["history_epoch"],
            position=int(body["position"]),
            lease_id=body["lease_id"],
            objects=tuple(
                ManifestObject(o["aggregate"], o["sha256"], int(o["size"]), int(o["count"]), o["url"])
                for o in body["objects"]
            ),
        )

    def object_data(self, export_id: str, obj: ManifestObject) -> bytes:
        url = obj.url
        for fresh_links in (False, True):
            if fresh_links:
                # if_projection_bootstrap Retries: "An expired signed URL is fixed by re-GETting the manifest."
                manifest = self.manifest(export_id)
                if manifest is None:
                    raise RebuildRefused(f"export {export_id} is pending again", code="EXPORT_EXPIRED")
                url = next(o.url for o in manifest.objects if o.aggregate == obj.aggregate)
            response = self._call("GET", url, bearer=False, allow={410})
            if response.status_code == 410:
                continue
            data = response.content
            digest = hashlib.sha256(data).hexdigest()
            if digest != obj.sha256 or len(data) != obj.size:
                raise RebuildRefused(
                    f"object {obj.aggregate} of {export_id}: sha256 {digest} ({len(data)} bytes) does not match "
                    f"the manifest's {obj.sha256} ({obj.size} bytes)",
                    code="CHECKSUM_MISMATCH",
                )
            return data
        raise RebuildRefused(
            f"object {obj.aggregate} of {export_id}: links keep expiring", code="EXPORT_EXPIRED"
        )

    def renew_lease(self, export_id: str) -> None:
        self._call("POST", f"/v1/exports/snapshots/{export_id}/lease")

    def release_lease(self, export_id: str) -> None:
        self._call("DELETE", f"/v1/exports/snapshots/{export_id}/lease")

    def events(self, stream: StreamKey, after: int, limit: int, lease_id: str) -> ExportedPage:
        params: dict[str, str | int] = {
            "after": after,
            "history_epoch": stream.history_epoch,
            "limit": limit,
            "catalog_id": stream.catalog_id,
            "lease_id": lease_id,
        }
        body = self._call("GET", "/v1/exports/events", params=params).json()
        if body.get("tenant_id") != stream.tenant_id:
            raise RebuildRefused("the export client is bound to another tenant", code="TENANT_SCOPE_DENIED")
        return ExportedPage(head=int(body["head"]), events=tuple(body["events"]))

    # -- one call, with the seed's retry rules --------------------------------------------------------------------
    def _call(
        self,
        method: str,
        url: str,
        *,
        bearer: bool = True,
        allow: frozenset[int] | set[int] = frozenset(),
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        last = "UNAVAILABLE"
        refreshed = False
        attempt = 0
        while attempt < self._max_attempts:
            attempt += 1
            sent = dict(headers or {})
            try:
                if bearer:
                    sent["Authorization"] = f"Bearer {self._export.access_token(refresh=refreshed)}"
                response = self._export.client.request(method, url, headers=sent, **kwargs)
            except (httpx.HTTPError, ExportUnavailable) as exc:
                code = getattr(exc, "code", "UNAVAILABLE")
                if code not in ("UNAVAILABLE",):
                    raise RebuildRefused(f"{method} {url}: {exc}", code=code) from exc
                last = "UNAVAILABLE"
                self._wait(attempt)
                continue
            status = response.status_code
            if status < 300 or status in allow:
                return response
            code = _error_code(response)
            if status == 401 and bearer and not refreshed and code != "CREDENTIAL_REVOKED":
                refreshed = True  # an expired token: one fresh token, then the answer stands
                attempt -= 1
                continue
            if status in (429, 503) or status >= 500:
                last = code
                self._wait(attempt)
                continue
            raise RebuildRefused(f"{method} {url} answered {status}: {response.text[:300]}", code=code)
        raise RebuildRefused(f"{method} {url}: still {last} after {self._max_attempts} attempts", code=last)

    def _wait(self, attempt: int) -> None:
        if attempt < self._max_attempts:
            self._sleep(self._backoff(attempt))


def _error_code(response: httpx.Response) -> str:
    try:
        error = response.json()["error"]
        # The token endpoint answers as OAuth2 does ({"error": "invalid_client"}), the API with its error body.
        return error.upper() if isinstance(error, str) else str(error["code"])
    except (ValueError, KeyError, TypeError):
        return f"HTTP_{response.status_code}"

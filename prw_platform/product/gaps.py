"""Gap closure (if_accepted_change: a consumer fetches retained events to close the gaps a queue leaves).

A delivery that is lost, or dead-lettered, leaves a hole in a stream: contiguous progress stops before it and
everything depending on it stays parked. The ``gaps`` stage fetches the stream from the resolver's export stream
(``GET /v1/exports/events``, over HTTP as the product principal with scope exports:read: the product side never
imports the resolver) from the contiguous position on, and applies what it gets with the same dedupe, revision and
parking rules (``consumer.apply.apply_events``, one product transaction per page): the positions the stream
already has come back as duplicates, the missing ones apply and release what waited for them. It stops at the
head the resolver reported, so contiguous progress reaches the head once the resolver has it.

A stream is due when
* a gap has been open longer than ``fetch_after`` (the oldest delivery waiting behind it arrived that long ago);
* a delivery of the stream was dead-lettered (the apply stage tells this closer, in the same process);
* its head was last checked ``head_check`` ago (a lost delivery at the tail leaves no delivery behind it to
  show a gap; this closer asks the resolver for the head every so often while it runs in a long-lived process).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

import httpx

from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Database
from prw_platform.product import progress
from prw_platform.product.consumer.apply import apply_events
from prw_platform.product.consumer.outcomes import DeliveryResult, Outcome
from prw_platform.product.errors import RejectedDelivery
from prw_platform.product.events import ProductEvent, parse_delivery
from prw_platform.product.progress import StreamProgress

log = logging.getLogger(__name__)

#: Events asked for per export page (the resolver serves at most 1,000).
EXPORT_PAGE: Final = 500
EXPORTS_READ: Final = "exports:read"


@dataclass(frozen=True, slots=True)
class ExportedPage:
    #: The stream's committed position when the page was read.
    head: int
    #: product.accepted-change.v1 messages after the requested position, in position order.
    events: tuple[dict[str, Any], ...]


class ExportUnavailable(Exception):
    """The export stream could not be read now (network, 5xx, credentials, scope): the gap stays open and the
    next round tries again."""

    def __init__(self, message: str, *, code: str = "UNAVAILABLE") -> None:
        super().__init__(message)
        self.code = code


class ExportSource(Protocol):
    def fetch(self, stream: StreamKey, after: int, limit: int) -> ExportedPage:
        """The committed events of ``stream`` after ``after``. Raises ``ExportUnavailable``."""
        ...


class HttpExportSource:
    """The resolver's export stream over HTTP: an OAuth2 client-credentials token (scope exports:read) from
    ``POST /v1/oauth/token``, then ``GET /v1/exports/events``. A 401 fetches a new token once."""

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)
        self._client_id = client_id
        self._client_secret = client_secret
        self._token: str | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        self._client.close()

    @property
    def client(self) -> httpx.Client:
        """The HTTP client (base URL of the export API), shared with the rebuild's ``HttpSnapshotSource``."""
        return self._client

    def access_token(self, *, refresh: bool = False) -> str:
        """A client-credentials token with scope exports:read (cached; ``refresh`` fetches a new one)."""
        return self._access_token(refresh=refresh)

    def fetch(self, stream: StreamKey, after: int, limit: int) -> ExportedPage:
        params: dict[str, str | int] = {
            "after": after,
            "history_epoch": stream.history_epoch,
            "limit": limit,
            "catalog_id": stream.catalog_id,
        }
        for attempt in (1, 2):
            token = self._access_token(refresh=attempt == 2)
            try:
                response = self._client.get(
                    "/v1/exports/events", params=params, headers={"Authorization": f"Bearer {token}"}
                )
            except httpx.HTTPError as exc:
                raise ExportUnavailable(f"export stream unreachable: {exc}") from exc
            if response.status_code == 401 and attempt == 1:
                continue
            if response.status_code != 200:
                raise ExportUnavailable(
                    f"export stream answered {response.status_code}: {response.text[:300]}",
                    code=_error_code(response),
                )
            body = response.json()
            if body.get("tenant_id") != stream.tenant_id:
                raise ExportUnavailable(
                    "the export client is bound to another tenant", code="TENANT_SCOPE_DENIED"
                )
            return ExportedPage(head=int(body["head"]), events=tuple(body["events"]))
        raise ExportUnavailable("the export stream refused a fresh token", code="INVALID_TOKEN")

    def report_progress(self, stream: StreamKey, consumer: str, position: int) -> int:
        """``POST /v1/exports/progress``: the live consumer's durable position, reported after its commit
        (``retention_report``); the position the resolver acknowledges."""
        body = {
            "history_epoch": stream.history_epoch,
            "catalog_id": stream.catalog_id,
            "consumer": consumer,
            "position": position,
        }
        for attempt in (1, 2):
            token = self._access_token(refresh=attempt == 2)
            try:
                response = self._client.post(
                    "/v1/exports/progress", json=body, headers={"Authorization": f"Bearer {token}"}
                )
            except httpx.HTTPError as exc:
                raise ExportUnavailable(f"retention control unreachable: {exc}") from exc
            if response.status_code == 401 and attempt == 1:
                continue
            if response.status_code != 200:
                raise ExportUnavailable(
                    f"retention control answered {response.status_code}: {response.text[:300]}",
                    code=_error_code(response),
                )
            return int(response.json()["acknowledged_position"])
        raise ExportUnavailable("retention control refused a fresh token", code="INVALID_TOKEN")

    def _access_token(self, *, refresh: bool) -> str:
        with self._lock:
            if self._token is None or refresh:
                try:
                    response = self._client.post(
                        "/v1/oauth/token",
                        data={
                            "grant_type": "client_credentials",
                            "client_id": self._client_id,
                            "client_secret": self._client_secret,
                            "scope": EXPORTS_READ,
                        },
                    )
                except httpx.HTTPError as exc:
                    raise ExportUnavailable(f"token endpoint unreachable: {exc}") from exc
                if response.status_code != 200:
                    code = _error_code(response)
                    raise ExportUnavailable(
                        f"token endpoint answered {response.status_code}: {response.text[:300]}",
                        code="UNAVAILABLE" if response.status_code >= 500 else code,
                    )
                self._token = str(response.json()["access_token"])
            return self._token


def _error_code(response: httpx.Response) -> str:
    try:
        error = response.json()["error"]
        # The token endpoint answers as OAuth2 does ({"error": "invalid_client"}), the API with its error body.
        return error.upper() if isinstance(error, str) else str(error["code"])
    except (ValueError, KeyError, TypeError):
        return f"HTTP_{response.status_code}"


@dataclass(frozen=True, slots=True)
class StreamClosure:
    stream: StreamKey
    #: Contiguous position before and after.
    before: int
    after: int
    #: The resolver's head at the last page.
    head: int | None
    fetched: int
    applied: int
    failed: str | None = None

    @property
    def reached_head(self) -> bool:
        return self.head is not None and self.after >= self.head


def close_gap(
    db: Database, source: ExportSource, stream: StreamKey, *, page: int = EXPORT_PAGE, max_pages: int = 1_000
) -> StreamClosure:
    """Fetch the stream after its contiguous position and apply it, page by page, until the contiguous position
    reaches the head the resolver reports (or stops moving: an event the consumer rejects keeps its gap open, and
    is logged)."""
    start = contiguous = progress.contiguous_position(
        db, stream.tenant_id, stream.catalog_id, stream.history_epoch
    )
    fetched = applied = 0
    head: int | None = None
    for _ in range(max_pages):
        try:
            exported = source.fetch(stream, contiguous, page)
        except ExportUnavailable as unavailable:
            log.warning("gap closure of %s: %s (%s)", stream, unavailable, unavailable.code)
            return StreamClosure(stream, start, contiguous, head, fetched, applied, failed=unavailable.code)
        head = exported.head
        if not exported.events:
            break
        fetched += len(exported.events)
        events: list[ProductEvent] = []
        for message in exported.events:
            try:
                events.append(parse_delivery(message))
            except RejectedDelivery as rejection:
                log.error(
                    "gap closure of %s: exported event rejected %s: %s", stream, rejection.code, rejection
                )
                break
        settled = apply_events(db, events) if events else []
        results = [s for s in settled if isinstance(s, DeliveryResult)]
        applied += sum(1 for r in results if r.outcome is Outcome.APPLIED) + sum(
            len(r.released) for r in results
        )
        through = max((r.contiguous_position or 0 for r in results), default=contiguous)
        if through <= contiguous:
            log.error("gap closure of %s: no progress past position %d", stream, contiguous)
            return StreamClosure(stream, start, contiguous, head, fetched, applied, failed="NO_PROGRESS")
        contiguous = through
        if contiguous >= head:
            break
    return StreamClosure(stream, start, contiguous, head, fetched, applied)


@dataclass(frozen=True, slots=True)
class GapReport:
    closures: tuple[StreamClosure, ...] = ()

    @property
    def streams(self) -> int:
        return len(self.closures)

    @property
    def fetched(self) -> int:
        return sum(c.fetched for c in self.closures)

    @property
    def applied(self) -> int:
        return sum(c.applied for c in self.closures)

    @property
    def advanced(self) -> int:
        return sum(c.after - c.before for c in self.closures)

    @property
    def failed(self) -> int:
        return sum(1 for c in self.closures if c.failed)


@dataclass
class GapCloser:
    """The ``gaps`` stage's service: which streams are due, and closing them (module docstring)."""

    db: Database
    source: ExportSource | None
    #: Every projected stream's progress (the operator read model, across tenants).
    streams: Callable[[], list[StreamProgress]]
    fetch_after: timedelta = timedelta(seconds=30)
    head_check: timedelta = timedelta(seconds=300)
    clock: Clock = utc_now
    #: Builds the source on first use when ``source`` is None (the composition root's lazy HTTP client).
    source_factory: Callable[[], ExportSource | None] | None = None
    _requested: set[tuple[str, str]] = field(default_factory=set)
    _checked: dict[tuple[str, str], datetime] = field(default_factory=dict)
    _started: datetime | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._started = self.clock()

    def _source(self) -> ExportSource | None:
        if self.source is None and self.source_factory is not None:
            self.source = self.source_factory()
            self.source_factory = None
        return self.source

    def request(self, tenant_id: str, catalog_id: str) -> None:
        """A delivery of this stream was dead-lettered: close its gap at the next round, whatever its age."""
        with self._lock:
            self._requested.add((tenant_id, catalog_id))

    def due(self) -> list[StreamProgress]:
        now = self.clock()
        with self._lock:
            requested = set(self._requested)
            checked = dict(self._checked)
        started = self._started or now
        return [
            p
            for p in self.streams()
            if (p.tenant_id, p.catalog_id) in requested
            or (p.gap_opened_at is not None and p.gap_age_seconds(now) >= self.fetch_after.total_seconds())
            or now - checked.get((p.tenant_id, p.catalog_id), started) >= self.head_check
        ]

    def has_work(self) -> bool:
        return self._source() is not None and bool(self.due())

    def run_batch(self, max_streams: int = 10) -> GapReport:
        source = self._source()
        if source is None:
            return GapReport()
        closures = []
        for p in self.due()[:max_streams]:
            key = (p.tenant_id, p.catalog_id)
            closure = close_gap(self.db, source, StreamKey(p.tenant_id, p.catalog_id, p.history_epoch))
            with self._lock:
                self._checked[key] = self.clock()
                if closure.failed is None:
                    self._requested.discard(key)
            closures.append(closure)
        return GapReport(tuple(closures))

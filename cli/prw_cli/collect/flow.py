"""``collect``: a run of one collector instance over local files: register, heartbeat in the background with the
run report, then for every page upload, capture and read its receipt. A page that fails is reported and the run
goes on; revoked credentials stop the run (if_heartbeat: "401 CREDENTIAL_REVOKED — do not retry. Collector must
stop")."""

from __future__ import annotations

import mimetypes
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from prw_cli.collect.client import CollectorClient, Registration, RetryEvent, file_sha256
from prw_cli.collect.errors import CredentialRevoked, IntakeError


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched page on disk and what its capture says about it."""

    path: Path
    native_record_id: str
    observed_at: str
    media_type: str
    url: str | None = None


@dataclass(slots=True)
class PageOutcome:
    page: Page
    sha256: str = ""
    outcome: str = "pending"  # stored, replayed, failed, skipped
    http_status: int | None = None
    receipt_id: str | None = None
    capture_id: str | None = None
    receipt_status: str | None = None
    attempts: int = 0
    error: str | None = None


#: if_receipt_get: "Poll interval ≥ 30 s; prefer heartbeat-time batch checks".
RECEIPT_POLL_INTERVAL_SECONDS = 30.0
#: How long a run keeps polling receipts still ``stored`` after its last page (the seed sets no bound; two
#: minutes is four polls at the seed's interval).
RECEIPT_WAIT_SECONDS = 120.0


@dataclass(frozen=True, slots=True)
class ReceiptPolling:
    """After the pages, read the receipts still ``stored`` again every ``interval`` seconds, all in one round
    (the seed's batch check), until none is left or ``wait`` seconds have passed (0: the one read per page)."""

    interval: float = RECEIPT_POLL_INTERVAL_SECONDS
    wait: float = RECEIPT_WAIT_SECONDS

    def __post_init__(self) -> None:
        if self.interval <= 0 or self.wait < 0:
            raise ValueError("the receipt poll interval must be positive and the wait not negative")


#: if_source_fetch's failure kinds, the only ones a heartbeat's run report counts (``run.failures``).
FETCH_FAILURES = frozenset({"RATE_LIMITED", "UPSTREAM_503", "NOT_FOUND"})


@dataclass
class RunReport:
    """What a run did: pages fetched, captures submitted, failed attempts by kind (intake-side, for the summary)
    and source fetch failures (if_source_fetch kinds, for the heartbeat's run report)."""

    started_at: str
    pages_fetched: int = 0
    captures_submitted: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    fetch_failures: Counter[str] = field(default_factory=Counter)
    outcome: str = "running"  # running, then succeeded, partial, failed or stopped
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fail(self, kind: str) -> None:
        with self.lock:
            self.failures[kind] += 1

    def fetch_failed(self, kind: str) -> None:
        """Count a failed source fetch (a collector that fetches calls it): RATE_LIMITED, UPSTREAM_503, NOT_FOUND."""
        if kind not in FETCH_FAILURES:
            raise ValueError(
                f"{kind!r} is not an if_source_fetch failure ({', '.join(sorted(FETCH_FAILURES))})"
            )
        with self.lock:
            self.fetch_failures[kind] += 1

    def as_run(self, finished_at: str) -> dict[str, Any]:
        """The if_heartbeat run report of the finished run: ``outcome`` succeeded when every page has its capture,
        failed otherwise."""
        with self.lock:
            return {
                "started_at": self.started_at,
                "finished_at": finished_at,
                "outcome": "succeeded" if self.outcome == "succeeded" else "failed",
                "pages_fetched": self.pages_fetched,
                "captures_submitted": self.captures_submitted,
                "failures": dict(self.fetch_failures),
            }


@dataclass
class CollectRun:
    outcomes: list[PageOutcome]
    report: RunReport
    registration: Registration | None
    warnings: list[str]
    stopped: CredentialRevoked | None = None  # revoked credentials: the operator must act
    aborted: IntakeError | None = None  # no token could be had (intake unreachable, refused)

    @property
    def ok(self) -> bool:
        return (
            self.stopped is None
            and self.aborted is None
            and all(o.outcome in ("stored", "replayed") for o in self.outcomes)
        )


def utc_now() -> str:
    """Now, in RFC 3339 UTC with microseconds (a heartbeat's ``at`` is its idempotency key)."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def pages_from(
    paths: Iterable[Path], *, url_base: str | None = None, media_type: str | None = None, glob: str = "*"
) -> list[Page]:
    """One page per file; a directory contributes its files matching ``glob``, recursively, in name order. The
    record id is the file's path relative to the directory given (its name for a file given directly), the
    capture's ``observed_at`` the file's modification time: both stable, so a rerun replays its captures."""
    pages: list[Page] = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob(glob) if p.is_file())
            pages.extend(_page(f, f.relative_to(path).as_posix(), url_base, media_type) for f in files)
        else:
            pages.append(_page(path, path.name, url_base, media_type))
    return pages


def _page(path: Path, record: str, url_base: str | None, media_type: str | None) -> Page:
    mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
    guessed = mimetypes.guess_type(path.name)[0]
    return Page(
        path=path,
        native_record_id=record,
        observed_at=mtime.isoformat().replace("+00:00", "Z"),
        media_type=media_type or guessed or "application/octet-stream",
        url=f"{url_base.rstrip('/')}/{quote(record)}" if url_base else None,
    )


class Heartbeats:
    """Liveness every third of the lease in a background thread, then, when stopped, the heartbeat with the run
    report (if_heartbeat: "Long-running instances send liveness; scheduled instances send a report per
    invocation"). Best effort: a failed heartbeat is skipped; revoked credentials are kept for the run to stop."""

    def __init__(self, client: CollectorClient, registration: Registration, report: RunReport) -> None:
        self._client = client
        self._registration = registration
        self._report = report
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="prw-collect-heartbeat", daemon=True)
        self.revoked: CredentialRevoked | None = None
        self.sent: list[dict[str, Any]] = []
        self.errors: list[str] = []

    def start(self) -> Heartbeats:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the loop and send the run report."""
        self._stop.set()
        self._thread.join(timeout=30)
        self.beat(self._report.as_run(finished_at=utc_now()))

    def _loop(self) -> None:
        interval = max(self._registration.lease_seconds / 3, 0.05)
        while not self._stop.is_set():
            self.beat()
            self._stop.wait(interval)

    def beat(self, run: dict[str, Any] | None = None) -> None:
        if self.revoked is not None:
            return
        try:
            answer = self._client.heartbeat(run, at=utc_now(), heartbeat_url=self._registration.heartbeat_url)
        except CredentialRevoked as error:
            self.revoked = error
        except IntakeError as error:
            self.errors.append(str(error))
        else:
            if answer is not None:
                self.sent.append(answer)


def collect(
    client: CollectorClient,
    pages: list[Page],
    source_id: str,
    *,
    register: bool = True,
    on_page: Callable[[PageOutcome], None] | None = None,
    on_retry: Callable[[RetryEvent], None] | None = None,
    receipts: ReceiptPolling | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> CollectRun:
    """Register (skipped with a warning when intake has no registration route), start the heartbeats, then
    upload and capture every page and read its receipt; then poll the receipts still ``stored`` (``receipts``,
    default ``ReceiptPolling()``) until they leave it or the wait is over."""
    polling = receipts or ReceiptPolling()
    report = RunReport(started_at=utc_now())
    outcomes = [PageOutcome(page) for page in pages]
    run = CollectRun(outcomes, report, None, [])
    previous_on_retry = client.on_retry

    def count_retry(event: RetryEvent) -> None:
        report.fail(f"{event.step}:{event.reason}")
        if on_retry is not None:
            on_retry(event)

    client.on_retry = count_retry
    heartbeats: Heartbeats | None = None
    try:
        client.token()
        if register:
            heartbeats = _register(client, source_id, run)
        for outcome in outcomes:
            if heartbeats is not None and heartbeats.revoked is not None:
                raise heartbeats.revoked
            _submit(client, source_id, outcome, report)
            if on_page is not None:
                on_page(outcome)
        _poll_receipts(client, outcomes, report, polling, sleep)
    except CredentialRevoked as revoked:
        run.stopped = revoked
        _skip_rest(outcomes, f"run stopped: {revoked.code}")
    except IntakeError as error:  # no token: nothing can be sent
        run.aborted = error
        _skip_rest(outcomes, f"run aborted: {error}")
    finally:
        client.on_retry = previous_on_retry
        failed = sum(o.outcome == "failed" for o in outcomes)
        report.outcome = (
            "stopped"
            if run.stopped or run.aborted
            else "failed"
            if failed == len(outcomes) and failed
            else "partial"
            if failed
            else "succeeded"
        )
        if heartbeats is not None:
            heartbeats.stop()
            run.warnings.extend(f"heartbeat skipped: {e}" for e in heartbeats.errors)
            if heartbeats.revoked is not None and run.stopped is None:
                run.stopped = heartbeats.revoked
    return run


def _register(client: CollectorClient, source_id: str, run: CollectRun) -> Heartbeats | None:
    """Register and start the heartbeats; a registration intake refuses (or lacks: 404) is a warning, not a
    failure of the run: captures do not depend on it. Revoked credentials stop the run."""
    try:
        run.registration = client.register([source_id])
    except CredentialRevoked:
        raise
    except IntakeError as error:
        run.warnings.append(f"registration refused ({error}): heartbeats skipped")
        return None
    if run.registration is None:
        run.warnings.append(
            "intake has no POST /v1/workers/register (404): registration and heartbeats skipped"
        )
        return None
    return Heartbeats(client, run.registration, run.report).start()


def _skip_rest(outcomes: list[PageOutcome], why: str) -> None:
    for outcome in outcomes:
        if outcome.outcome == "pending":
            outcome.outcome, outcome.error = "skipped", why


def _submit(client: CollectorClient, source_id: str, outcome: PageOutcome, report: RunReport) -> None:
    page = outcome.page
    try:
        outcome.sha256, _ = file_sha256(page.path)
        with report.lock:
            report.pages_fetched += 1
        uploaded = client.upload(source_id, page.path, page.media_type)
        outcome.attempts = uploaded.attempts
        captured = client.capture(
            source_id=source_id,
            native_record_id=page.native_record_id,
            observed_at=page.observed_at,
            artifacts=[uploaded.sha256],
            url=page.url,
        )
        outcome.attempts = captured.attempts
        outcome.http_status = captured.status
        outcome.receipt_id, outcome.capture_id = captured.receipt_id, captured.capture_id
        outcome.receipt_status = captured.receipt_status
        outcome.outcome = "stored" if captured.status == 202 else "replayed"
        with report.lock:
            report.captures_submitted += 1
    except CredentialRevoked as revoked:
        _failed(outcome, revoked, report)
        raise
    except IntakeError as error:
        _failed(outcome, error, report)
    except OSError as error:  # the file vanished or cannot be read
        outcome.outcome, outcome.error = "failed", f"read: {error}"
        report.fail("read")
    else:
        _read_receipt(client, outcome, report)


def _read_receipt(client: CollectorClient, outcome: PageOutcome, report: RunReport) -> None:
    """if_receipt_get: one read of the capture's receipt (at the end of its page, then in the poll rounds). The
    page has its capture whatever this read answers: a failed read is noted, not a failed page."""
    assert outcome.receipt_id is not None
    try:
        outcome.receipt_status = str(client.receipt(outcome.receipt_id).get("status", outcome.receipt_status))
    except CredentialRevoked:
        raise
    except IntakeError as error:
        outcome.error = f"receipt not read: {error}"
        report.fail(_kind(error))


def _poll_receipts(
    client: CollectorClient,
    outcomes: list[PageOutcome],
    report: RunReport,
    polling: ReceiptPolling,
    sleep: Callable[[float], None],
) -> None:
    """if_receipt_get: poll, in rounds ``polling.interval`` apart, every receipt still ``stored`` until it moves
    (accepted, in_review, failed) or ``polling.wait`` has passed. Accepted never means applied."""
    deadline = time.monotonic() + polling.wait
    while True:
        pending = [o for o in outcomes if o.receipt_id is not None and o.receipt_status == "stored"]
        remaining = deadline - time.monotonic()
        if not pending or remaining <= 0:
            return
        sleep(min(polling.interval, remaining))
        for outcome in pending:
            _read_receipt(client, outcome, report)


def _failed(outcome: PageOutcome, error: IntakeError, report: RunReport) -> None:
    outcome.outcome = "failed"
    outcome.http_status = error.status
    outcome.attempts = error.attempts
    outcome.error = str(error)
    report.fail(_kind(error))


def _kind(error: IntakeError) -> str:
    """A failure's kind in the run's summary: ``capture:409 IDEMPOTENCY_CONFLICT``, ``put:read_error``."""
    return (
        f"{error.step}:{error.status} {error.code}"
        if error.status is not None
        else f"{error.step}:{error.code}"
    )


__all__ = [
    "FETCH_FAILURES",
    "RECEIPT_POLL_INTERVAL_SECONDS",
    "RECEIPT_WAIT_SECONDS",
    "CollectRun",
    "Heartbeats",
    "Page",
    "PageOutcome",
    "ReceiptPolling",
    "RunReport",
    "collect",
    "pages_from",
]

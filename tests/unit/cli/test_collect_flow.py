"""The ``collect`` flow over a fake intake (``httpx.MockTransport``): registration and heartbeats with the run
report, pages from files with stable record ids and keys, and a heartbeat that learns of revoked credentials
stopping the run."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import httpx
import pytest

from prw_cli.collect import (
    CollectorClient,
    ReceiptPolling,
    RetryPolicy,
    RunReport,
    capture_key,
    collect,
    pages_from,
)
from tests.unit.cli.test_collect_retry import RECEIPT, error, token_answer

#: The one read per page, no polling after it (receipts here stay ``stored``; polling has its e2e test).
ONE_READ = ReceiptPolling(wait=0)


class FakeIntake:
    """Answers every route; ``captures`` holds the bodies of the capture requests, ``heartbeats`` the run
    reports, ``capture_faults`` the next capture answers to give instead of 202."""

    def __init__(self, *, lease_seconds: float = 0.05) -> None:
        self.lease_seconds = lease_seconds
        self.captures: list[dict[str, object]] = []
        self.keys: list[str] = []
        self.heartbeats: list[dict[str, object]] = []
        self.capture_faults: list[httpx.Response] = []
        self.heartbeat_answer: httpx.Response | None = None
        self.register_answer: httpx.Response | None = None
        self.receipt_answer: httpx.Response | None = None
        self.heartbeat_answered = threading.Event()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/v1/oauth/token":
            return token_answer()
        if path == "/v1/workers/register":
            if self.register_answer is not None:
                self.heartbeat_answered.set()
                return self.register_answer
            body = json.loads(request.content)
            return httpx.Response(
                201,
                json={
                    "instance_id": body["instance_id"],
                    "lease_seconds": self.lease_seconds,
                    "heartbeat_url": f"/v1/workers/{body['instance_id']}/heartbeat",
                },
            )
        if path.endswith("/heartbeat"):
            self.heartbeats.append(json.loads(request.content))
            answer = self.heartbeat_answer or httpx.Response(200, json={"instance_id": "ci_a"})
            self.heartbeat_answered.set()
            return answer
        if path == "/v1/artifacts/uploads":
            body = json.loads(request.content)
            return httpx.Response(
                201,
                json={
                    "upload_id": "upl_1",
                    "status": "pending",
                    "ref": f"r2://b/{body['sha256']}",
                    "sha256": body["sha256"],
                    "target": {
                        "method": "PUT",
                        "url": "http://intake.test/v1/artifacts/uploads/upl_1",
                        "headers": {},
                    },
                },
            )
        if path == "/v1/artifacts/uploads/upl_1":
            request.read()
            return httpx.Response(200, json={"status": "stored"})
        if path == "/v1/captures":
            self.heartbeat_answered.wait(5)
            if self.capture_faults:
                return self.capture_faults.pop(0)
            self.captures.append(json.loads(request.content))
            self.keys.append(request.headers["Idempotency-Key"])
            return httpx.Response(202, json=RECEIPT)
        if path.startswith("/v1/receipts/"):
            return self.receipt_answer or httpx.Response(200, json=RECEIPT)
        return httpx.Response(404, json={"detail": "Not Found"})


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "shop" / "sub dir").mkdir(parents=True)
    (tmp_path / "shop" / "a.html").write_text("<html>a</html>")
    (tmp_path / "shop" / "sub dir" / "b.json").write_text("{}")
    os.utime(tmp_path / "shop" / "a.html", (1_760_000_000, 1_760_000_000))
    return tmp_path / "shop"


def client_of(intake: FakeIntake) -> CollectorClient:
    policy = RetryPolicy(sleep=lambda _: None, random=lambda: 0.0)
    return CollectorClient(
        "http://intake.test", "cc_1", "s", retry=policy, transport=httpx.MockTransport(intake)
    )


def test_pages_from_files_have_stable_record_ids_urls_and_observation_times(files: Path) -> None:
    a, b = pages_from([files], url_base="https://shop.example/p/")
    assert (a.native_record_id, a.media_type, a.observed_at) == (
        "a.html",
        "text/html",
        "2025-10-09T08:53:20Z",
    )
    assert (b.native_record_id, b.media_type, b.url) == (
        "sub dir/b.json",
        "application/json",
        "https://shop.example/p/sub%20dir/b.json",
    )
    (single,) = pages_from([files / "a.html"], media_type="text/plain")
    assert (single.native_record_id, single.media_type, single.url) == ("a.html", "text/plain", None)


def test_the_idempotency_key_is_the_source_record_and_bytes() -> None:
    sha = "cd" * 32
    assert capture_key("src_a", "p/1", sha) == f"src_a:p/1:{sha}"
    assert capture_key("src_a", "p/1", sha) == capture_key("src_a", "p/1", sha)
    hashed = capture_key("src_a", "x" * 300, sha)
    assert len(hashed) <= 255
    assert capture_key("src_a", "grösse 1", sha).isascii()


def test_a_run_registers_and_reports_pages_captures_and_failures_in_its_heartbeats(files: Path) -> None:
    intake = FakeIntake()
    intake.capture_faults = [error(503, "STORAGE_UNAVAILABLE")]
    with client_of(intake) as client:
        run = collect(client, pages_from([files]), "src_a", receipts=ONE_READ)

    assert run.ok
    assert run.registration is not None
    assert [o.outcome for o in run.outcomes] == ["stored", "stored"]
    assert len(intake.captures) == 2
    assert intake.keys[0] == capture_key("src_a", "a.html", run.outcomes[0].sha256)
    # Liveness while the run goes on (one when the loop starts), then the run report (if_heartbeat).
    assert len(intake.heartbeats) >= 2
    assert all("run" not in beat for beat in intake.heartbeats[:-1])
    last = intake.heartbeats[-1]
    assert last["instance_id"] == "ci_a"
    assert last["run"] == {
        "started_at": run.report.started_at,
        "finished_at": last["run"]["finished_at"],  # type: ignore[index]
        "outcome": "succeeded",
        "pages_fetched": 2,
        "captures_submitted": 2,
        "failures": {},  # source fetch failures: none, the pages were on disk
    }
    assert run.report.failures == {"capture:503 STORAGE_UNAVAILABLE": 1}
    assert len({beat["at"] for beat in intake.heartbeats}) == len(intake.heartbeats)


def test_a_run_with_a_failed_page_reports_failed() -> None:
    report = RunReport(started_at="2026-10-10T00:00:00Z", outcome="partial")
    report.fetch_failed("UPSTREAM_503")
    assert report.as_run("2026-10-10T00:01:00Z")["outcome"] == "failed"
    assert report.as_run("2026-10-10T00:01:00Z")["failures"] == {"UPSTREAM_503": 1}
    with pytest.raises(ValueError, match="not an if_source_fetch failure"):
        report.fetch_failed("STORAGE_UNAVAILABLE")


def test_a_registration_intake_refuses_is_a_warning_and_the_pages_still_go(files: Path) -> None:
    intake = FakeIntake()
    intake.register_answer = error(422, "VALIDATION_FAILED")
    with client_of(intake) as client:
        run = collect(client, pages_from([files]), "src_a", receipts=ONE_READ)
    assert run.ok
    assert run.registration is None
    assert run.warnings == [
        "registration refused (register: 422 VALIDATION_FAILED (VALIDATION_FAILED)): heartbeats skipped"
    ]
    assert intake.heartbeats == []


def test_a_receipt_that_cannot_be_read_leaves_the_page_with_its_capture(files: Path) -> None:
    intake = FakeIntake()
    intake.receipt_answer = error(404, "NOT_FOUND")
    intake.heartbeat_answered.set()  # no registration, so no heartbeat for the capture to wait for
    with client_of(intake) as client:
        run = collect(client, pages_from([files / "a.html"]), "src_a", register=False, receipts=ONE_READ)
    (page,) = run.outcomes
    assert (page.outcome, page.http_status, page.receipt_id) == ("stored", 202, "rcpt_1")
    assert page.error == "receipt not read: receipt: 404 NOT_FOUND (NOT_FOUND)"
    assert run.report.failures == {"receipt:404 NOT_FOUND": 1}


def test_a_run_without_a_token_is_aborted_and_sends_nothing(files: Path) -> None:
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    policy = RetryPolicy(attempts=2, sleep=lambda _: None)
    with CollectorClient(
        "http://intake.test", "c", "s", retry=policy, transport=httpx.MockTransport(unreachable)
    ) as client:
        run = collect(client, pages_from([files]), "src_a", receipts=ONE_READ)
    assert run.aborted is not None
    assert str(run.aborted).startswith("token: connect_error")
    assert [o.outcome for o in run.outcomes] == ["skipped", "skipped"]
    assert not run.ok


def test_a_heartbeat_answered_credential_revoked_stops_the_run(files: Path) -> None:
    intake = FakeIntake(lease_seconds=60)
    intake.heartbeat_answer = error(401, "CREDENTIAL_REVOKED")
    with client_of(intake) as client:
        run = collect(client, pages_from([files]), "src_a", receipts=ONE_READ)

    assert run.stopped is not None
    assert run.stopped.code == "CREDENTIAL_REVOKED"
    # The first heartbeat races the first page; no page starts once the heartbeat was refused.
    assert run.outcomes[-1].outcome == "skipped"
    assert run.outcomes[-1].error == "run stopped: CREDENTIAL_REVOKED"
    assert run.report.outcome == "stopped"
    assert len(intake.heartbeats) == 1  # no heartbeat after the revocation


def test_prw_collect_polls_receipts_at_the_seeds_interval_by_default() -> None:
    """if_receipt_get "Poll interval ≥ 30 s": the command's defaults are the library's."""
    import inspect

    from prw_cli.collect.flow import RECEIPT_POLL_INTERVAL_SECONDS, RECEIPT_WAIT_SECONDS
    from prw_cli.commands.collect import collect as command

    parameters = inspect.signature(command).parameters
    assert parameters["receipt_poll_interval"].default == RECEIPT_POLL_INTERVAL_SECONDS >= 30
    assert parameters["receipt_wait"].default == RECEIPT_WAIT_SECONDS
    assert ReceiptPolling() == ReceiptPolling(RECEIPT_POLL_INTERVAL_SECONDS, RECEIPT_WAIT_SECONDS)

"""``prw collect`` polls its receipts (if_receipt_get: "Poll interval ≥ 30 s; prefer heartbeat-time batch
checks") until they leave ``stored``, against the served intake API of a real platform while a real resolution
stage runs (``WorkerLoop`` over the three resolution stages: extract, normalize, identity).

The resolution stage starts only once every page's first receipt read has been answered (an ASGI wrapper counts
them), so every first read says ``stored`` and only the poll rounds after the last page can see the receipts move:
the test proves the polling, not a fast resolver. The interval is shortened for the test (``--receipt-poll-
interval``); the default is the seed's 30 s (tests/unit/cli/test_collect_flow.py)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send
from typer.testing import CliRunner

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_cli.commands.demo import provision_demo
from prw_cli.demo_pages import DemoPage, demo_pages
from prw_cli.main import app
from prw_platform.bootstrap import Platform
from prw_platform.pipeline import IDENTITY, NORMALIZE, RESOLUTION
from prw_platform.runtime import WorkerLoop

SOURCE = "src_schemaorg_docs"
runner = CliRunner()


class FirstReadsGate:
    """The intake app, counting answered GET /v1/receipts/{id}; ``opened`` is set once ``expected`` were."""

    def __init__(self, inner: ASGIApp, expected: int) -> None:
        self.inner = inner
        self.expected = expected
        self.reads = 0
        self.opened = threading.Event()
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.inner(scope, receive, send)
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"].startswith("/v1/receipts/"):
            with self._lock:
                self.reads += 1
                if self.reads >= self.expected:
                    self.opened.set()


@pytest.fixture
def pages(tmp_path: Path) -> list[DemoPage]:
    return [page for page in demo_pages() if page.source_id == SOURCE]


@pytest.fixture
def page_dir(tmp_path: Path, pages: list[DemoPage]) -> Path:
    folder = tmp_path / "pages"
    folder.mkdir()
    for page in pages:
        shutil.copyfile(page.path, folder / page.path.name)
    return folder


@pytest.fixture
def gate(platform: Platform, pages: list[DemoPage]) -> FirstReadsGate:
    return FirstReadsGate(compose.intake_app(platform), expected=len(pages))


@pytest.fixture
def intake_url(gate: FirstReadsGate) -> Iterator[str]:
    with BackgroundServer(gate) as server:  # type: ignore[arg-type]  # an ASGI app around the FastAPI app
        yield server.url


@pytest.fixture
def resolution_after_first_reads(platform: Platform, gate: FirstReadsGate) -> Iterator[WorkerLoop]:
    """The resolution stages (if_resolution_job: extract -> normalize -> identity; identity moves the receipt),
    started when every page's first receipt read was answered."""
    loop = WorkerLoop.for_platform(platform, (RESOLUTION, NORMALIZE, IDENTITY), idle_sleep=0.05)

    def run() -> None:
        while not gate.opened.wait(0.05):
            if loop.stop.is_set():
                return
        loop.run()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield loop
    loop.stop.set()
    thread.join(timeout=30)


def test_collect_polls_each_receipt_until_it_leaves_stored(
    platform: Platform,
    pages: list[DemoPage],
    page_dir: Path,
    gate: FirstReadsGate,
    intake_url: str,
    resolution_after_first_reads: WorkerLoop,
) -> None:
    client_id, secret = provision_demo(platform, demo_pages())
    env = {"PRW_COLLECTOR_CLIENT_ID": client_id, "PRW_COLLECTOR_CLIENT_SECRET": secret, "COLUMNS": "250"}
    argv = ["collect", "--source", SOURCE, "--intake", intake_url, str(page_dir)]
    argv += ["--receipt-poll-interval", "0.2", "--receipt-wait", "60"]

    result = runner.invoke(app, argv, env=env)

    assert result.exit_code == 0, result.output
    assert gate.opened.is_set()
    # Every first read said ``stored`` (resolution had not started); the polls read them again.
    assert gate.reads > len(pages)
    rows = [line for line in result.output.splitlines() if "│" in line and "rcpt_" in line]
    assert len(rows) == len(pages), result.output
    assert all("(stored)" not in row for row in rows), result.output
    assert all("(accepted)" in row or "(in_review)" in row for row in rows), result.output
    with platform.operator_db.transaction(read_only=True) as conn:
        statuses = conn.execute(
            "SELECT status FROM resolver.receipt r JOIN resolver.capture c USING (tenant_id, capture_id) "
            "WHERE c.source_id = %s",
            (SOURCE,),
        ).fetchall()
    assert sorted(row["status"] for row in statuses) == sorted(
        "accepted" if "(accepted)" in row else "in_review" for row in rows
    )

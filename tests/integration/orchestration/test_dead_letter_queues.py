"""Operators see each dead-letter queue and re-drive its entries: ``Platform.dead_letters``,
``prw dlq list | show | redrive``, and the Dagster asset ``dead_letter_queues`` with its check
``dead_letter_queues_empty``, over the real PostgreSQL queues of a migrated database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from typer.testing import CliRunner

from prw_cli.main import app as prw
from prw_orchestration.defs.state import dead_letter_queues, dead_letter_queues_empty
from prw_orchestration.resources import PlatformResource
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.queues import (
    ACCEPTED_CHANGES,
    CATALOG_FILE_CLEANUP,
    RESOLUTION_IDENTITY,
    RESOLUTION_JOBS,
    RESOLUTION_NORMALIZE,
    RESOLUTION_REPLAYS,
    Queue,
)
from prw_platform.services import UnknownDeadLetter, UnknownQueue
from tests.support import postgres


@pytest.fixture
def environment(databases: postgres.TestDatabases, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRW_DATABASE_URL", databases.main)
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", databases.control)
    monkeypatch.setenv("PRW_DATA_DIR", str(tmp_path))


@pytest.fixture
def platform(environment: None, databases: postgres.TestDatabases, tmp_path: Path) -> Iterator[Platform]:
    settings = Settings(
        database_url=databases.main, control_database_url=databases.control, data_dir=tmp_path
    )
    with bootstrap(settings) as opened:
        yield opened


def dead_letter(
    queue: Queue,
    body: dict[str, Any],
    reason: str,
    detail: str | None = None,
    *,
    producer: Queue | None = None,
) -> str:
    """Send ``body`` (through ``producer``, the queue's sending end, when its consumer may not send), receive it
    and dead-letter it with ``reason``, as a consumer refusing it would."""
    message_id = (producer or queue).send(body)
    (received,) = [m for m in queue.receive(10, visibility_timeout=60) if m.message_id == message_id]
    assert queue.dead_letter(received, reason, detail=detail)
    return message_id


def test_summaries_count_each_queues_entries_by_reason_and_entries_show_them(platform: Platform) -> None:
    jobs = platform.resolution_queue
    dead_letter(jobs, {"n": 1}, "SCHEMA_INVALID", "missing job_id")
    dead_letter(jobs, {"n": 2}, "MAX_RECEIVES_EXCEEDED")
    dead_letter(jobs, {"n": 3}, "MAX_RECEIVES_EXCEEDED")
    operations = platform.dead_letters

    summaries = {s.queue: s for s in operations.summaries()}

    # Each resolution stage's DLQ is listed (if_resolution_job: extract, normalize, identity).
    assert set(summaries) == {
        RESOLUTION_JOBS.name,
        RESOLUTION_NORMALIZE.name,
        RESOLUTION_IDENTITY.name,
        RESOLUTION_REPLAYS.name,
        ACCEPTED_CHANGES.name,
        CATALOG_FILE_CLEANUP.name,
    }
    assert summaries[RESOLUTION_JOBS.name].dead == 3
    assert dict(summaries[RESOLUTION_JOBS.name].reasons) == {"MAX_RECEIVES_EXCEEDED": 2, "SCHEMA_INVALID": 1}
    assert summaries[RESOLUTION_JOBS.name].oldest_dead_lettered_at is not None
    assert (summaries[ACCEPTED_CHANGES.name].dead, summaries[ACCEPTED_CHANGES.name].reasons) == (0, {})
    entries = operations.entries(RESOLUTION_JOBS.name)
    refused = next(e for e in entries if e.reason == "SCHEMA_INVALID")
    assert operations.entry(RESOLUTION_JOBS.name, refused.dead_letter_id) == refused
    assert (refused.body, refused.detail) == ({"n": 1}, "missing job_id")


def test_redrive_puts_entries_back_on_their_queue_once(platform: Platform) -> None:
    jobs = platform.resolution_queue
    dead_letter(jobs, {"n": 1}, "MAX_RECEIVES_EXCEEDED")
    dead_letter(jobs, {"n": 2}, "MAX_RECEIVES_EXCEEDED")
    operations = platform.dead_letters
    first, second = operations.entries(RESOLUTION_JOBS.name)

    assert operations.redrive(RESOLUTION_JOBS.name, [first.dead_letter_id]) == 1
    assert operations.redrive(RESOLUTION_JOBS.name, [first.dead_letter_id]) == 0  # already moved
    assert [e.dead_letter_id for e in operations.entries(RESOLUTION_JOBS.name)] == [second.dead_letter_id]
    assert [m.body for m in jobs.receive(10)] == [first.body]  # a new message with the same body

    assert operations.redrive_all(RESOLUTION_JOBS.name) == 1
    assert operations.summary(RESOLUTION_JOBS.name).dead == 0


def test_unknown_queues_and_entries_are_refused(platform: Platform) -> None:
    with pytest.raises(UnknownQueue, match="resolution-jobs"):
        platform.dead_letters.entries("no-such-queue")
    with pytest.raises(UnknownDeadLetter):
        platform.dead_letters.entry(RESOLUTION_JOBS.name, "424242")


def test_prw_dlq_lists_shows_and_redrives(platform: Platform) -> None:
    dead_letter(
        platform.accepted_changes_in,
        {"event": "evt_1"},
        "SCHEMA_INVALID",
        "not an accepted change",
        producer=platform.accepted_changes_out,  # the relay sends, the product consumer dead-letters
    )
    runner = CliRunner()

    summary = runner.invoke(prw, ["dlq", "list", "--json"])
    assert summary.exit_code == 0, summary.output
    assert {(s["queue"], s["dead"]) for s in json.loads(summary.output)} == {
        (RESOLUTION_JOBS.name, 0),
        (RESOLUTION_NORMALIZE.name, 0),
        (RESOLUTION_IDENTITY.name, 0),
        (RESOLUTION_REPLAYS.name, 0),
        (ACCEPTED_CHANGES.name, 1),
        (CATALOG_FILE_CLEANUP.name, 0),
    }
    table = runner.invoke(prw, ["dlq", "list"])
    assert "Dead-letter queues" in table.output
    assert "accepted-changes" in table.output  # not cut on an 80-column terminal
    assert "SCHEMA_" in table.output  # folded, never cut

    (entry,) = json.loads(runner.invoke(prw, ["dlq", "list", ACCEPTED_CHANGES.name, "--json"]).output)
    shown = runner.invoke(prw, ["dlq", "show", ACCEPTED_CHANGES.name, entry["dead_letter_id"], "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["body"] == {"event": "evt_1"}

    # Accepted changes are never re-driven (the relay alone sends them; gap closure re-fetches the position).
    refused = runner.invoke(prw, ["dlq", "redrive", ACCEPTED_CHANGES.name, entry["dead_letter_id"]])
    assert refused.exit_code == 1
    assert "REDRIVE_REFUSED" in refused.output
    discarded = runner.invoke(prw, ["dlq", "discard", ACCEPTED_CHANGES.name, entry["dead_letter_id"]])
    assert discarded.exit_code == 0, discarded.output
    assert "discarded 1 of 1 entries" in discarded.output
    again = runner.invoke(prw, ["dlq", "discard", ACCEPTED_CHANGES.name, entry["dead_letter_id"]])
    assert again.exit_code == 1  # nothing left to delete: said, not silent
    assert platform.dead_letters.summary(ACCEPTED_CHANGES.name).dead == 0

    dead_letter(platform.resolution_queue, {"n": 7}, "MAX_RECEIVES_EXCEEDED")
    moved = runner.invoke(prw, ["dlq", "redrive", RESOLUTION_JOBS.name, "--all"])
    assert moved.exit_code == 0, moved.output
    assert "re-drove 1 of every entry" in moved.output
    assert [m.body for m in platform.resolution_queue.receive(10)] == [{"n": 7}]


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["dlq", "list", "no-such-queue"], 1, "NOT_FOUND"),
        (["dlq", "show", "resolution-jobs", "424242"], 1, "NOT_FOUND"),
        (["dlq", "redrive", "resolution-jobs"], 2, "--all"),
        (["dlq", "redrive", "resolution-jobs", "1", "--all"], 2, "--all"),
        (["dlq", "discard", "resolution-jobs"], 2, "--all"),
        (["dlq", "discard", "no-such-queue", "1"], 1, "NOT_FOUND"),
    ],
)
def test_prw_dlq_refuses_what_it_cannot_do(platform: Platform, args: list[str], code: int, said: str) -> None:
    result = CliRunner().invoke(prw, args)

    assert result.exit_code == code
    assert said in result.output


def test_the_asset_reports_each_queue_and_the_check_fails_until_the_entries_are_redriven(
    platform: Platform, databases: postgres.TestDatabases, tmp_path: Path
) -> None:
    resource = PlatformResource(database_url=databases.main, data_dir=str(tmp_path))
    assert _materialize_and_check(resource)[1].passed

    dead_letter(platform.resolution_queue, {"n": 1}, "TENANT_MISMATCH")
    metadata, check = _materialize_and_check(resource)

    assert (metadata["dead_letters"], metadata["dead_letters_resolution_jobs"]) == (1, 1)
    assert "TENANT_MISMATCH" in str(metadata["per_queue"])
    assert not check.passed
    assert check.severity == dg.AssetCheckSeverity.WARN
    assert "resolution-jobs 1" in str(check.metadata["queues"])

    platform.dead_letters.redrive_all(RESOLUTION_JOBS.name)
    assert _materialize_and_check(resource)[1].passed


def _materialize_and_check(resource: PlatformResource) -> tuple[dict[str, Any], dg.AssetCheckResult]:
    with dg.build_resources({"platform": resource}) as resources:
        materialized = dead_letter_queues(platform=resources.platform)
        checked = dead_letter_queues_empty(platform=resources.platform)
    assert isinstance(materialized, dg.MaterializeResult)
    assert isinstance(checked, dg.AssetCheckResult)
    return dict(materialized.metadata or {}), checked


@pytest.mark.parametrize("stage", ["normalize", "identity"])
def test_prw_dlq_redrives_each_resolution_stage_on_its_own_queue(stage: str, platform: Platform) -> None:
    """if_resolution_job's later stages have DLQs of their own: a redrive puts the entry back on that stage's
    queue, not on the extract stage's."""
    stage_queue = platform.resolution_stage_queues[stage]
    name = {"normalize": RESOLUTION_NORMALIZE.name, "identity": RESOLUTION_IDENTITY.name}[stage]
    dead_letter(stage_queue, {"n": 8}, "MAX_RECEIVES_EXCEEDED")

    moved = CliRunner().invoke(prw, ["dlq", "redrive", name, "--all"])

    assert moved.exit_code == 0, moved.output
    assert platform.dead_letters.summary(name).dead == 0
    assert [m.body for m in stage_queue.receive(10)] == [{"n": 8}]
    assert platform.resolution_queue.receive(10) == []

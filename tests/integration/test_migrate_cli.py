"""``prw migrate`` through the `prw` entry point (the command is imported when it runs) on migrated databases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prw_cli.main import app
from tests.support import postgres


def test_migrate_reports_both_databases_at_head(
    databases: postgres.TestDatabases, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRW_DATABASE_URL", databases.main)
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", databases.control)
    monkeypatch.setenv("PRW_DATA_DIR", str(tmp_path))

    result = CliRunner().invoke(app, ["migrate", "--json"])

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["embedded"] is False
    assert [(d["kind"], d["before"] == d["after"]) for d in document["databases"]] == [
        ("main", True),
        ("control", True),
    ]

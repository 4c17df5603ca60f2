"""Results printed off a terminal keep one line per table row (``prw_cli.output``)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.table import Table

from prw_cli.output import PIPED_WIDTH, results_console

PRW = str(Path(sys.executable).with_name("prw"))


def test_off_a_terminal_the_results_console_is_as_wide_as_its_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    console = results_console()
    assert console.width == PIPED_WIDTH
    table = Table("item", "distribution")
    table.add_row("itm_0123456789abcdef0123", "prw-identity-scored")
    console.print(table)
    printed = sys.stdout.getvalue()  # type: ignore[attr-defined]
    assert "itm_0123456789abcdef0123" in printed
    assert "prw-identity-scored" in printed


def test_columns_wins_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "90")
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert results_console().width == 90


def test_prw_plugins_piped_keeps_every_distribution_name_on_one_line() -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    listed = subprocess.run(
        [PRW, "plugins"], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    for name in ("prw-identity-scored", "prw-adapter-schemaorg", "prw-profiles-core"):
        assert name in listed.stdout, listed.stdout

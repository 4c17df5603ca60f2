"""`prw plugins`: one row per plugin from list_plugins(), as a table or JSON; the real console script too."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from prw_cli.main import app
from prw_platform.plugins import AUTOLOAD_ENV, is_adapter_pin, is_profile_pin, is_rule_pin
from tests.unit.plugins.fakes import install_distribution

runner = CliRunner()
WIDE = {"COLUMNS": "200"}
PROFILES_ROW = {
    "name": "core_profiles",
    "distribution": "prw-profiles-core",
    "distribution_version": "1.1.0",
    "kinds": ["profile"],
    "pins": ["np_core@1", "np_core@2", "np_storage@1", "np_storage@2", "np_storage@3"],
    "hooks": ["prw_register_profiles"],
    "api_version": 1,
}
ADAPTER_ROW = {
    "name": "schemaorg",
    "distribution": "prw-adapter-schemaorg",
    "distribution_version": "3.0.0",
    "kinds": ["adapter"],
    "pins": ["pa_schemaorg@1.0.0", "pa_schemaorg@1.1.0", "pa_schemaorg@2.0.0", "pa_schemaorg@3.0.0"],
    "hooks": ["prw_register_adapters"],
    "api_version": 1,
}


@pytest.fixture(autouse=True)
def _autoload_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)


def _rows(output: str) -> dict[str, dict[str, Any]]:
    document = json.loads(output)
    assert document["plugin_api"] == 1
    return {row["name"]: row for row in document["plugins"]}


def test_json_lists_the_built_in_and_the_installed_profiles_distribution() -> None:
    result = runner.invoke(app, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    rows = _rows(result.stdout)
    assert rows["core_profiles"] == PROFILES_ROW
    builtin = rows["prw_builtin_listing_json"]
    assert (builtin["distribution"], builtin["pins"]) == ("prw-platform", ["pa_prw_listing_json@1.0.0"])
    assert builtin["distribution_version"] == importlib.metadata.version("prw-platform")


def test_the_table_shows_distribution_version_kind_pins_and_hooks() -> None:
    result = runner.invoke(app, ["plugins"], env=WIDE)
    assert result.exit_code == 0, result.output
    for text in (
        "plugin API 1",
        "core_profiles",
        "prw-profiles-core",
        "1.0.0",
        "profile",
        "np_storage@2",
        "prw_register_profiles",
        "pa_prw_listing_json@1.0.0",
        "prw-platform",
    ):
        assert text in result.stdout


def test_with_autoload_off_only_built_ins_are_listed() -> None:
    result = runner.invoke(app, ["plugins", "--json"], env={AUTOLOAD_ENV: "1"})
    assert result.exit_code == 0, result.output
    assert list(_rows(result.stdout)) == ["prw_builtin_listing_json", "prw_builtin_strong_identifier"]


def test_a_plugin_with_the_wrong_api_is_an_error_naming_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_distribution(
        tmp_path,
        monkeypatch,
        distribution="prw-test-old-api",
        version="0.9.0",
        module_source="PRW_PLUGIN_API = 0\n",
    )
    result = runner.invoke(app, ["plugins", "--json"], env=WIDE)
    assert result.exit_code == 1
    assert "PLUGIN_API_MISMATCH" in result.stderr
    assert "prw-test-old-api 0.9.0 declares PRW_PLUGIN_API = 0" in result.stderr
    assert result.stdout == ""


def test_the_installed_prw_console_script_lists_the_real_entry_points() -> None:
    """Proves the entry points are installed: run the real `prw` script of this venv, autoload on."""
    prw = Path(sys.executable).with_name("prw")
    environment = {k: v for k, v in os.environ.items() if k != AUTOLOAD_ENV}
    completed = subprocess.run(
        [str(prw), "plugins", "--json"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    rows = _rows(completed.stdout)
    assert rows["core_profiles"] == PROFILES_ROW
    assert rows["schemaorg"] == ADAPTER_ROW
    for row in rows.values():  # whatever else is installed (pa_schemaorg, ...) is listed just as completely
        assert row["distribution"]
        assert row["distribution_version"] == importlib.metadata.version(str(row["distribution"]))
        assert row["api_version"] == 1
        assert row["pins"]
        assert all(is_adapter_pin(pin) or is_profile_pin(pin) or is_rule_pin(pin) for pin in row["pins"])

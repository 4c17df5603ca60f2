"""docs/architecture.md: Layers: a plugin imports only ``prw_platform.plugins`` from the platform."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PLUGIN_SOURCES = sorted(p for p in (ROOT / "plugins").glob("*/*/*/**/*.py") if "tests" not in p.parts[-3:])


def _platform_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "prw_platform"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "prw_platform":
            module = node.module or ""
            found += [
                f"{module}.{alias.name}" if module == "prw_platform" else module for alias in node.names
            ]
    return found


def test_the_plugin_sources_are_found() -> None:
    names = {p.parts[len(ROOT.parts) + 2] for p in PLUGIN_SOURCES}
    assert "prw-profiles-core" in names


def test_plugins_import_only_the_plugin_api_from_the_platform() -> None:
    offenders = {
        str(path.relative_to(ROOT)): bad
        for path in PLUGIN_SOURCES
        if (bad := [m for m in _platform_imports(path) if not m.startswith("prw_platform.plugins")])
    }
    assert offenders == {}


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text("from prw_platform.db import database\nimport prw_platform.plugins\n", encoding="utf-8")
    assert _platform_imports(source) == ["prw_platform.db", "prw_platform.plugins"]

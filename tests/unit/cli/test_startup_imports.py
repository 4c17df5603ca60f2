"""What `prw` imports before it does anything: the quick commands never load the frameworks of the other edges
(Dagster, FastAPI, uvicorn) nor the database stack, so an adapter author's `prw extract` starts in well under a
second. Each case runs the real entry point in a fresh interpreter and reads ``sys.modules`` at its end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prw_platform.plugins import AUTOLOAD_ENV

PAGES = Path(__file__).resolve().parents[3] / "cli" / "prw_cli" / "demo_pages"
PAGE = PAGES / "extruct_samples" / "schema.org_product.html"
EDGE_FRAMEWORKS = {"dagster", "uvicorn", "fastapi", "starlette"}
DATABASE_STACK = {"psycopg", "psycopg_pool", "sqlalchemy", "alembic", "boto3"}
PLATFORM = {"prw_platform", "prw_api", "prw_orchestration", "pydantic", "jsonschema"}
MARKER = "loaded top-level packages: "

PROBE = f"""
import json, runpy, sys
sys.argv = ["prw", *json.loads(sys.argv[1])]
try:
    runpy.run_module("prw_cli.main", run_name="__main__")
except SystemExit as end:
    code = end.code
else:
    code = 0
print("{MARKER}" + json.dumps({{"code": code, "packages": sorted({{m.split(".")[0] for m in sys.modules}})}}))
"""


def loaded_packages(*args: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k != AUTOLOAD_ENV} | {"COLUMNS": "200"}
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)], env=env, capture_output=True, text=True, check=False
    )
    line = next((line for line in completed.stdout.splitlines() if line.startswith(MARKER)), None)
    assert line is not None, completed.stdout + completed.stderr
    result = json.loads(line.removeprefix(MARKER))
    assert result["code"] in (0, None), completed.stdout + completed.stderr
    return set(result["packages"])


def test_help_imports_nothing_but_the_command_line_toolkit() -> None:
    loaded = loaded_packages("--help")
    assert loaded & (EDGE_FRAMEWORKS | DATABASE_STACK | PLATFORM) == set()


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("plugins",), id="plugins"),
        pytest.param(("extract", str(PAGE)), id="extract-one-page"),
        pytest.param(("extract", str(PAGES), "--glob", "*.html"), id="extract-a-directory"),
        pytest.param(("dev", "--help"), id="dev-help"),
        pytest.param(("worker", "--help"), id="worker-help"),
        pytest.param(("serve", "--help"), id="serve-help"),
        pytest.param(("demo", "--help"), id="demo-help"),
        pytest.param(("migrate", "--help"), id="migrate-help"),
        pytest.param(("collect", "--help"), id="collect-help"),
    ],
)
def test_quick_commands_import_no_edge_framework_and_no_database_stack(args: tuple[str, ...]) -> None:
    loaded = loaded_packages(*args)
    assert loaded & (EDGE_FRAMEWORKS | DATABASE_STACK) == set()

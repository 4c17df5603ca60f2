"""The edges (prw_api, prw_orchestration, prw_cli) use the core only through its public surface
(docs/architecture.md: Public surface), and the import-linter contract that says so really fails on a breach.

The contract is a ``forbidden`` contract over the core's internal top-level modules; this test keeps its list in
step with the package (a new top-level module must be declared public or internal) and checks the configured
contract against the real import graph with one extra import an edge must not have.
"""

from __future__ import annotations

import pkgutil
import re
import tomllib
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter.configuration import configure
from importlinter.contracts.forbidden import ForbiddenContract

import prw_platform

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "Edges use the core only through its public surface (docs/architecture.md: Public surface)"
EDGES = ("prw_api", "prw_orchestration", "prw_cli")

#: What an edge may import from the core (docs/architecture.md lists each module's role).
PUBLIC = {
    "prw_platform.bootstrap",
    "prw_platform.clock",
    "prw_platform.config",
    "prw_platform.contracts",
    "prw_platform.deployment",
    "prw_platform.errors",
    "prw_platform.inputs",
    "prw_platform.pipeline",
    "prw_platform.plugins",
    "prw_platform.provisioning",
    "prw_platform.reports",
    "prw_platform.runtime",
    "prw_platform.services",
}


def _contract_options() -> tuple[dict[str, Any], dict[str, Any]]:
    config = dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"])
    contracts = config.pop("contracts")
    (contract,) = [c for c in contracts if c["name"] == CONTRACT]
    return config, contract


def _top_level_modules() -> set[str]:
    return {f"prw_platform.{m.name}" for m in pkgutil.iter_modules(prw_platform.__path__)}


def test_every_top_level_core_module_is_either_public_or_forbidden_to_edges() -> None:
    _, contract = _contract_options()
    internal = set(contract["forbidden_modules"])

    assert contract["source_modules"] == list(EDGES)
    assert not PUBLIC & internal
    assert PUBLIC | internal == _top_level_modules()


def test_the_public_surface_is_what_docs_architecture_names() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()

    for module in PUBLIC:
        assert f"`{module}`" in text, f"docs/architecture.md does not describe {module}"


@pytest.fixture
def graph() -> grimp.ImportGraph:
    configure()  # what the lint-imports command does first (timers, readers)
    session, _ = _contract_options()
    return grimp.build_graph(*session["root_packages"], include_external_packages=True, cache_dir=None)


def _check(graph: grimp.ImportGraph) -> bool:
    session, contract = _contract_options()
    # import-linter's field parsers take the strings an INI file would give.
    options = {
        k: str(v) if isinstance(v, bool) else v for k, v in contract.items() if k not in {"name", "type"}
    }
    return (
        ForbiddenContract(name=CONTRACT, session_options=session, contract_options=options)
        .check(graph, verbose=False)
        .kept
    )


def test_the_contract_holds_for_the_edges_as_they_are(graph: grimp.ImportGraph) -> None:
    assert _check(graph)


@pytest.mark.parametrize(
    ("importer", "internal"),
    [
        ("prw_cli.commands.worker", "prw_platform.resolver.stream.relay"),
        ("prw_api.intake.routes.captures", "prw_platform.db.database"),
        ("prw_orchestration.defs.state", "prw_platform.product.reports"),
        ("prw_api.compose", "prw_platform.composition.platform"),
    ],
)
def test_an_edge_importing_a_core_internal_breaks_the_contract(
    graph: grimp.ImportGraph, importer: str, internal: str
) -> None:
    graph.add_import(importer=importer, imported=internal, line_number=1, line_contents=f"import {internal}")

    assert not _check(graph)


def test_lint_imports_is_configured_for_every_edge_and_plugin_root() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert set(EDGES) <= set(config["root_packages"])


_SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+(\.\w+)?\s+SET|DELETE\s+FROM)\b", re.I | re.S
)


def test_the_edges_hold_no_sql() -> None:
    """docs/architecture.md: Layers: the edges hold no SQL. The pattern is tried on a
    known statement first, so this test cannot pass by matching nothing."""
    assert _SQL.search('conn.execute("SELECT item_id FROM resolver.catalog_item")')
    offenders = [
        str(path.relative_to(ROOT))
        for edge in ("api/prw_api", "cli/prw_cli", "orchestration/prw_orchestration")
        for path in (ROOT / edge).rglob("*.py")
        if _SQL.search(path.read_text())
    ]
    assert offenders == []

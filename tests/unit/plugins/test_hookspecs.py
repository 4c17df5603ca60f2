"""Every hookspec: exercised here through pluggy, documented in docs/adapter-authors.md with its exact
signature (datasette-style meta-tests keep hooks, docs and tests in sync)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prw_platform.plugins import PluginError, get_plugin_manager, hookspecs, register_plugin
from prw_platform.plugins import types as plugin_types
from tests.unit.plugins.fakes import FakeAdapter, FakePlugin, FakeProfile, FakeRule, RulePlugin

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "adapter-authors.md"


def _hookspecs() -> dict[str, Callable[..., Any]]:
    return {
        name: function
        for name, function in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(function, f"{hookspecs.PROJECT_NAME}_spec")
    }


def _signature(function: Callable[..., Any]) -> str:
    """The def line(s) exactly as written in hookspecs.py, whitespace collapsed."""
    source = inspect.getsource(function)
    header = source[source.index("def ") : source.index(":\n", source.index(")")) + 1]
    return " ".join(header.split())


def test_hook_prw_register_adapters_collects_all_results_through_pluggy() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    register_plugin(
        pm, FakePlugin([FakeAdapter("pa_one", "1.0.0"), FakeAdapter("pa_one", "1.1.0")]), name="one"
    )
    register_plugin(pm, FakePlugin([FakeAdapter("pa_two", "2.0.0")]), name="two")
    results = pm.hook.prw_register_adapters()
    pins = sorted(f"{a.name}@{a.version}" for result in results for a in result)
    assert pins == ["pa_one@1.0.0", "pa_one@1.1.0", "pa_prw_listing_json@1.0.0", "pa_two@2.0.0"]


def test_hook_prw_register_profiles_collects_all_results_through_pluggy() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    register_plugin(pm, FakePlugin(profiles=[FakeProfile("np_one", "1")]), name="one")
    register_plugin(
        pm, FakePlugin(profiles=[FakeProfile("np_two", "1"), FakeProfile("np_two", "2")]), name="two"
    )
    results = pm.hook.prw_register_profiles()
    assert sorted(f"{p.name}@{p.version}" for result in results for p in result) == [
        "np_one@1",
        "np_two@1",
        "np_two@2",
    ]


def test_hook_prw_identity_rules_collects_all_results_through_pluggy() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    register_plugin(pm, RulePlugin([FakeRule("top_score", "1"), FakeRule("top_score", "2")]), name="rules")
    results = pm.hook.prw_identity_rules()
    assert sorted(f"{r.name}@{r.version}" for result in results for r in result) == [
        "strong_identifier_match@1",
        "top_score@1",
        "top_score@2",
    ]


def test_hooks_are_prefixed_and_say_how_results_combine() -> None:
    specs = _hookspecs()
    assert specs, "hookspecs.py defines no hook"
    for name, function in specs.items():
        assert name.startswith("prw_"), name
        options = getattr(function, f"{hookspecs.PROJECT_NAME}_spec")
        doc = inspect.getdoc(function) or ""
        expected = "first non-None result wins" if options.get("firstresult") else "All results are collected"
        assert expected in doc, f"{name}: the docstring must say '{expected}'"


@pytest.mark.parametrize("name", sorted(_hookspecs()))
def test_every_hook_has_a_test_here(name: str) -> None:
    assert any(test.startswith(f"test_hook_{name}_") for test in globals()), f"write test_hook_{name}_..."


@pytest.mark.parametrize("name", sorted(_hookspecs()))
def test_every_hook_has_a_guide_section_with_its_exact_signature(name: str) -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    section = re.search(
        rf"^### `{name}`\n(?P<body>.*?)(?=^#{{2,3}} |\Z)", guide, flags=re.MULTILINE | re.DOTALL
    )
    assert section is not None, f"docs/adapter-authors.md needs a '### `{name}`' section"
    assert _signature(_hookspecs()[name]) in section.group("body"), (
        f"{name}: signature differs from hookspecs.py"
    )


def test_the_guide_documents_no_hook_that_does_not_exist() -> None:
    documented = set(re.findall(r"^### `(prw_\w+)`", GUIDE.read_text(encoding="utf-8"), flags=re.MULTILINE))
    assert documented == set(_hookspecs())


def test_every_plugin_error_code_is_in_the_guide() -> None:
    guide = GUIDE.read_text(encoding="utf-8")
    errors = [c for c in vars(plugin_types).values() if isinstance(c, type) and issubclass(c, PluginError)]
    assert len(errors) >= 9
    missing = [error.code for error in errors if f"`{error.code}` | `{error.__name__}`" not in guide]
    assert missing == []


def test_the_signature_reader_reads_the_def_line() -> None:
    assert (
        _signature(_hookspecs()["prw_register_adapters"])
        == "def prw_register_adapters() -> list[SourceAdapter]:"
    )

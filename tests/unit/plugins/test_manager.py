"""get_plugin_manager: a factory (never a global) that loads the `prw` entry points after an API check."""

from __future__ import annotations

from pathlib import Path

import pytest

from prw_platform.plugins import (
    AUTOLOAD_ENV,
    PLUGIN_API_VERSION,
    PluginApiMismatch,
    PluginLoadError,
    PluginRegistry,
    get_plugin_manager,
    register_plugin,
)
from prw_platform.plugins.manager import autoload_disabled
from tests.unit.plugins.fakes import FakeAdapter, FakePlugin, install_distribution

GOOD_PLUGIN = """
    from prw_platform.plugins import hookimpl, PLUGIN_API_VERSION

    PRW_PLUGIN_API = PLUGIN_API_VERSION

    class _Adapter:
        name = "pa_installed_test"
        version = "2.3.4"
        def supports(self, capture):
            return False
        def extract(self, capture, artifacts):
            raise RuntimeError("listing plugins never calls this")

    @hookimpl
    def prw_register_adapters():
        return [_Adapter()]
"""


@pytest.fixture(autouse=True)
def _autoload_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)


def test_every_call_builds_a_new_manager() -> None:
    first, second = get_plugin_manager(load_entrypoints=False), get_plugin_manager(load_entrypoints=False)
    assert first is not second
    register_plugin(first, FakePlugin([FakeAdapter("pa_only_in_first", "1.0.0")]))
    assert "pa_only_in_first@1.0.0" not in PluginRegistry.from_manager(second).adapter_pins


def test_built_ins_are_registered_through_the_same_hooks_without_entry_points() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    assert [name for name, _ in pm.list_name_plugin()] == [
        "prw_builtin_listing_json",
        "prw_builtin_strong_identifier",
    ]
    builtin = pm.get_plugin("prw_builtin_listing_json")
    assert [caller.name for caller in pm.get_hookcallers(builtin) or []] == ["prw_register_adapters"]
    rule = pm.get_plugin("prw_builtin_strong_identifier")
    assert [caller.name for caller in pm.get_hookcallers(rule) or []] == ["prw_identity_rules"]


def test_installed_entry_points_are_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = install_distribution(
        tmp_path, monkeypatch, distribution="prw-test-installed", version="2.3.4", module_source=GOOD_PLUGIN
    )
    pm = get_plugin_manager()
    assert pm.get_plugin(module) is not None
    assert "pa_installed_test@2.3.4" in PluginRegistry.from_manager(pm).adapter_pins
    assert [d.project_name for p, d in pm.list_plugin_distinfo() if p is pm.get_plugin(module)] == [
        "prw-test-installed"
    ]


@pytest.mark.parametrize("value", ["1", "true", "YES"])
def test_the_environment_switch_turns_autoload_off(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = install_distribution(
        tmp_path,
        monkeypatch,
        distribution="prw-test-switched-off",
        version="1.0.0",
        module_source=GOOD_PLUGIN,
    )
    monkeypatch.setenv(AUTOLOAD_ENV, value)
    pm = get_plugin_manager()
    assert pm.get_plugin(module) is None
    assert pm.get_plugin("prw_builtin_listing_json") is not None


@pytest.mark.parametrize(("value", "disabled"), [("", False), ("0", False), ("no", False), (" 1 ", True)])
def test_autoload_switch_values(value: str, disabled: bool) -> None:
    assert autoload_disabled({AUTOLOAD_ENV: value}) is disabled


def test_an_api_mismatch_is_refused_naming_the_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_distribution(
        tmp_path,
        monkeypatch,
        distribution="prw-test-future-api",
        version="9.0.0",
        module_source=GOOD_PLUGIN.replace("PRW_PLUGIN_API = PLUGIN_API_VERSION", "PRW_PLUGIN_API = 99"),
    )
    with pytest.raises(
        PluginApiMismatch, match=r"prw-test-future-api 9\.0\.0 declares PRW_PLUGIN_API = 99"
    ) as info:
        get_plugin_manager()
    assert f"serves plugin API {PLUGIN_API_VERSION}" in str(info.value)
    assert info.value.code == "PLUGIN_API_MISMATCH"


def test_a_missing_api_declaration_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_distribution(
        tmp_path,
        monkeypatch,
        distribution="prw-test-undeclared",
        version="0.1.0",
        module_source=GOOD_PLUGIN.replace("PRW_PLUGIN_API = PLUGIN_API_VERSION", ""),
    )
    with pytest.raises(
        PluginApiMismatch, match=r"prw-test-undeclared 0\.1\.0 does not declare PRW_PLUGIN_API"
    ) as info:
        get_plugin_manager()
    assert f"PRW_PLUGIN_API = {PLUGIN_API_VERSION}" in str(info.value)


def test_a_mismatched_plugin_is_never_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    plugin = FakePlugin([FakeAdapter("pa_wrong_api", "1.0.0")])
    plugin.PRW_PLUGIN_API = "1"  # a string is not the integer API version
    with pytest.raises(PluginApiMismatch):
        register_plugin(pm, plugin, name="wrong_api")
    assert pm.get_plugin("wrong_api") is None


def test_an_entry_point_that_fails_to_import_names_the_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_distribution(
        tmp_path,
        monkeypatch,
        distribution="prw-test-broken",
        version="1.0.1",
        module_source="import not_a_module\n",
    )
    with pytest.raises(
        PluginLoadError, match=r"prw-test-broken 1\.0\.1 failed to import: ModuleNotFoundError"
    ):
        get_plugin_manager()


def test_two_distributions_with_one_entry_point_name_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index, distribution in enumerate(("prw-test-first", "prw-test-second")):
        root = tmp_path / str(index)
        root.mkdir()
        install_distribution(
            root,
            monkeypatch,
            distribution=distribution,
            version="1.0.0",
            module_source=GOOD_PLUGIN,
            entry_point="same_name",
        )
    with pytest.raises(
        PluginLoadError, match=r"declared by both prw-test-(first|second) 1\.0\.0 and prw-test-"
    ):
        get_plugin_manager()


def test_registering_the_same_plugin_twice_is_a_no_op() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    plugin = FakePlugin([FakeAdapter("pa_once", "1.0.0")])
    assert register_plugin(pm, plugin, name="once") == register_plugin(pm, plugin, name="again") == "once"
    assert PluginRegistry.from_manager(pm).adapter_pins.count("pa_once@1.0.0") == 1

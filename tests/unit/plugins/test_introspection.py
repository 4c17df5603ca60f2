"""list_plugins: one function, read from the manager, for `prw plugins` and the admin API."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from prw_platform.plugins import AUTOLOAD_ENV, PluginInfo, get_plugin_manager, list_plugins, register_plugin
from tests.unit.plugins.fakes import FakeAdapter, FakePlugin, FakeProfile, install_distribution

BOTH_KINDS = """
    from prw_platform.plugins import hookimpl

    PRW_PLUGIN_API = 1

    class _Profile:
        name, version, identity_keys = "np_listed", "3", (("core:gtin",),)
        definitions = {}
        def normalize(self, claims):
            raise RuntimeError("listing plugins never calls this")

    class _Adapter:
        name, version = "pa_listed", "0.4.1"
        def supports(self, capture):
            return False
        def extract(self, capture, artifacts):
            raise RuntimeError("listing plugins never calls this")

    @hookimpl
    def prw_register_adapters():
        return [_Adapter()]

    @hookimpl
    def prw_register_profiles():
        return [_Profile(), type("_V4", (_Profile,), {"version": "4"})()]
"""


def test_an_installed_plugin_shows_its_distribution_kinds_pins_and_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    module = install_distribution(
        tmp_path, monkeypatch, distribution="prw-test-listed", version="0.4.1", module_source=BOTH_KINDS
    )
    infos = {info.name: info for info in list_plugins(get_plugin_manager())}
    assert infos[module] == PluginInfo(
        name=module,
        distribution="prw-test-listed",
        distribution_version="0.4.1",
        kinds=("adapter", "profile"),
        pins=("pa_listed@0.4.1", "np_listed@3", "np_listed@4"),
        hooks=("prw_register_adapters", "prw_register_profiles"),
        api_version=1,
    )


def test_built_ins_belong_to_the_platform_distribution() -> None:
    adapter, rule = list_plugins(get_plugin_manager(load_entrypoints=False))
    platform = ("prw-platform", importlib.metadata.version("prw-platform"))
    assert adapter == PluginInfo(
        "prw_builtin_listing_json",
        *platform,
        kinds=("adapter",),
        pins=("pa_prw_listing_json@1.0.0",),
        hooks=("prw_register_adapters",),
        api_version=1,
    )
    assert rule == PluginInfo(
        "prw_builtin_strong_identifier",
        *platform,
        kinds=("identity_rule",),
        pins=("strong_identifier_match@1",),
        hooks=("prw_identity_rules",),
        api_version=1,
    )


def test_a_directly_registered_plugin_has_no_distribution_and_only_the_kinds_it_serves() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    register_plugin(pm, FakePlugin(profiles=[FakeProfile("np_direct", "1")]), name="direct")
    register_plugin(pm, FakePlugin(), name="empty")
    infos = {info.name: info for info in list_plugins(pm)}
    assert (infos["direct"].distribution, infos["direct"].kinds, infos["direct"].pins) == (
        None,
        ("profile",),
        ("np_direct@1",),
    )
    assert (infos["empty"].kinds, infos["empty"].pins) == ((), ())
    assert infos["empty"].hooks == ("prw_register_adapters", "prw_register_profiles")


def test_plugins_are_listed_by_name() -> None:
    pm = get_plugin_manager(load_entrypoints=False)
    register_plugin(pm, FakePlugin([FakeAdapter("pa_b", "1.0.0")]), name="b_plugin")
    register_plugin(pm, FakePlugin([FakeAdapter("pa_a", "1.0.0")]), name="a_plugin")
    assert [info.name for info in list_plugins(pm)] == [
        "a_plugin",
        "b_plugin",
        "prw_builtin_listing_json",
        "prw_builtin_strong_identifier",
    ]

"""PluginRegistry: pins, several versions per distribution, duplicates, unknown pins and adapter selection."""

from __future__ import annotations

import pytest

from prw_platform.plugins import (
    CaptureView,
    DuplicatePin,
    InvalidPin,
    InvalidPluginResult,
    PluginRegistry,
    UnknownAdapterVersion,
    UnknownProfileVersion,
    get_plugin_manager,
    register_plugin,
)
from tests.unit.plugins.fakes import FakeAdapter, FakePlugin, FakeProfile

HTML = CaptureView(
    capture_id="cap_1", source_id="src_1", media_type="text/html", url="https://shop.example/p/1"
)


def registry_of(*plugins: tuple[str, object]) -> PluginRegistry:
    pm = get_plugin_manager(load_entrypoints=False)
    for name, plugin in plugins:
        register_plugin(pm, plugin, name=name)
    return PluginRegistry.from_manager(pm)


def test_one_plugin_may_serve_several_versions_of_the_same_adapter_and_profile() -> None:
    plugin = FakePlugin(
        [FakeAdapter("pa_shop", "1.0.0"), FakeAdapter("pa_shop", "1.2.0")],
        [FakeProfile("np_shoes", "1"), FakeProfile("np_shoes", "2")],
    )
    registry = registry_of(("shop", plugin))
    assert registry.adapter("pa_shop@1.0.0") is plugin.adapters[0]
    assert registry.adapter("pa_shop@1.2.0") is plugin.adapters[1]
    assert registry.profile_pins == ("np_shoes@2", "np_shoes@1")
    assert registry.provider_of("np_shoes@1") == "shop"


def test_latest_uses_version_order_not_string_order() -> None:
    adapters = [FakeAdapter("pa_shop", v) for v in ("1.9.3", "1.10.0", "1.2.12", "0.99.0")]
    profiles = [FakeProfile("np_shoes", v) for v in ("9", "10", "2")]
    registry = registry_of(("shop", FakePlugin(adapters, profiles)))
    assert registry.latest_adapter("pa_shop").version == "1.10.0"
    assert registry.latest_profile("np_shoes").version == "10"
    assert registry.latest("pa_shop") == "pa_shop@1.10.0"
    assert registry.latest("np_shoes") == "np_shoes@10"


def test_a_pin_offered_by_two_plugins_is_refused_naming_both() -> None:
    with pytest.raises(
        DuplicatePin, match=r"pa_shop@1\.0\.0 is offered by both plugin 'alpha' and plugin 'beta'"
    ):
        registry_of(
            ("alpha", FakePlugin([FakeAdapter("pa_shop", "1.0.0")])),
            ("beta", FakePlugin([FakeAdapter("pa_shop", "1.0.0")])),
        )


def test_a_pin_offered_twice_by_one_plugin_is_refused() -> None:
    with pytest.raises(DuplicatePin, match="np_shoes@1 is offered twice by plugin 'alpha'"):
        registry_of(
            ("alpha", FakePlugin(profiles=[FakeProfile("np_shoes", "1"), FakeProfile("np_shoes", "1")]))
        )


def test_an_unknown_adapter_pin_lists_what_is_installed() -> None:
    registry = registry_of(("shop", FakePlugin([FakeAdapter("pa_shop", "1.0.0")])))
    with pytest.raises(UnknownAdapterVersion) as info:
        registry.adapter("pa_shop@2.0.0")
    assert str(info.value) == (
        "adapter pa_shop@2.0.0 is not installed; installed adapters: pa_prw_listing_json@1.0.0, pa_shop@1.0.0"
    )
    assert info.value.code == "UNKNOWN_ADAPTER_VERSION"


def test_a_malformed_adapter_pin_says_what_a_pin_looks_like() -> None:
    with pytest.raises(UnknownAdapterVersion, match=r"\(an adapter pin is pa_<name>@MAJOR.MINOR.PATCH\)"):
        registry_of().adapter("pa_shop")


def test_an_unknown_profile_pin_lists_what_is_installed() -> None:
    registry = registry_of(("shoes", FakePlugin(profiles=[FakeProfile("np_shoes", "1")])))
    with pytest.raises(
        UnknownProfileVersion, match="profile np_shoes@3 is not installed; installed profiles: np_shoes@1"
    ):
        registry.profile("np_shoes@3")
    with pytest.raises(UnknownProfileVersion, match="no version of profile np_boots is installed"):
        registry.latest_profile("np_boots")
    with pytest.raises(UnknownAdapterVersion, match="no version of adapter pa_boots is installed"):
        registry.latest("pa_boots")


@pytest.mark.parametrize(
    "adapter",
    [
        FakeAdapter("shop", "1.0.0"),
        FakeAdapter("pa_shop", "1.0"),
        FakeAdapter("pa_Shop", "1.0.0"),
        FakeAdapter("pa_shop", "01.0.0"),
    ],
)
def test_a_malformed_adapter_pin_is_refused_naming_the_plugin(adapter: FakeAdapter) -> None:
    with pytest.raises(InvalidPin, match="plugin 'bad' offers adapter"):
        registry_of(("bad", FakePlugin([adapter])))


@pytest.mark.parametrize("version", ["0", "1.0", "v2", "01"])
def test_a_profile_version_is_a_positive_integer(version: str) -> None:
    with pytest.raises(InvalidPin, match="a profile pin is np_<name>@N"):
        registry_of(("bad", FakePlugin(profiles=[FakeProfile("np_shoes", version)])))


def test_a_hook_result_that_is_not_a_list_of_adapters_is_refused() -> None:
    plugin = FakePlugin()
    plugin.adapters = "pa_shop@1.0.0"  # type: ignore[assignment]
    with pytest.raises(InvalidPluginResult, match="must return a list"):
        registry_of(("bad", plugin))
    plugin.adapters = [object()]  # type: ignore[list-item]
    with pytest.raises(InvalidPluginResult, match="is not a SourceAdapter"):
        registry_of(("bad", plugin))


def test_selection_order_is_priority_then_name_then_newest_version() -> None:
    registry = registry_of(
        ("zeta", FakePlugin([FakeAdapter("pa_zeta", "1.0.0", priority=5)])),
        ("alpha", FakePlugin([FakeAdapter("pa_alpha", "1.0.0"), FakeAdapter("pa_alpha", "1.10.0")])),
        ("beta", FakePlugin([FakeAdapter("pa_beta", "3.0.0")])),
    )
    assert registry.adapter_pins == (
        "pa_zeta@1.0.0",
        "pa_alpha@1.10.0",
        "pa_alpha@1.0.0",
        "pa_beta@3.0.0",
        "pa_prw_listing_json@1.0.0",  # built-in generic adapter: priority -10
    )
    selected = registry.select_adapter(HTML)
    assert selected is not None
    assert (selected.name, selected.version) == ("pa_zeta", "1.0.0")


def test_selection_skips_adapters_that_do_not_support_the_capture() -> None:
    registry = registry_of(
        (
            "json",
            FakePlugin([FakeAdapter("pa_feed", "1.0.0", media_types=("application/json",), priority=9)]),
        ),
        ("html", FakePlugin([FakeAdapter("pa_page", "1.0.0")])),
    )
    selected = registry.select_adapter(HTML)
    assert selected is not None
    assert selected.name == "pa_page"


def test_the_pin_hint_wins_over_priority() -> None:
    registry = registry_of(
        ("a", FakePlugin([FakeAdapter("pa_first", "1.0.0", priority=9), FakeAdapter("pa_hinted", "1.0.0")]))
    )
    hinted = CaptureView("cap_1", "src_1", "text/html", adapter_hint="pa_hinted@1.0.0")
    selected = registry.select_adapter(hinted)
    assert selected is not None
    assert selected.name == "pa_hinted"


def test_a_hinted_adapter_that_does_not_support_the_capture_falls_back_to_the_order() -> None:
    registry = registry_of(
        (
            "a",
            FakePlugin(
                [FakeAdapter("pa_page", "1.0.0"), FakeAdapter("pa_feed", "1.0.0", ("application/json",))]
            ),
        )
    )
    selected = registry.select_adapter(
        CaptureView("cap_1", "src_1", "text/html", adapter_hint="pa_feed@1.0.0")
    )
    assert selected is not None
    assert selected.name == "pa_page"


def test_a_hint_that_is_not_installed_is_unknown_adapter_version() -> None:
    with pytest.raises(UnknownAdapterVersion):
        registry_of().select_adapter(CaptureView("cap_1", "src_1", "text/html", adapter_hint="pa_gone@1.0.0"))


def test_no_supporting_adapter_selects_none() -> None:
    assert registry_of().select_adapter(CaptureView("cap_1", "src_1", "image/png")) is None


class _RaisingAdapter(FakeAdapter):
    def supports(self, capture: CaptureView) -> bool:
        raise RuntimeError("broken supports()")


def test_an_adapter_whose_supports_raises_is_skipped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    registry = registry_of(
        ("broken", FakePlugin([_RaisingAdapter("pa_broken", "1.0.0", priority=9)])),
        ("page", FakePlugin([FakeAdapter("pa_page", "1.0.0")])),
    )
    selected = registry.select_adapter(HTML)
    assert selected is not None
    assert selected.name == "pa_page"
    assert "pa_broken@1.0.0 raised in supports()" in caplog.text


def test_the_built_in_listing_adapter_is_chosen_for_json_when_nothing_more_specific_supports_it() -> None:
    selected = registry_of().select_adapter(CaptureView("cap_1", "src_1", "application/json"))
    assert selected is not None
    assert f"{selected.name}@{selected.version}" == "pa_prw_listing_json@1.0.0"

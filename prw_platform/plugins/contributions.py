"""What each registered plugin contributes, asked through the hooks one plugin at a time.

Both the registry and ``list_plugins`` read plugins through this module, so a pin is attributed to the plugin
that offered it (DUPLICATE_PIN names both providers) and introspection never relies on hand-kept lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pluggy

from prw_platform.plugins.identity import IdentityRule
from prw_platform.plugins.pins import check_adapter_pin, check_profile_pin, check_rule_pin, pin
from prw_platform.plugins.types import InvalidPluginResult, NormalizationProfile, SourceAdapter

ADAPTERS_HOOK = "prw_register_adapters"
PROFILES_HOOK = "prw_register_profiles"
RULES_HOOK = "prw_identity_rules"


@dataclass(frozen=True, slots=True)
class PluginContribution:
    """The adapters, profiles and identity rules one plugin (by its registered name) offers."""

    plugin_name: str
    plugin: object
    adapters: tuple[SourceAdapter, ...]
    profiles: tuple[NormalizationProfile, ...]
    rules: tuple[IdentityRule, ...] = ()

    @property
    def adapter_pins(self) -> tuple[str, ...]:
        return tuple(pin(a.name, a.version) for a in self.adapters)

    @property
    def profile_pins(self) -> tuple[str, ...]:
        return tuple(pin(p.name, p.version) for p in self.profiles)

    @property
    def rule_pins(self) -> tuple[str, ...]:
        return tuple(pin(r.name, r.version) for r in self.rules)


def collect_contributions(pm: pluggy.PluginManager) -> list[PluginContribution]:
    """One entry per registered plugin, sorted by plugin name; pins are checked for shape (INVALID_PIN)."""
    contributions = []
    for plugin_name, plugin in sorted(pm.list_name_plugin(), key=lambda item: item[0]):
        if plugin is None:  # a blocked name
            continue
        adapters: list[SourceAdapter] = _offered(
            pm, plugin, plugin_name, ADAPTERS_HOOK, SourceAdapter, "(name, version, supports, extract)"
        )
        profiles: list[NormalizationProfile] = _offered(
            pm,
            plugin,
            plugin_name,
            PROFILES_HOOK,
            NormalizationProfile,
            "(name, version, definitions, identity_keys, normalize)",
        )
        rules: list[IdentityRule] = _offered(
            pm, plugin, plugin_name, RULES_HOOK, IdentityRule, "(name, version, decide)"
        )
        for adapter in adapters:
            check_adapter_pin(pin(adapter.name, adapter.version), provider=plugin_name)
        for profile in profiles:
            check_profile_pin(pin(profile.name, profile.version), provider=plugin_name)
        for rule in rules:
            check_rule_pin(pin(rule.name, rule.version), provider=plugin_name)
        contributions.append(
            PluginContribution(plugin_name, plugin, tuple(adapters), tuple(profiles), tuple(rules))
        )
    return contributions


def _offered(
    pm: pluggy.PluginManager, plugin: object, plugin_name: str, hook: str, kind: type[Any], members: str
) -> list[Any]:
    """What ``hook`` returns for this plugin, each checked to be a ``kind`` (INVALID_PLUGIN_RESULT)."""
    offered = _ask(pm, plugin, plugin_name, hook)
    for item in offered:
        if not isinstance(item, kind):
            article = "an" if kind.__name__[0] in "AEIOU" else "a"
            raise InvalidPluginResult(
                f"plugin {plugin_name!r}: {hook}() returned {item!r}, "
                f"which is not {article} {kind.__name__} {members}"
            )
    return offered


def implemented_hooks(pm: pluggy.PluginManager, plugin: object) -> tuple[str, ...]:
    return tuple(sorted(caller.name for caller in pm.get_hookcallers(plugin) or ()))


def _ask(pm: pluggy.PluginManager, plugin: object, plugin_name: str, hook: str) -> list[object]:
    """Call ``hook`` on this plugin alone (a subset caller keeps pluggy's own calling rules)."""
    if hook not in implemented_hooks(pm, plugin):
        return []
    others = [p for p in pm.get_plugins() if p is not plugin]
    caller = pm.subset_hook_caller(hook, remove_plugins=others)
    offered: list[object] = []
    for result in caller():
        if not isinstance(result, Sequence) or isinstance(result, str):
            raise InvalidPluginResult(f"plugin {plugin_name!r}: {hook}() must return a list, got {result!r}")
        offered.extend(result)
    return offered

"""``list_plugins``: what is installed, read from the manager itself (never a hand-kept list).

One function serves ``prw plugins`` (table or ``--json``) and the admin API.
"""

from __future__ import annotations

import importlib.metadata

import pluggy

from prw_platform.plugins.builtin import BUILTIN_DISTRIBUTION, BUILTIN_PLUGINS
from prw_platform.plugins.contributions import collect_contributions, implemented_hooks
from prw_platform.plugins.types import PluginInfo


def list_plugins(pm: pluggy.PluginManager) -> list[PluginInfo]:
    """One PluginInfo per registered plugin, sorted by plugin name: its distribution and that distribution's
    version, its kinds (``adapter``, ``profile``, ``identity_rule``), the pins it serves and the hooks it implements."""
    distributions = {
        id(plugin): (dist.project_name, dist.version) for plugin, dist in pm.list_plugin_distinfo()
    }
    builtins = {id(module) for _, module in BUILTIN_PLUGINS}
    infos = []
    for contribution in collect_contributions(pm):
        plugin = contribution.plugin
        distribution, version = distributions.get(id(plugin), (None, None))
        if distribution is None and id(plugin) in builtins:
            distribution, version = BUILTIN_DISTRIBUTION, _installed_version(BUILTIN_DISTRIBUTION)
        kinds = tuple(
            kind
            for kind, offered in (
                ("adapter", contribution.adapters),
                ("profile", contribution.profiles),
                ("identity_rule", contribution.rules),
            )
            if offered
        )
        api = getattr(plugin, "PRW_PLUGIN_API", None)
        infos.append(
            PluginInfo(
                name=contribution.plugin_name,
                distribution=distribution,
                distribution_version=version,
                kinds=kinds,
                pins=contribution.adapter_pins + contribution.profile_pins + contribution.rule_pins,
                hooks=implemented_hooks(pm, plugin),
                api_version=api if isinstance(api, int) and not isinstance(api, bool) else None,
            )
        )
    return infos


def _installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None

"""The plugin manager factory: never a global (STYLE.md: Plugins).

``get_plugin_manager()`` adds the hookspecs, loads the entry-point group ``prw`` (unless switched off), registers
the built-in plugins through the same hooks, and calls ``check_pending()``. Every plugin module declares the API
it was written for (``PRW_PLUGIN_API``); a missing or different declaration is refused before registration, and
the error names the distribution.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Mapping

import pluggy

from prw_platform.plugins import hookspecs
from prw_platform.plugins.builtin import BUILTIN_DISTRIBUTION, BUILTIN_PLUGINS
from prw_platform.plugins.types import PLUGIN_API_VERSION, PluginApiMismatch, PluginLoadError

ENTRYPOINT_GROUP = hookspecs.PROJECT_NAME
AUTOLOAD_ENV = "PRW_DISABLE_PLUGIN_AUTOLOAD"
_TRUE = frozenset({"1", "true", "yes", "on"})


def get_plugin_manager(load_entrypoints: bool = True) -> pluggy.PluginManager:
    """A fresh manager with the hookspecs, the installed plugins (entry-point group ``prw``) and the built-ins.

    ``load_entrypoints=False`` or ``PRW_DISABLE_PLUGIN_AUTOLOAD=1`` leaves installed plugins out (tests register
    what they need with ``register_plugin``); built-ins are always registered."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    if load_entrypoints and not autoload_disabled():
        load_entrypoint_plugins(pm)
    for name, module in BUILTIN_PLUGINS:
        register_plugin(pm, module, name=name, distribution=BUILTIN_DISTRIBUTION)
    pm.check_pending()
    return pm


def autoload_disabled(environ: Mapping[str, str] | None = None) -> bool:
    value = (os.environ if environ is None else environ).get(AUTOLOAD_ENV, "")
    return value.strip().lower() in _TRUE


def check_plugin_api(plugin: object, *, plugin_name: str, distribution: str | None) -> None:
    """Refuse a plugin that does not declare ``PRW_PLUGIN_API`` or declares another version than the platform's."""
    where = f"plugin {plugin_name!r} from distribution {distribution or '(none: registered directly)'}"
    declared = getattr(plugin, "PRW_PLUGIN_API", None)
    if declared is None:
        raise PluginApiMismatch(
            f"{where} does not declare PRW_PLUGIN_API; add `PRW_PLUGIN_API = {PLUGIN_API_VERSION}` to the "
            "module the entry point names, once it is written against this plugin API"
        )
    if isinstance(declared, bool) or not isinstance(declared, int) or declared != PLUGIN_API_VERSION:
        raise PluginApiMismatch(
            f"{where} declares PRW_PLUGIN_API = {declared!r}; this platform serves plugin API "
            f"{PLUGIN_API_VERSION}: install a release of that distribution written for API {PLUGIN_API_VERSION}"
        )


def register_plugin(
    pm: pluggy.PluginManager, plugin: object, *, name: str | None = None, distribution: str | None = None
) -> str:
    """Check the plugin's declared API, then register it; registering the same object again is a no-op."""
    if pm.is_registered(plugin):
        return pm.get_name(plugin) or ""
    plugin_name = name or getattr(plugin, "__name__", None) or repr(plugin)
    check_plugin_api(plugin, plugin_name=plugin_name, distribution=distribution)
    registered = pm.register(plugin, name=name)
    if registered is None:
        raise PluginLoadError(f"plugin {plugin_name!r} is blocked in this plugin manager")
    return registered


def load_entrypoint_plugins(pm: pluggy.PluginManager) -> None:
    """Import every ``prw`` entry point and check its API first; only when all pass does pluggy register them
    (with their distribution info, for ``list_plugins``)."""
    providers: dict[str, str] = {}
    for entry_point in sorted(
        importlib.metadata.entry_points(group=ENTRYPOINT_GROUP), key=lambda ep: ep.name
    ):
        dist = entry_point.dist
        distribution = f"{dist.name} {dist.version}" if dist is not None else "(unknown distribution)"
        if entry_point.name in providers and providers[entry_point.name] != distribution:
            raise PluginLoadError(
                f"entry point {entry_point.name!r} of group {ENTRYPOINT_GROUP!r} is declared by both "
                f"{providers[entry_point.name]} and {distribution}; one would silently hide the other"
            )
        providers[entry_point.name] = distribution
        try:
            plugin = entry_point.load()
        except Exception as exc:
            raise PluginLoadError(
                f"entry point {entry_point.name!r} = {entry_point.value!r} of {distribution} failed to import: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        check_plugin_api(plugin, plugin_name=entry_point.name, distribution=distribution)
    pm.load_setuptools_entrypoints(ENTRYPOINT_GROUP)

"""Plugins that ship with the platform. They are registered through the same hooks as installed plugins."""

from __future__ import annotations

from types import ModuleType

import prw_platform.plugins.builtin.listing_json as listing_json
import prw_platform.plugins.builtin.strong_identifier as strong_identifier

__all__ = ["BUILTIN_DISTRIBUTION", "BUILTIN_PLUGINS", "listing_json", "strong_identifier"]

BUILTIN_DISTRIBUTION = "prw-platform"

#: (registered plugin name, plugin module); ``get_plugin_manager`` registers each of them.
BUILTIN_PLUGINS: tuple[tuple[str, ModuleType], ...] = (
    ("prw_builtin_listing_json", listing_json),
    ("prw_builtin_strong_identifier", strong_identifier),
)

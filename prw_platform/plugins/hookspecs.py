# mypy: disable-error-code="empty-body"
"""Every hook a PRW plugin can implement. The docstring of each hook is its contract.

A plugin is a module (found through the entry-point group ``prw``) that declares ``PRW_PLUGIN_API`` and
implements some of these hooks with ``@hookimpl``. Built-in plugins are registered through the same hooks.
"""

from __future__ import annotations

import pluggy

from prw_platform.plugins.identity import IdentityRule
from prw_platform.plugins.types import NormalizationProfile, SourceAdapter

PROJECT_NAME = "prw"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def prw_register_adapters() -> list[SourceAdapter]:
    """Return the source adapters this plugin provides, each with its exact ``name`` and ``version``.

    All results are collected. One plugin may return several versions of the same adapter; two plugins may not
    claim the same ``name@version`` (the registry refuses it with DUPLICATE_PIN, naming both)."""


@hookspec
def prw_register_profiles() -> list[NormalizationProfile]:
    """Return the normalization profiles this plugin provides, each with its exact ``name`` and ``version``.

    All results are collected; the same uniqueness rule as adapters applies."""


@hookspec
def prw_identity_rules() -> list[IdentityRule]:
    """Return the automatic identity rules this plugin provides, each with its exact ``name`` and integer
    ``version`` (``strong_identifier_match@1``; see ``prw_platform.plugins.identity``).

    All results are collected; the same uniqueness rule as adapters applies. The newest installed version of each
    rule runs, in name order; the first verdict maps the listing."""

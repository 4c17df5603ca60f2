"""The ``prw`` entry point of ``prw-identity-scored``: registers the identity rule ``scored_match@1``."""

from __future__ import annotations

from prw_identity_scored.rule import ScoredMatch
from prw_platform.plugins import IdentityRule, hookimpl

#: The plugin API this module was written for; the manager refuses a mismatch (STYLE.md: Plugins).
PRW_PLUGIN_API = 1


@hookimpl
def prw_identity_rules() -> list[IdentityRule]:
    return [ScoredMatch()]

"""Built-in identity rule ``strong_identifier_match@1``: a listing whose strong identifiers (GTIN, else brand +
MPN) name exactly one item is that item.

The platform has already sent ambiguous identifiers (two items), conflicting page values and retired items
(INV-07) to review before any rule runs; this rule maps only what the identifiers alone settle.
"""

from __future__ import annotations

from prw_platform.plugins.hookspecs import hookimpl
from prw_platform.plugins.identity import IdentityEvidence, IdentityRule, IdentityVerdict
from prw_platform.plugins.types import PLUGIN_API_VERSION

PRW_PLUGIN_API = PLUGIN_API_VERSION


class StrongIdentifierMatch:
    name = "strong_identifier_match"
    version = "1"

    def decide(self, evidence: IdentityEvidence) -> IdentityVerdict | None:
        named = [c for c in evidence.candidates if c.matched_on]
        if len(named) != 1:
            return None
        (item,) = named
        return IdentityVerdict(
            item.item_id, f"{' and '.join(item.matched_on)} of the listing name item {item.item_id}"
        )


@hookimpl
def prw_identity_rules() -> list[IdentityRule]:
    return [StrongIdentifierMatch()]

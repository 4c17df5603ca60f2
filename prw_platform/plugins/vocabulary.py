"""Shared vocabulary helpers, so adapters and profiles read the same words the same way."""

from __future__ import annotations

import re

from prw_platform.plugins.types import Availability

_SCHEMA_ORG_PREFIX = re.compile(r"^(?:https?://)?(?:www\.)?schema\.org/", re.IGNORECASE)

# schema.org ItemAvailability members and the words shops print, folded to lower case without separators.
_AVAILABILITY: dict[str, Availability] = {
    "instock": "in_stock",
    "available": "in_stock",
    "onlineonly": "in_stock",
    "instoreonly": "in_stock",
    "outofstock": "out_of_stock",
    "soldout": "out_of_stock",
    "unavailable": "out_of_stock",
    "notavailable": "out_of_stock",
    "reserved": "out_of_stock",
    "preorder": "preorder",
    "presale": "preorder",
    "backorder": "backorder",
    "madetoorder": "backorder",
    "discontinued": "discontinued",
    "limitedavailability": "limited",
    "limited": "limited",
    "unknown": "unknown",
}


def availability_from_text(text: str) -> Availability | None:
    """The Availability for a schema.org URL (``https://schema.org/InStock``), a schema.org member name
    (``InStock``), an enum value (``in_stock``) or a common phrase (``Sold out``); None when unrecognized."""
    folded = _SCHEMA_ORG_PREFIX.sub("", text.strip())
    folded = re.sub(r"[\s_\-]+", "", folded).lower()
    return _AVAILABILITY.get(folded)

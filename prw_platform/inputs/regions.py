"""Country codes, as the collector reports where it ran and where its traffic left (if_source_fetch's
``execution_region`` and ``egress``, if_collector_bootstrap's example ``"country": "DE"``).

An ISO 3166-1 alpha-2 code: two upper-case ASCII letters. The check is the code's form, not the current list of
assigned codes (that list changes, and a user-assigned code such as ``XK`` is in real use); what a code means is
never a market: it says where a collector ran, nothing about where a product is sold.
"""

from __future__ import annotations

import re

from prw_platform.inputs.errors import InvalidInput

_ALPHA_2 = re.compile(r"[A-Z]{2}")


def check_country_code(code: str) -> str:
    """``code`` if it is an ISO 3166-1 alpha-2 code in upper case (``DE``, ``US``)."""
    if not _ALPHA_2.fullmatch(code):
        raise InvalidInput(
            f"country {code!r} is not an ISO 3166-1 alpha-2 code (two upper-case letters, e.g. DE)"
        )
    return code

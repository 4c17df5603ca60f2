"""Prices: an amount (Decimal, never float) and the currency text next to it.

The amount comes from price-parser (``1.234,56`` and ``$1,299.00`` both read right). The currency text is
price-parser's, widened by this profile's own symbol table where price-parser finds none or only part of one
(``CAN$`` rather than ``N$``, ``US $`` rather than ``$``, ``2963yen``). A range (``$10 - $20``, ``10 to 20 EUR``)
has no single amount: it is reported, not guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from price_parser import Price

from prw_profiles_core.currency import find_currency_text

_NUMBER = r"\d[\d.,'\u00a0\u202f ]*"
_CURRENCY_GAP = r"\s*(?:[^\d\s\-\u2013\u2014]{1,4}\s*)?"
_RANGE = re.compile(
    rf"(?<![\d.,])({_NUMBER}){_CURRENCY_GAP}(?:[-\u2013\u2014]|\bto\b|\bbis\b|\bà\b){_CURRENCY_GAP}({_NUMBER})",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class PriceReading:
    """One price text read: ``amount`` is None when there is no price or when the text is a range."""

    amount: Decimal | None
    currency_text: str | None
    is_range: bool = False


def read_price(text: str, currency_hint: str | None = None) -> PriceReading:
    """Read the amount and currency text of a price string; ``currency_hint`` is text that may name the
    currency when the price itself does not (a ``core:currency`` claim, the label next to the price)."""
    parsed = Price.fromstring(text, currency_hint=currency_hint)
    currency = _currency_text(text, parsed.currency) or (
        _currency_text(currency_hint, None) if currency_hint else None
    )
    if _is_range(text):
        return PriceReading(None, currency, is_range=True)
    return PriceReading(parsed.amount, currency)


def _currency_text(text: str, parsed: str | None) -> str | None:
    own = find_currency_text(text)
    if parsed and own and parsed in own and len(own) > len(parsed):
        return own  # a longer, more specific symbol around price-parser's (CAN$ around N$)
    return parsed or own


def _is_range(text: str) -> bool:
    for match in _RANGE.finditer(text):
        low, high = (Price.fromstring(part).amount for part in match.groups())
        # Two amounts, the second larger: a range. (``25-09`` or ``2 - 1`` are dates or tiers, not ranges.)
        if low is not None and high is not None and high > low:
            return True
    return False

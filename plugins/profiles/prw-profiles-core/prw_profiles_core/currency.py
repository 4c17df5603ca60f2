"""Currencies: ISO 4217 codes, and the symbols and words shops print for them.

A symbol maps to the set of ISO 4217 codes it may mean. One code: unambiguous (``€`` -> EUR, ``£`` -> GBP,
``円`` -> JPY). Several: ambiguous (``¥`` is JPY or CNY, ``kr`` is SEK, NOK, DKK or ISK); the profile then needs
context (a ``core:currency`` claim naming one of them) or reports ``CURRENCY_AMBIGUOUS``. The one explicit
default rule: a bare ``$`` (no prefix like ``US$``, ``CA$``, ``A$``) is read as USD when nothing else names the
currency (``DOLLAR_DEFAULT``). An empty set marks a token known not to be a current ISO 4217 currency (``BTC``,
``GBp`` pence, ``¢`` cents, historic livres): it is read as the currency text but never mapped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources


def _data(name: str) -> list[str]:
    text = resources.files("prw_profiles_core").joinpath(f"data/{name}").read_text("utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


#: Active ISO 4217 currency codes (data/iso4217_codes.txt).
ISO_4217_CODES: tuple[str, ...] = tuple(code for line in _data("iso4217_codes.txt") for code in line.split())
_ISO = frozenset(ISO_4217_CODES)

DOLLAR_DEFAULT = "USD"


def _load_symbols() -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for line in _data("currency_symbols.tsv"):
        symbol, codes = line.split("\t")
        table[symbol] = () if codes == "-" else tuple(codes.split())
        unknown = set(table[symbol]) - set(ISO_4217_CODES)
        if unknown:
            raise ValueError(f"currency_symbols.tsv: {symbol!r} maps to non-ISO 4217 codes {sorted(unknown)}")
    return table


# Symbol or word as printed -> the ISO 4217 codes it may mean (data/currency_symbols.tsv).
_SYMBOLS = _load_symbols()
_SYMBOL_PATTERN = re.compile("|".join(re.escape(t) for t in sorted(_SYMBOLS, key=lambda t: (-len(t), t))))
_ISO_PATTERN = re.compile(r"(?<![A-Za-z])(?:[A-Z]{3}|[a-z]{3})(?![A-Za-z])")
_FOLDED = {symbol.casefold(): codes for symbol, codes in _SYMBOLS.items()}
# One- and two-letter Latin tokens (``R``, ``Rs``, ``kr``) count only right next to a number (``R 273``).
_SHORT_LATIN = re.compile(r"^[A-Za-z]{1,2}\.?$")


@dataclass(frozen=True, slots=True)
class CurrencyReading:
    """What a currency text may mean: ``codes`` (one = unambiguous), and the default a rule supplies."""

    text: str
    codes: tuple[str, ...]
    default: str | None = None

    @property
    def code(self) -> str | None:
        """The single code when the text alone decides it."""
        return self.codes[0] if len(self.codes) == 1 else None


def read_currency(text: str) -> CurrencyReading | None:
    """Map a currency text (``€``, ``EUR``, ``US$``, ``zł``, ``kr``) to the codes it may mean; None if unknown."""
    stripped = text.strip()
    codes = _SYMBOLS.get(stripped)
    if codes is None and stripped.upper() in _ISO and (stripped.isupper() or stripped.islower()):
        codes = (stripped.upper(),)
    if codes is None:
        codes = _FOLDED.get(stripped.casefold())
    if codes is None:
        return None
    return CurrencyReading(stripped, codes, DOLLAR_DEFAULT if stripped == "$" else None)


def find_currency_text(text: str) -> str | None:
    """The longest known currency symbol, word or ISO code standing as a token in ``text`` (leftmost on ties)."""
    found: list[tuple[int, int, str]] = []
    for position in range(len(text)):
        match = _SYMBOL_PATTERN.match(text, position)
        if match and _stands_alone(text, match.start(), match.end()):
            found.append((-len(match.group(0)), match.start(), match.group(0)))
    for match in _ISO_PATTERN.finditer(text):
        if match.group(0).upper() in _ISO:
            found.append((-3, match.start(), match.group(0)))
    return min(found)[2] if found else None


def _stands_alone(text: str, start: int, end: int) -> bool:
    token = text[start:end]
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    if token[0].isalpha() and before.isalpha():
        return False
    if token[-1].isalpha() and after.isalpha():
        return False
    if _SHORT_LATIN.match(token):
        # ``1.198,- Kr``: a Scandinavian or German ``,-`` (no cents) may sit between the number and the token.
        left = re.sub(r"[\s,.\-]+$", "", text[:start])
        return left[-1:].isdigit() or text[end:].lstrip()[:1].isdigit()
    return True

"""Amounts as Decimal (through price-parser) and currencies as ISO 4217 codes, with ambiguity made visible."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from urllib.parse import urlsplit

from price_parser import Price

# Active ISO 4217 codes; a three-letter text outside this set is not taken for a currency.
_ISO_4217_CODES = """
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD
CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ
GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR
LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN
PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL
THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL
"""
ISO_4217 = frozenset(_ISO_4217_CODES.split())

# Symbols that name one currency in practice.
_SYMBOLS: dict[str, str] = {
    "€": "EUR",
    "£": "GBP",
    "₹": "INR",
    "₽": "RUB",
    "₩": "KRW",
    "₺": "TRY",
    "₪": "ILS",
    "₫": "VND",
    "₱": "PHP",
    "฿": "THB",
    "₴": "UAH",
    "zł": "PLN",
    "Kč": "CZK",
    "Ft": "HUF",
    "R$": "BRL",
    "US$": "USD",
    "C$": "CAD",
    "CA$": "CAD",
    "A$": "AUD",
    "AU$": "AUD",
    "NZ$": "NZD",
    "HK$": "HKD",
    "S$": "SGD",
    "NT$": "TWD",
    "MX$": "MXN",
    "RM": "MYR",
    # The rouble's Cyrillic abbreviations (rub., rub, r.).
    "\u0440\u0443\u0431.": "RUB",
    "\u0440\u0443\u0431": "RUB",
    "\u0440.": "RUB",
}
# Symbols shared by several currencies: resolved by the page's region when it has one, else a default (or
# none), always with a diagnostic.
_AMBIGUOUS: dict[str, tuple[str | None, dict[str, str]]] = {
    "$": (
        "USD",
        {
            "US": "USD",
            "CA": "CAD",
            "AU": "AUD",
            "NZ": "NZD",
            "MX": "MXN",
            "SG": "SGD",
            "HK": "HKD",
            "AR": "ARS",
        },
    ),
    "kr": (None, {"SE": "SEK", "NO": "NOK", "DK": "DKK", "IS": "ISK"}),
    "kr.": (None, {"SE": "SEK", "NO": "NOK", "DK": "DKK", "IS": "ISK"}),
    "¥": (None, {"JP": "JPY", "CN": "CNY"}),
    "￥": (None, {"JP": "JPY", "CN": "CNY"}),
}
_MACHINE_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")
_LANG_REGION = re.compile(r"^[A-Za-z]{2,3}[-_]([A-Za-z]{2})\b")


@dataclass(frozen=True, slots=True)
class CurrencyReading:
    code: str | None
    #: Why the code is uncertain or absent (an ambiguous symbol, an unknown code); None when it is plain.
    note: str | None = None


def parse_amount(raw: str | int | float | bool) -> Decimal | None:
    """The amount in ``raw``: a JSON number, a machine-readable decimal (``"1000.00"``, where ``.`` is always
    the decimal mark, as schema.org requires) or display text (``"$1,000.00"``, ``"48,00"``) read by
    price-parser. None when there is no amount."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return Decimal(raw)
    if isinstance(raw, float):
        amount = Decimal(repr(raw))
        return amount if amount.is_finite() else None
    text = raw.strip()
    if not text:
        return None
    if _MACHINE_NUMBER.fullmatch(text):
        try:
            return Decimal(text)
        except InvalidOperation:
            return None
    parsed = Price.fromstring(text).amount
    return parsed if parsed is not None and parsed.is_finite() else None


def currency_symbol_in(text: str) -> str | None:
    """The currency symbol or code price-parser sees in display text (``"$29.99"`` gives ``"$"``)."""
    return Price.fromstring(text).currency


def region_hint(url: str | None, lang: str | None) -> str | None:
    """The shop's country, to resolve an ambiguous symbol: the URL's country-code top-level domain, else the
    region of the page's ``<html lang>`` (``en-CA``)."""
    if url:
        host = urlsplit(url).hostname or ""
        tld = host.rsplit(".", 1)[-1]
        if len(tld) == 2 and tld.isalpha():
            return "GB" if tld == "uk" else tld.upper()  # .uk is the one ccTLD that is not the ISO 3166 code
    if lang:
        match = _LANG_REGION.match(lang.strip())
        if match:
            return match.group(1).upper()
    return None


def read_currency(raw: str, region: str | None) -> CurrencyReading:
    """An ISO 4217 code for ``raw`` (a code such as ``usd``, or a symbol such as ``€``)."""
    text = raw.strip()
    if len(text) == 3 and text.isalpha() and text.upper() in ISO_4217:
        return CurrencyReading(text.upper())
    if text in _SYMBOLS:
        return CurrencyReading(_SYMBOLS[text])
    folded = text.lower() if text.lower() in ("kr", "kr.") else text
    if folded in _AMBIGUOUS:
        default, by_region = _AMBIGUOUS[folded]
        if region in by_region:
            code = by_region[region]
            return CurrencyReading(
                code, f"currency symbol {text!r} is ambiguous; {code} from the page's region {region}"
            )
        if default is not None:
            return CurrencyReading(default, f"currency symbol {text!r} is ambiguous; assumed {default}")
        return CurrencyReading(None, f"currency symbol {text!r} is ambiguous and the page names no region")
    return CurrencyReading(None, f"currency {text!r} is neither an ISO 4217 code nor a known symbol")

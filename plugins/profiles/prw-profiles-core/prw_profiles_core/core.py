"""``np_core@1``: identifiers, title, price, currency and availability, for every product class."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import get_args

from prw_platform.plugins import (
    AttributeDefinition,
    Availability,
    Claim,
    ClaimValue,
    NormalizationProblem,
    NormalizedAttribute,
    availability_from_text,
    claim_confidence,
    weigh,
)
from prw_profiles_core import problems as codes
from prw_profiles_core.currency import ISO_4217_CODES, CurrencyReading, find_currency_text, read_currency
from prw_profiles_core.gtin import read_gtin
from prw_profiles_core.price import read_price
from prw_profiles_core.selection import Choice, Reading, choose, choose_weighed

CORE_DEFINITIONS: dict[str, AttributeDefinition] = {
    d.key: d
    for d in (
        AttributeDefinition("core:title", 1, "string", "Product title, whitespace collapsed."),
        AttributeDefinition(
            "core:brand", 1, "string", "Brand, whitespace collapsed; compared case-insensitively."
        ),
        AttributeDefinition(
            "core:mpn", 1, "identifier", "Manufacturer part number: whitespace removed, upper case."
        ),
        AttributeDefinition(
            "core:gtin",
            1,
            "identifier",
            "GTIN-8/12/13/14 (ISBN-13 included), check digit verified, as GTIN-14.",
        ),
        AttributeDefinition("core:price", 1, "decimal", "Offer price amount as a Decimal, in core:currency."),
        AttributeDefinition(
            "core:currency", 1, "enum", "ISO 4217 code of core:price.", allowed_values=ISO_4217_CODES
        ),
        AttributeDefinition(
            "core:availability", 1, "enum", "Offer availability.", allowed_values=get_args(Availability)
        ),
    )
}
CORE_IDENTITY_KEYS: tuple[tuple[str, ...], ...] = (("core:gtin",), ("core:brand", "core:mpn"))

_WHITESPACE = re.compile(r"\s+")


def normalize_core(
    claims: Sequence[Claim],
    definitions: Mapping[str, AttributeDefinition],
    problems: list[NormalizationProblem],
    *,
    weighed: bool = False,
) -> list[NormalizedAttribute]:
    """The core attributes of ``claims``, in definition order; what cannot be normalized goes to ``problems``.
    ``weighed`` (``np_core@2``): values are chosen by weighed confidence and carry it (``choose_weighed``)."""
    pick = choose_weighed if weighed else choose
    by_attribute: dict[str, list[Claim]] = {}
    for claim in claims:
        by_attribute.setdefault(claim.attribute, []).append(claim)

    chosen: dict[str, Choice | None] = {}
    for key, reader in (
        ("core:title", _read_text),
        ("core:brand", _read_text),
        ("core:mpn", _read_mpn),
        ("core:gtin", _read_gtin),
        ("core:availability", _read_availability),
    ):
        readings = [r for c in by_attribute.get(key, []) if (r := reader(c, problems)) is not None]
        chosen[key] = pick(key, readings, problems)
    chosen["core:price"], chosen["core:currency"] = _price_and_currency(
        by_attribute.get("core:price", []), by_attribute.get("core:currency", []), problems, weighed
    )
    return [
        NormalizedAttribute(
            key, choice.value, definitions[key].version, None, choice.locators, choice.confidence
        )
        for key in CORE_DEFINITIONS
        if (choice := chosen.get(key)) is not None
    ]


def clean_text(value: str) -> str:
    """Drop control characters, collapse whitespace."""
    printable = "".join(ch for ch in value if unicodedata.category(ch) != "Cc" or ch.isspace())
    return _WHITESPACE.sub(" ", printable).strip()


def _problem(claim: Claim, code: str, message: str) -> NormalizationProblem:
    return NormalizationProblem(claim.attribute, code, message, raw_value=claim.value)


def _currency_problem(claim: Claim, code: str, message: str) -> NormalizationProblem:
    """Currency problems belong to core:currency, also when the currency was read from a core:price claim."""
    return NormalizationProblem(
        "core:currency", code, f"{message} (at {claim.evidence_locator})", claim.value
    )


def _as_text(claim: Claim, problems: list[NormalizationProblem], *, numbers: bool = False) -> str | None:
    value: ClaimValue = claim.value
    if isinstance(value, bool) or not (isinstance(value, str) or (numbers and isinstance(value, int))):
        problems.append(_problem(claim, codes.WRONG_VALUE_TYPE, f"{type(value).__name__} is not text"))
        return None
    text = clean_text(str(value))
    if not text:
        problems.append(_problem(claim, codes.EMPTY_VALUE, "the claim is empty"))
        return None
    return text


def _read_text(claim: Claim, problems: list[NormalizationProblem]) -> Reading | None:
    text = _as_text(claim, problems)
    if text is None:
        return None
    return Reading(text, text.casefold(), claim.evidence_locator, claim.value, claim_confidence(claim))


def _read_mpn(claim: Claim, problems: list[NormalizationProblem]) -> Reading | None:
    text = _as_text(claim, problems, numbers=True)
    if text is None:
        return None
    mpn = _WHITESPACE.sub("", text).upper()
    return Reading(mpn, mpn, claim.evidence_locator, claim.value, claim_confidence(claim))


def _read_gtin(claim: Claim, problems: list[NormalizationProblem]) -> Reading | None:
    value = claim.value
    if isinstance(value, bool) or not isinstance(value, str | int):
        problems.append(
            _problem(claim, codes.WRONG_VALUE_TYPE, f"a GTIN is text, not {type(value).__name__}")
        )
        return None
    reading = read_gtin(value if isinstance(value, int) else clean_text(value))
    if reading.gtin14 is None:
        code = codes.GTIN_INVALID_CHECK_DIGIT if reading.is_check_digit_error else codes.GTIN_INVALID_FORMAT
        problems.append(_problem(claim, code, reading.problem or "not a GTIN"))
        return None
    return Reading(
        reading.gtin14, reading.gtin14, claim.evidence_locator, claim.value, claim_confidence(claim)
    )


def _read_availability(claim: Claim, problems: list[NormalizationProblem]) -> Reading | None:
    text = _as_text(claim, problems)
    if text is None:
        return None
    availability = availability_from_text(text)
    if availability is None:
        problems.append(_problem(claim, codes.AVAILABILITY_UNKNOWN, f"{text!r} is not a known availability"))
        return None
    return Reading(availability, availability, claim.evidence_locator, claim.value, claim_confidence(claim))


def _read_amount(
    claim: Claim, problems: list[NormalizationProblem]
) -> tuple[Reading | None, CurrencyReading | None]:
    """The amount of one price claim, and the currency its own text shows (core:currency claims are read
    separately, so a currency is attributed to the claim it was printed in)."""
    value = claim.value
    if isinstance(value, bool):
        problems.append(_problem(claim, codes.WRONG_VALUE_TYPE, "a price is not a boolean"))
        return None, None
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            problems.append(_problem(claim, codes.PRICE_UNPARSEABLE, f"{value!r} is not a finite amount"))
            return None, None
        amount: Decimal | None = Decimal(str(value))
        currency_text = None
    else:
        text = _as_text(claim, problems)
        if text is None:
            return None, None
        reading = read_price(text)
        if reading.is_range:
            problems.append(_problem(claim, codes.PRICE_RANGE, f"{value!r} is a price range, not one price"))
        amount, currency_text = reading.amount, reading.currency_text
        if amount is None and not reading.is_range:
            problems.append(_problem(claim, codes.PRICE_UNPARSEABLE, f"no amount found in {value!r}"))
    currency = read_currency(currency_text) if currency_text else None
    if amount is None:
        return None, currency
    if amount < 0 or not amount.is_finite():
        problems.append(_problem(claim, codes.PRICE_UNPARSEABLE, f"{value!r} is not a valid amount"))
        return None, currency
    return Reading(amount, amount, claim.evidence_locator, claim.value, claim_confidence(claim)), currency


def _price_and_currency(
    price_claims: Sequence[Claim],
    currency_claims: Sequence[Claim],
    problems: list[NormalizationProblem],
    weighed: bool = False,
) -> tuple[Choice | None, Choice | None]:
    amounts: list[Reading] = []
    currencies: list[tuple[CurrencyReading, Claim]] = []
    for claim in price_claims:
        amount, currency = _read_amount(claim, problems)
        if amount is not None:
            amounts.append(amount)
        if currency is not None:
            currencies.append((currency, claim))
    for claim in currency_claims:
        text = _as_text(claim, problems)
        if text is None:
            continue
        currency = read_currency(text) or read_currency(find_currency_text(text) or "")
        if currency is None:
            problems.append(_problem(claim, codes.CURRENCY_UNKNOWN, f"{text!r} is not a known currency"))
        else:
            currencies.append((currency, claim))
    if weighed:
        return choose_weighed("core:price", amounts, problems), _weigh_currency(currencies, problems)
    return choose("core:price", amounts, problems), _choose_currency(currencies, problems)


def _choose_currency(
    currencies: Sequence[tuple[CurrencyReading, Claim]], problems: list[NormalizationProblem]
) -> Choice | None:
    """Definite readings (one code) decide, by the selection rule; ambiguous ones (``¥``, ``kr``, ``$``) must
    agree with that choice. With no definite reading, the codes every ambiguous reading allows decide when
    only one is left; else the bare-dollar default (USD) when every reading is ``$``; else CURRENCY_AMBIGUOUS."""
    for currency, claim in currencies:
        if not currency.codes:
            problems.append(
                _currency_problem(
                    claim, codes.CURRENCY_UNKNOWN, f"{currency.text!r} is not a current ISO 4217 code"
                )
            )
    readable = [(currency, claim) for currency, claim in currencies if currency.codes]
    definite = [
        Reading(code, code, claim.evidence_locator, claim.value)
        for currency, claim in readable
        if (code := currency.code) is not None
    ]
    ambiguous = [(currency, claim) for currency, claim in readable if currency.code is None]
    if definite:
        choice = choose("core:currency", definite, problems)
        assert choice is not None
        agreeing = [claim.evidence_locator for currency, claim in ambiguous if choice.value in currency.codes]
        for currency, claim in ambiguous:
            if choice.value not in currency.codes:
                problems.append(
                    _currency_problem(
                        claim,
                        codes.CONFLICTING_CLAIMS,
                        f"{currency.text!r} ({'/'.join(currency.codes)}) disagrees with {choice.value}",
                    )
                )
        return Choice(choice.value, choice.locators + tuple(agreeing))
    if not ambiguous:
        return None
    allowed = [code for code in ambiguous[0][0].codes if all(code in c.codes for c, _ in ambiguous)]
    locators = tuple(claim.evidence_locator for _, claim in ambiguous)
    if len(allowed) == 1:
        return Choice(allowed[0], locators)
    defaults = {currency.default for currency, _ in ambiguous}
    if len(defaults) == 1 and (default := defaults.pop()) is not None and default in allowed:
        return Choice(default, locators)
    texts = ", ".join(sorted({currency.text for currency, _ in ambiguous}))
    first_claim = ambiguous[0][1]
    problems.append(
        _currency_problem(
            first_claim,
            codes.CURRENCY_AMBIGUOUS,
            f"{texts} may mean {'/'.join(allowed) or 'no common currency'}; "
            "a core:currency claim with an ISO 4217 code would decide",
        )
    )
    return None


#: ``np_core@2``: a currency read from an ambiguous symbol alone (``¥`` with no other hint: the one code every
#: reading allows), and from the bare-``$`` default alone. Never enough to publish (the thresholds are 0.8).
SYMBOL_NARROWED = 0.6
DEFAULT_ALONE = 0.4


def _weigh_currency(
    currencies: Sequence[tuple[CurrencyReading, Claim]], problems: list[NormalizationProblem]
) -> Choice | None:
    """``np_core@2``: definite readings (one code) are witnesses with their claim's confidence, one per place; an
    ambiguous reading that does not allow the winning code disagrees with it (a witness of another value). With
    no definite reading, the one code every ambiguous reading allows, else the bare-``$`` default, at a
    confidence that is never enough to publish: a currency is published from the page's own signals, never from
    a default alone."""
    for currency, claim in currencies:
        if not currency.codes:
            problems.append(
                _currency_problem(
                    claim, codes.CURRENCY_UNKNOWN, f"{currency.text!r} is not a current ISO 4217 code"
                )
            )
    readable = [(currency, claim) for currency, claim in currencies if currency.codes]
    definite = [(currency.code, claim) for currency, claim in readable if currency.code is not None]
    ambiguous = [(currency, claim) for currency, claim in readable if currency.code is None]
    if definite:
        # One place is one witness: a price "53,11 €" and a currency claim of its "€" at the same locator.
        places: dict[tuple[str, str], tuple[str, float, Claim]] = {}
        for code, claim in definite:
            known = places.get((claim.evidence_locator, code))
            if known is None or claim_confidence(claim) > known[1]:
                places[(claim.evidence_locator, code)] = (code, claim_confidence(claim), claim)
        witnesses = list(places.values())
        leading = weigh([(code, confidence) for code, confidence, _ in witnesses])[0].key
        for currency, claim in ambiguous:
            if leading not in currency.codes:
                problems.append(
                    _currency_problem(
                        claim,
                        codes.CONFLICTING_CLAIMS,
                        f"{currency.text!r} ({'/'.join(currency.codes)}) disagrees with {leading}",
                    )
                )
                witnesses.append((f"{'/'.join(currency.codes)}", claim_confidence(claim), claim))
        readings = [
            Reading(code, code, claim.evidence_locator, claim.value, c) for code, c, claim in witnesses
        ]
        return choose_weighed("core:currency", readings, problems)
    fallback = _choose_currency(currencies, problems)
    if fallback is None:
        return None
    allowed = set(ambiguous[0][0].codes).intersection(*(currency.codes for currency, _ in ambiguous[1:]))
    confidence = SYMBOL_NARROWED if allowed == {fallback.value} else DEFAULT_ALONE
    return Choice(fallback.value, fallback.locators, confidence)

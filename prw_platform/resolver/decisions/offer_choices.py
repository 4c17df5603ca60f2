"""A reviewer's choice of a listing's offer values on an ``offer_uncertain`` case (if_review_decision ``offer`` and
``not_an_offer``, AW-01), and the latest such choice for a listing (re-resolution keeps it while the page's offer
claims stay the same).

The reviewer picks, per offer attribute, one value a claim of the case states, as the page had it; price and
currency travel together. The chosen texts become the listing's values: the one amount the price text prints
(``.`` or ``,`` as decimal separator; a text with no amount, several, or an ambiguous ``1.234`` is refused), the
currency code as claimed, the availability through the platform's vocabulary. ``not_an_offer``: the page offers
nothing, the listing keeps no price, currency or availability. The choice is recorded in the decision's details
(``offer``) with the case's offer claims, the evidence it was made on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from prw_platform.plugins.types import Availability
from prw_platform.plugins.vocabulary import availability_from_text
from prw_platform.resolver.decisions.errors import DecisionError

PRICE, CURRENCY, AVAILABILITY = "core:price", "core:currency", "core:availability"
OFFER_KEYS = (PRICE, CURRENCY, AVAILABILITY)
#: The case kind whose decisions may carry an offer choice.
OFFER_UNCERTAIN = "offer_uncertain"

_CURRENCY_CODE = re.compile(r"^[A-Z]{3}$")
_AMOUNT = re.compile(r"\d[\d.,'\s\u00a0\u202f]*")
_GROUPING = re.compile(r"['\s\u00a0\u202f]")

#: The offer claims of a case or a capture: by attribute, each claimed value's text, sorted and once.
OfferClaims = Mapping[str, tuple[str, ...]]


class InvalidOfferChoice(DecisionError):
    """The chosen offer values are not among the case's claims, or cannot be a listing's values: 422, nothing
    written."""

    code = "VALIDATION_FAILED"
    status = 422


@dataclass(frozen=True, slots=True)
class OfferChoice:
    """The listing's offer values a reviewer chose, and the offer claims they chose among."""

    #: The claim texts chosen, by attribute (empty when ``not_an_offer``).
    chosen: Mapping[str, str]
    claims: OfferClaims
    not_an_offer: bool = False
    price: Decimal | None = None
    currency: str | None = None
    availability: Availability | None = None
    #: The decision that recorded the choice (set when read back).
    decision_id: str | None = field(default=None, compare=False)

    def document(self) -> dict[str, Any]:
        """The decision's ``details.offer``."""
        return {
            "chosen": dict(self.chosen),
            "not_an_offer": self.not_an_offer,
            "price": None if self.price is None else str(self.price),
            "currency": self.currency,
            "availability": self.availability,
            "claims": {key: list(values) for key, values in self.claims.items()},
        }

    @property
    def keys(self) -> frozenset[str]:
        """The offer attributes the choice settles (all three for ``not_an_offer``)."""
        return frozenset(OFFER_KEYS) if self.not_an_offer else frozenset(self.chosen)


def claim_text(value: object) -> str:
    """A claimed value as a reviewer picks it: its text, or its JSON for a number or a boolean."""
    return value if isinstance(value, str) else json.dumps(value)


def offer_claims(claims: Iterable[Mapping[str, Any]]) -> OfferClaims:
    """The offer claims among claim documents (``attribute``, ``value``): the same page gives the same result."""
    texts: dict[str, set[str]] = {}
    for claim in claims:
        attribute = claim.get("attribute")
        if attribute in OFFER_KEYS and claim.get("value") is not None:
            texts.setdefault(str(attribute), set()).add(claim_text(claim["value"]))
    return {key: tuple(sorted(texts[key])) for key in OFFER_KEYS if key in texts}


def choose_offer(
    claims: Iterable[Mapping[str, Any]], chosen: Mapping[str, str] | None, *, not_an_offer: bool
) -> OfferChoice:
    """The reviewer's choice validated against the case's claim documents: every chosen value is one a claim of
    its attribute states; a price comes with a currency and a currency with a price."""
    offered = offer_claims(claims)
    chosen = dict(chosen or {})
    if not_an_offer:
        if chosen:
            raise InvalidOfferChoice("not_an_offer takes no offer values")
        return OfferChoice({}, offered, not_an_offer=True)
    if not chosen:
        raise InvalidOfferChoice("an offer choice names at least one offer value, or not_an_offer")
    for key, value in chosen.items():
        if key not in OFFER_KEYS:
            raise InvalidOfferChoice(f"{key} is not an offer attribute ({', '.join(OFFER_KEYS)})")
        if value not in offered.get(key, ()):
            raise InvalidOfferChoice(f"no claim of the case states {key} {value!r}")
    if (PRICE in chosen) != (CURRENCY in chosen):
        raise InvalidOfferChoice("a price and its currency are chosen together")
    return OfferChoice(
        chosen,
        offered,
        price=_amount(chosen[PRICE]) if PRICE in chosen else None,
        currency=_currency(chosen[CURRENCY]) if CURRENCY in chosen else None,
        availability=_availability(chosen[AVAILABILITY]) if AVAILABILITY in chosen else None,
    )


def stored_offer_choice(document: Mapping[str, Any], decision_id: str) -> OfferChoice:
    """An offer choice as a decision recorded it (``details.offer``, ``OfferChoice.document``)."""
    price = document.get("price")
    return OfferChoice(
        chosen=dict(document.get("chosen") or {}),
        claims={key: tuple(values) for key, values in (document.get("claims") or {}).items()},
        not_an_offer=bool(document.get("not_an_offer")),
        price=None if price is None else Decimal(price),
        currency=document.get("currency"),
        availability=document.get("availability"),
        decision_id=decision_id,
    )


def _amount(text: str) -> Decimal:
    """The one amount a price text prints; the last separator followed by one or two digits is the decimal one."""
    found = [m.group().strip(".,'\u00a0\u202f \t") for m in _AMOUNT.finditer(text)]
    if len(found) != 1:
        raise InvalidOfferChoice(f"the price {text!r} does not print exactly one amount")
    digits = _GROUPING.sub("", found[0])
    separators = [c for c in digits if c in ".,"]
    if not separators:
        return Decimal(digits)
    last = separators[-1]
    whole, _, fraction = digits.rpartition(last)
    if len(fraction) in (1, 2) and separators.count(last) == 1:
        return Decimal(f"{whole.replace('.', '').replace(',', '')}.{fraction}")
    if len(fraction) == 3 and len(set(separators)) == 1 and len(separators) > 1:
        return Decimal(digits.replace(last, ""))
    raise InvalidOfferChoice(f"the price {text!r} has no unambiguous amount")


def _currency(text: str) -> str:
    code = text.strip().upper()
    if not _CURRENCY_CODE.match(code):
        raise InvalidOfferChoice(f"the currency {text!r} is not a three-letter currency code")
    return code


def _availability(text: str) -> Availability:
    value = availability_from_text(text)
    if value is None:
        raise InvalidOfferChoice(f"the availability {text!r} is not one the platform knows")
    return value

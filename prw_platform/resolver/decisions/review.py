"""A human decision on a review case (if_review_decision, AW-01 for humans): the request's actions turned into the
decision core's ``DecideCase``, with the attribute definitions of the profile the case was normalized with.

Actions (if_review_decision's body):

- ``map_to``: map the case's listing to an existing item (``map_to``);
- ``accept``: accept the resolver's proposal, the top-ranked candidate;
- ``create_item``: create an item from the case's normalized facts (``create_item.id`` may name it) and map the
  listing to it;
- ``correct``: the same with ``corrections`` (``{"core:mpn": "...", "storage:heatsink": true}``) applied to the
  case's facts first; ``map_to``, if given, must name the item being created;
- ``reject``: close the case without a mapping.

On an ``offer_uncertain`` case any action may carry ``offer`` (``{"core:price": "€25.00", "core:currency":
"EUR"}``: for each attribute one of the values the case's claims state, price and currency together) or
``not_an_offer``; the case's listing gets the chosen values (none with ``not_an_offer``) in the same decision
(``offer_choices``). A value no claim states, or an offer on another kind of case, is refused (422, nothing
written).

INV-02 is always checked for a human decision: the new item's attributes (corrections included) must conform to
the definitions of the pinned profile, and a profile that is not installed refuses the decision (409 naming
INV-02). The case's content (candidates, normalized facts) is written once when a rule opens it and never
changes, so reading it before the transaction is safe: the transaction's case revision check (INV-04) decides
whether the decision still applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Final, Literal

from prw_platform.db.database import Database
from prw_platform.plugins.types import AttributeDefinition, NormalizedAttribute
from prw_platform.resolver.decisions import cases
from prw_platform.resolver.decisions.commands import DecideCase, ItemFacts
from prw_platform.resolver.decisions.errors import CaseNotFound, DecisionError, InvariantViolation
from prw_platform.resolver.decisions.offer_choices import OFFER_UNCERTAIN, OfferChoice, choose_offer

ReviewAction = Literal["accept", "correct", "create_item", "map_to", "reject"]
REVIEW_ACTIONS: Final[tuple[ReviewAction, ...]] = ("accept", "correct", "create_item", "map_to", "reject")

Definitions = Mapping[str, AttributeDefinition]
#: A profile pin (``core@1``) -> its attribute definitions; raises when the profile is not installed.
ProfileDefinitions = Callable[[str], Definitions]

#: Item columns (not attributes) among the profile's keys; the resolution identity rules use the same keys.
GTIN, BRAND, MPN, TITLE = "core:gtin", "core:brand", "core:mpn", "core:title"
_ITEM_COLUMNS: Final = frozenset({GTIN, BRAND, MPN, TITLE})
#: Offer fields belong to the listing, never to the item.
_OFFER_FIELDS: Final = frozenset({"core:price", "core:currency", "core:availability"})


class InvalidReviewDecision(DecisionError):
    """The request cannot be a decision on this case (an action without what it needs): 422, nothing written."""

    code = "VALIDATION_FAILED"
    status = 422


@dataclass(frozen=True, slots=True)
class ReviewDecision:
    """if_review_decision's body, with the actor taken from the operator session (never from the body)."""

    case_id: str
    expected_revision: int
    action: ReviewAction
    rationale: str
    actor: str
    corrections: Mapping[str, Any] = field(default_factory=dict)
    create_item_id: str | None = None
    family: str | None = None
    map_to: str | None = None
    idempotency_key: str | None = None
    evidence: tuple[str, ...] = ()
    #: ``offer_uncertain`` cases: the chosen claim text by offer attribute, or ``not_an_offer``.
    offer: Mapping[str, str] | None = None
    not_an_offer: bool = False

    def __post_init__(self) -> None:
        if not self.rationale.strip():
            raise InvalidReviewDecision("a decision needs a rationale")
        if not self.actor.startswith(("reviewer:", "operator:")):
            # if_review_decision: "An LLM actor can never call this" - nor a rule.
            raise InvalidReviewDecision(f"{self.actor} may not decide a review case")


@dataclass(frozen=True, slots=True)
class CaseContent:
    """What a rule wrote when it opened the case."""

    case_id: str
    catalog_id: str
    kind: str
    status: str
    revision: int
    capture_id: str
    listing_id: str
    candidates: list[dict[str, Any]]
    evidence: dict[str, Any]

    @property
    def profile(self) -> str | None:
        pin = self.evidence.get("profile")
        return pin if isinstance(pin, str) else None


def read_case(db: Database, tenant_id: str, case_id: str) -> CaseContent:
    row = db.run(
        lambda conn: cases.case_content(conn, tenant_id, case_id), tenant_id=tenant_id, read_only=True
    )
    if row is None:
        raise CaseNotFound(f"no review case {case_id}")
    return CaseContent(**row)


def to_command(
    request: ReviewDecision, case: CaseContent, profiles: ProfileDefinitions
) -> tuple[DecideCase, Definitions | None]:
    """The decision core's command for this request, and the definitions INV-02 checks it against."""
    common: dict[str, Any] = {
        "case_id": request.case_id,
        "expected_revision": request.expected_revision,
        "actor": request.actor,
        "rationale": request.rationale,
        "idempotency_key": request.idempotency_key,
        "evidence": request.evidence,
        "review_action": request.action,
        "offer": _offer(request, case),
    }
    if request.action == "reject":
        return DecideCase(action="dismiss", **common), None
    if request.action == "map_to":
        if not request.map_to:
            raise InvalidReviewDecision("map_to names the item to map the listing to")
        return DecideCase(action="map", item_id=request.map_to, **common), None
    if request.action == "accept":
        if not case.candidates:
            raise InvalidReviewDecision(
                f"case {case.case_id} has no candidate to accept; create or map an item"
            )
        top = max(case.candidates, key=lambda c: float(c.get("score", 0)))
        return DecideCase(action="map", item_id=str(top["item_id"]), **common), None
    if request.action == "correct" and not request.corrections:
        raise InvalidReviewDecision("a correct decision carries corrections")
    if request.map_to and request.create_item_id and request.map_to != request.create_item_id:
        raise InvalidReviewDecision("map_to must name the item the decision creates")
    if request.map_to and not request.create_item_id:
        raise InvalidReviewDecision("corrections create a new item: give create_item.id or leave map_to out")
    definitions = _definitions(case, profiles)
    item = _item_facts(case, definitions, request.corrections, request.create_item_id)
    return (
        DecideCase(
            action="create_item",
            item=item,
            family=request.family,
            corrections=dict(request.corrections) or None,
            **common,
        ),
        definitions,
    )


def _offer(request: ReviewDecision, case: CaseContent) -> OfferChoice | None:
    """The reviewer's offer choice checked against the case's claims; None when the request makes none."""
    if request.offer is None and not request.not_an_offer:
        return None
    if case.kind != OFFER_UNCERTAIN:
        raise InvalidReviewDecision(
            f"case {case.case_id} is {case.kind}: only an {OFFER_UNCERTAIN} case takes an offer"
        )
    return choose_offer(case.evidence.get("claims") or [], request.offer, not_an_offer=request.not_an_offer)


def _definitions(case: CaseContent, profiles: ProfileDefinitions) -> Definitions:
    pin = case.profile
    if pin is None:
        raise InvariantViolation(
            "INV-02", f"case {case.case_id} names no profile: no item can be created from it"
        )
    try:
        return profiles(pin)
    except Exception as error:  # the registry's UNKNOWN_PROFILE_VERSION, whatever its type
        raise InvariantViolation("INV-02", f"profile {pin} is not installed: {error}") from error


def _item_facts(
    case: CaseContent, definitions: Definitions, corrections: Mapping[str, Any], item_id: str | None
) -> ItemFacts:
    values: dict[str, Any] = {}
    units: dict[str, str | None] = {}
    versions: dict[str, int] = {}
    for document in case.evidence.get("attributes") or []:
        key = document.get("key")
        if isinstance(key, str):
            values[key] = document.get("value")
            units[key] = document.get("unit")
            versions[key] = int(document.get("definition_version") or 0)
    for key, value in corrections.items():
        definition = definitions.get(key)
        if definition is None:
            raise InvariantViolation("INV-02", f"{key} has no definition in profile {case.profile}")
        if key in _OFFER_FIELDS:
            raise InvalidReviewDecision(f"{key} is an offer field of the listing, not a fact of the item")
        if key in _ITEM_COLUMNS and not (isinstance(value, str) and value):
            raise InvariantViolation("INV-02", f"{key}: {value!r} is not a {definition.value_type}")
        values[key] = value
        units[key] = definition.unit
        versions[key] = definition.version
    attributes = tuple(
        NormalizedAttribute(key, _typed(key, value, definitions.get(key)), versions[key], units[key])
        for key, value in values.items()
        if key not in _ITEM_COLUMNS and key not in _OFFER_FIELDS and value is not None
    )
    return ItemFacts(
        profile=case.profile or "",
        title=_text(values.get(TITLE)),
        brand=_text(values.get(BRAND)),
        gtin=_text(values.get(GTIN)),
        mpn=_text(values.get(MPN)),
        attributes=attributes,
        item_id=item_id,
    )


def _typed(key: str, value: Any, definition: AttributeDefinition | None) -> Any:
    """JSON back to the attribute's value type (decimals travel as strings or numbers); what does not convert
    stays as it is and INV-02 names it."""
    numeric = isinstance(value, str | float) or (isinstance(value, int) and not isinstance(value, bool))
    if definition is not None and definition.value_type in ("decimal", "quantity") and numeric:
        try:
            return Decimal(str(value))
        except InvalidOperation:
            return value
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None

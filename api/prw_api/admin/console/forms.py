"""The console's decision form, turned into the decision core's ``ReviewDecision`` (if_review_decision).

One form per case page: the CSRF token, an Idempotency-Key made when the page was rendered (a double submit or
a browser's re-post replays the first decision), the revision the reviewer saw (``expected_revision``), an
optional rationale, and the button pressed: ``accept``, ``reject`` or ``map_to:<item_id>`` (the candidate's own
button, or its number key). A blank rationale is recorded as what the reviewer did and on which evidence.

On an ``offer_uncertain`` case the "Offer in question" section adds a radio group per offer attribute in question
(``offer_price``, ``offer_currency``, ``offer_availability``: one of the claimed values, or blank to leave it
unpublished) and a ``not_an_offer`` box; what is picked travels with the button pressed.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from prw_api.ids import ITEM_ID
from prw_platform.errors import InvalidReviewDecision
from prw_platform.services import Access, CaseView, ReviewAction, ReviewDecision

_ITEM: Final = re.compile(ITEM_ID)


@dataclass(frozen=True, slots=True)
class DecisionForm:
    case_id: str
    expected_revision: int
    choice: str
    rationale: str
    idempotency_key: str
    #: The offer values picked, by attribute (blank radio buttons left out).
    offer: Mapping[str, str] = field(default_factory=dict)
    not_an_offer: bool = False

    def to_decision(self, access: Access, view: CaseView) -> ReviewDecision:
        action, map_to = self._action()
        rationale = (
            self.rationale.strip() or default_rationale(action, map_to, view) + self._offer_rationale()
        )
        return ReviewDecision(
            case_id=self.case_id,
            expected_revision=self.expected_revision,
            action=action,
            rationale=rationale,
            actor=access.actor,
            map_to=map_to,
            idempotency_key=self.idempotency_key,
            offer={key: value for key, value in self.offer.items() if value} or None,
            not_an_offer=self.not_an_offer,
        )

    def _offer_rationale(self) -> str:
        if self.not_an_offer:
            return "; the page is not an offer"
        picked = ", ".join(f"{key} {value}" for key, value in self.offer.items() if value)
        return f"; offer confirmed from the claims: {picked}" if picked else ""

    def _action(self) -> tuple[ReviewAction, str | None]:
        if self.choice in ("accept", "reject"):
            return ("accept" if self.choice == "accept" else "reject"), None
        kind, _, item_id = self.choice.partition(":")
        if kind == "map_to" and _ITEM.match(item_id):
            return "map_to", item_id
        raise InvalidReviewDecision(f"{self.choice!r} is not a decision of this form")


def new_idempotency_key(case_id: str, revision: int) -> str:
    return f"console:{case_id}:{revision}:{secrets.token_urlsafe(12)}"


def default_rationale(action: ReviewAction, map_to: str | None, view: CaseView) -> str:
    if action == "reject":
        return f"Rejected in the review console: {view.reason or 'no candidate is this product'}"
    target = map_to if action == "map_to" else (view.candidates[0].item_id if view.candidates else None)
    chosen = next((c for c in view.candidates if c.item_id == target), None)
    if chosen is None:
        return f"Mapped to {target} in the review console"
    return (
        f"{'Accepted' if action == 'accept' else 'Mapped to'} candidate {chosen.rank} {chosen.item_id} "
        f"(score {chosen.score:.2f}: {chosen.reason or 'ranked by the resolver'}) in the review console"
    )

"""Request and response bodies of the admin origin."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prw_api.ids import CaseId, ItemId
from prw_platform.services import DecisionResult, OperatorSession, ReviewAction


class SessionBody(BaseModel):
    """The operator's session: who, the roles per tenant, the active tenant, and the CSRF token every
    state-changing request must echo in ``X-CSRF-Token``."""

    subject: str
    name: str | None
    email: str | None
    memberships: dict[str, str]
    active_tenant: str | None
    csrf_token: str
    expires_at: datetime
    idle_expires_at: datetime

    @classmethod
    def of(cls, session: OperatorSession, idle_seconds: float) -> SessionBody:
        from datetime import timedelta

        return cls(
            subject=session.subject,
            name=session.display_name,
            email=session.email,
            memberships={k: str(v) for k, v in session.memberships.items()},
            active_tenant=session.active_tenant,
            csrf_token=session.csrf_token,
            expires_at=session.expires_at,
            idle_expires_at=min(session.expires_at, session.last_seen_at + timedelta(seconds=idle_seconds)),
        )


class TenantChoiceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenant_id: str = Field(min_length=1, max_length=200)


class CreateItemBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: The new item's id (``itm_...``); the resolver chooses one when absent.
    id: ItemId | None = None
    #: The product family, recorded with the decision.
    family: str | None = Field(default=None, min_length=1, max_length=200)


OfferKey = Literal["core:price", "core:currency", "core:availability"]


class DecisionRequest(BaseModel):
    """if_review_decision's body. The actor is the session's operator; a body cannot name one."""

    model_config = ConfigDict(extra="forbid")

    case_id: CaseId
    expected_revision: int = Field(ge=1, le=2**62)
    action: ReviewAction
    corrections: dict[str, Any] | None = None
    create_item: CreateItemBody | None = None
    map_to: ItemId | None = None
    rationale: str = Field(min_length=1, max_length=4000)
    #: Evidence references the reviewer relied on (capture or artifact ids), beside the case's own.
    evidence: list[str] = Field(default_factory=list, max_length=50)
    #: ``offer_uncertain`` cases: the listing's offer values, each one of the values the case's claims state as
    #: the page had it (``{"core:price": "€25.00", "core:currency": "EUR"}``; price and currency together).
    offer: dict[OfferKey, Annotated[str, Field(min_length=1, max_length=1000)]] | None = None
    #: ``offer_uncertain`` cases: the page offers nothing; the listing keeps no price, currency or availability.
    not_an_offer: bool = False


class DecisionCreated(BaseModel):
    """if_review_decision's recorded response: accepted by the resolver, not yet applied by the product service."""

    decision_id: str
    case_id: str
    case_revision: int
    action: str
    item_id: str | None = None
    #: The outbox event ids the decision committed, in position order.
    outbox: list[str]

    @classmethod
    def of(cls, result: DecisionResult) -> DecisionCreated:
        assert result.case_id is not None
        assert result.case_revision is not None
        return cls(
            decision_id=result.decision_id,
            case_id=result.case_id,
            case_revision=result.case_revision,
            action=result.action,
            item_id=result.item_id,
            outbox=[event.event_id for event in result.events],
        )

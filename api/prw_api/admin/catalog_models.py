"""Bodies of the admin origin's catalog routes: retiring an item and provisioning merchants, source bindings and
shipping policies (INV-07). Each write is an AW-01 decision with the operator as actor."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from prw_api.ids import CatalogId, MerchantId
from prw_platform.services import DecisionResult, ItemRetired

#: A money amount as a decimal string (never a JSON number: no binary rounding), 0 or more.
Amount = Annotated[str, Field(pattern=r"^[0-9]{1,12}(\.[0-9]{1,4})?$", examples=["4.90"])]
Country = Annotated[str, Field(pattern=r"^[A-Z]{2}$")]


class Decided(BaseModel):
    """One event the decision committed to the catalog's stream."""

    event_id: str
    type: str
    position: int


class RetirementRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog_id: CatalogId
    rationale: str = Field(min_length=1, max_length=4000)


class RetirementView(BaseModel):
    """The retirement decision: the item at its new revision with status ``retired``; the next release removes it
    from the public catalog."""

    decision_id: str
    catalog_id: str
    item_id: str
    revision: int
    outbox: list[Decided]
    created_at: datetime

    @classmethod
    def of(cls, retired: ItemRetired) -> RetirementView:
        return cls(
            decision_id=retired.decision_id,
            catalog_id=retired.catalog_id,
            item_id=retired.item_id,
            revision=retired.revision,
            outbox=[Decided(event_id=e.event_id, type=e.type, position=e.position) for e in retired.events],
            created_at=retired.created_at,
        )


class MerchantRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog_id: CatalogId
    name: str = Field(min_length=1, max_length=200)
    url: str | None = Field(default=None, max_length=2000)
    rationale: str = Field(default="", max_length=4000)


class SourceMerchantRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog_id: CatalogId
    merchant_id: MerchantId
    rationale: str = Field(default="", max_length=4000)


class ShippingPolicyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog_id: CatalogId
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    #: Destination (ISO 3166-1 alpha-2) -> rate.
    rates: dict[Country, Amount] = Field(min_length=1, max_length=300)
    #: A basket worth at least this much ships free.
    free_shipping_threshold: Amount | None = None
    rationale: str = Field(default="", max_length=4000)

    def decimal_rates(self) -> dict[str, Decimal]:
        return {destination: Decimal(amount) for destination, amount in self.rates.items()}

    def decimal_threshold(self) -> Decimal | None:
        return None if self.free_shipping_threshold is None else Decimal(self.free_shipping_threshold)


class MerchantDecision(BaseModel):
    """What a provisioning request decided. Asking for the state the fact already has decides nothing:
    ``unchanged``, no decision, no event (safe to repeat)."""

    outcome: Literal["decided", "unchanged"]
    decision_id: str | None = None
    action: str | None = None
    outbox: list[Decided] = Field(default_factory=list)

    @classmethod
    def of(cls, result: DecisionResult | None) -> MerchantDecision:
        if result is None:
            return cls(outcome="unchanged")
        return cls(
            outcome="decided",
            decision_id=result.decision_id,
            action=result.action,
            outbox=[Decided(event_id=e.event_id, type=e.type, position=e.position) for e in result.events],
        )

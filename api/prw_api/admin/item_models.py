"""Bodies of the admin origin's item routes: merge a duplicate item into another, split listings off an item, and
the catalog's likely duplicate pairs. Each write is an AW-01 decision with the reviewer as actor."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from prw_api.ids import CatalogId, ItemId, ListingId


class ItemEvent(BaseModel):
    """One event the decision committed to the catalog's stream."""

    model_config = ConfigDict(from_attributes=True)

    event_id: str
    type: str
    position: int


class ItemMergeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog_id: CatalogId
    #: The item that survives: it keeps its id and gets the merged item's listings.
    into: ItemId
    rationale: str = Field(min_length=1, max_length=4000)


class ItemMergeView(BaseModel):
    """The merge decision: the merged item at the revision that retired it, the listings moved to the survivor and
    the events committed. Its id answers 301 to the survivor once a release names the merge."""

    model_config = ConfigDict(from_attributes=True)

    decision_id: str
    catalog_id: str
    item_id: str
    into: str
    revision: int
    listings: list[str]
    outbox: list[ItemEvent] = Field(validation_alias="events")
    created_at: datetime


class ItemSplitRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog_id: CatalogId
    #: The listings to move to the new item: each must be mapped to the split item now.
    listing_ids: list[ListingId] = Field(min_length=1, max_length=500)
    title: str = Field(min_length=1, max_length=500)
    #: The new item's brand; left out, the split item's.
    brand: str | None = Field(default=None, min_length=1, max_length=200)
    gtin: str | None = Field(default=None, pattern=r"^[0-9]{8,14}$")
    mpn: str | None = Field(default=None, min_length=1, max_length=200)
    #: The new item's id; left out, the resolver names it.
    new_item_id: ItemId | None = None
    rationale: str = Field(min_length=1, max_length=4000)


class ItemSplitView(BaseModel):
    """The split decision: the new item and the listings moved to it, and the events committed."""

    model_config = ConfigDict(from_attributes=True)

    decision_id: str
    catalog_id: str
    item_id: str
    new_item_id: str
    listings: list[str]
    outbox: list[ItemEvent] = Field(validation_alias="events")
    created_at: datetime


class DuplicateSide(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    item_id: str
    title: str | None
    brand: str | None
    gtin: str | None
    mpn: str | None


class DuplicatePairView(BaseModel):
    """Two active items that are likely one product: ``score`` (0 to 1) and what made it."""

    model_config = ConfigDict(from_attributes=True)

    first: DuplicateSide
    second: DuplicateSide
    score: float
    evidence: list[str]


class DuplicateList(BaseModel):
    catalog_id: str
    pairs: list[DuplicatePairView]

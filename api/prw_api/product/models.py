"""Response bodies of the product origin: the public contract of ``prw_platform.product.queries.serialize_item``
and ``serialize_page`` (docs/events.md "Public item fields", "Public listing fields").

The routes return the serializer's documents; these models validate them and are what OpenAPI publishes. They
forbid unknown keys, so a field the serializer starts to emit fails loudly until the contract names it, and
the routes drop unset keys, so the JSON is exactly the serializer's document.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

#: An attribute value is a scalar or a list of scalars (INV-02 definitions).
AttributeScalar = str | int | float | bool | None


class _Public(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PublicAttributeBody(_Public):
    value: AttributeScalar | list[AttributeScalar] = None
    unit: str | None = None
    definition_version: int | None = None


class PublicIdentifiersBody(_Public):
    gtin: str | None = None
    mpn: str | None = None


class PublicListingBody(_Public):
    listing: str
    item: str
    source_id: str | None
    url: str | None
    title: str | None
    price: str | None
    currency: str | None
    availability: str | None
    observed_at: str | None
    publication_revision: int


class PublicItemBody(_Public):
    item: str
    #: The item revision the current release published.
    published_revision: int
    #: The release that published it.
    publication_revision: int
    profile: str | None
    title: str | None
    brand: str | None
    identifiers: PublicIdentifiersBody
    attributes: dict[str, PublicAttributeBody]


class PublicItemDetailBody(PublicItemBody):
    #: The listings this item publicly owns (INV-01: one public owner per listing).
    listings: list[PublicListingBody]


class ItemPageBody(_Public):
    items: list[PublicItemBody]
    #: Pass as ``cursor`` for the next page; null on the last page.
    next_cursor: str | None
    #: The catalog's current release; null before the first release.
    publication_revision: int | None

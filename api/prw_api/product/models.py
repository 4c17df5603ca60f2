"""Response bodies of the product origin: the public contract of ``prw_platform.product.queries.serialize_item``
and ``serialize_page`` (docs/events.md "Public item fields", "Public listing fields").

The routes return the serializer's documents as they are (no per-request validation: it cost more than the
database read); these models are what OpenAPI publishes, and the tests validate every document the API serves
against them (tests/e2e/product/test_public_documents_http.py, and schemathesis). They forbid unknown keys, so a
field the serializer starts to emit fails those tests until the contract names it. A key that may be left out
(an absent identifier, a facet's unit) is never null.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import SkipJsonSchema

#: An attribute value is a scalar or a list of scalars (INV-02 definitions).
AttributeScalar = str | int | float | bool | None


class _Public(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PublicAttributeBody(_Public):
    value: AttributeScalar | list[AttributeScalar] = None
    unit: str | None = None
    definition_version: int | None = None


class PublicIdentifiersBody(_Public):
    """Strong identifiers; one the item does not have is left out."""

    gtin: str | SkipJsonSchema[None] = None
    mpn: str | SkipJsonSchema[None] = None


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


class FacetValueBody(_Public):
    value: AttributeScalar
    #: The unit of a quantity; left out for a value without one.
    unit: str | SkipJsonSchema[None] = None
    #: Matching items (all pages) with this value.
    count: int


class ItemPageBody(_Public):
    items: list[PublicItemBody]
    #: Pass as ``cursor`` for the next page (with the same filters); null on the last page.
    next_cursor: str | None
    #: The catalog's current release; null before the first release.
    publication_revision: int | None
    #: Only when ``facets`` was asked: attribute key -> counts per value, most frequent first.
    facets: dict[str, list[FacetValueBody]] | SkipJsonSchema[None] = None


class PublicSourceBody(_Public):
    source: str
    #: Public listings of the source in the current release, and the items that own them.
    listings: int
    items: int
    #: The latest observation time among them, as the collector reported it.
    last_observed_at: str | SkipJsonSchema[None] = None
    publication_revision: int | None

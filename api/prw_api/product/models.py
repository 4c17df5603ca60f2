"""Response bodies of the product origin: the public contract of ``prw_platform.product.public.items.serialize_item``
and ``serialize_page`` (docs/events.md "Public item fields", "Public listing fields").

The routes return the serializer's documents as they are (no per-request validation: it cost more than the
database read); these models are what OpenAPI publishes, and the tests validate every document the API serves
against them (tests/e2e/product/test_public_documents_http.py, and schemathesis). They forbid unknown keys, so a
field the serializer starts to emit fails those tests until the contract names it. A key that may be left out
(an absent identifier, a facet's unit) is never null.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
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


class PublicPictureBody(_Public):
    """A released picture (seed 004). ``url`` is a signed read of the product API (``GET /v1/files/{token}``),
    valid for a limited time: GET the document again for a fresh one. A dimension not known is left out."""

    url: str
    content_type: str
    size_bytes: int | SkipJsonSchema[None] = None
    width: int | SkipJsonSchema[None] = None
    height: int | SkipJsonSchema[None] = None


class PublicPicturesBody(_Public):
    #: The released main picture; left out when the item has none.
    main: PublicPictureBody | SkipJsonSchema[None] = None
    #: The released gallery, in display order.
    gallery: list[PublicPictureBody]


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
    #: The item's released pictures; left out until a release publishes pictures of the item.
    pictures: PublicPicturesBody | SkipJsonSchema[None] = None


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


class ListingMerchantBody(_Public):
    merchant: str
    name: str | None


class InventoryBody(_Public):
    """The latest released observation of a listing, as the source showed it."""

    price: str | None
    currency: str | None
    availability: str | None
    observed_at: str | None


class ItemListingBody(_Public):
    listing: str
    source_id: str | None
    #: The original URL on the source.
    url: str | None
    title: str | None
    #: The merchant selling through the listing's source; left out when none is public.
    merchant: ListingMerchantBody | SkipJsonSchema[None] = None
    inventory: InventoryBody
    publication_revision: int


class ItemListingsBody(_Public):
    item: str
    published_revision: int
    publication_revision: int
    listings: list[ItemListingBody]


class ShippingRateBody(_Public):
    #: ISO 3166-1 alpha-2 country code.
    destination: str | None
    #: Cost in the policy's currency, a decimal string.
    rate: str | None


class ShippingPolicyBody(_Public):
    currency: str | None
    rates: list[ShippingRateBody]
    #: A basket worth at least this much ships free; left out when it never does.
    free_shipping_threshold: str | SkipJsonSchema[None] = None


class MerchantBody(_Public):
    merchant: str
    name: str | None
    url: str | SkipJsonSchema[None] = None
    #: The public sources whose listings this merchant sells.
    sources: list[str]
    #: The released shipping policy; left out when none is.
    shipping_policy: ShippingPolicyBody | SkipJsonSchema[None] = None
    #: The merchant revision the release published, and that release.
    published_revision: int
    publication_revision: int


class MerchantPageBody(_Public):
    merchants: list[MerchantBody]
    next_cursor: str | None
    publication_revision: int | None


class BasketLineBody(_Public):
    listing: str = Field(min_length=1, max_length=128, description="A public listing id")
    quantity: int = Field(ge=1, le=1000)


class ShippingEvaluationRequest(_Public):
    destination: str = Field(
        min_length=1, max_length=16, description="ISO 3166-1 alpha-2 country code, e.g. DE"
    )
    lines: list[BasketLineBody] = Field(min_length=1, max_length=50)


class EvaluatedLineBody(_Public):
    listing: str
    quantity: int
    price: str


class ShippingEvaluationBody(_Public):
    merchant: str
    destination: str
    currency: str
    lines: list[EvaluatedLineBody]
    #: Sum of price times quantity, in the policy's currency.
    subtotal: str
    #: The rate for the destination, or 0 when the basket ships free.
    shipping: str
    total: str
    free_shipping: bool
    free_shipping_threshold: str | SkipJsonSchema[None] = None
    publication_revision: int | None


class PublicCategoryBody(_Public):
    """A released product class, a category of the catalog (seed 004)."""

    #: The class id (``GET /v1/categories/{category}``).
    category: str
    name: str | None
    #: The released class picture; left out when the class has none.
    picture: PublicPictureBody | SkipJsonSchema[None] = None
    #: Members of the class that the current release publishes.
    item_count: int
    published_revision: int
    publication_revision: int


class CategoryPageBody(_Public):
    categories: list[PublicCategoryBody]
    next_cursor: str | None
    publication_revision: int | None

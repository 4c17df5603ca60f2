"""The accepted-change payloads (if_accepted_change): one pydantic model per payload shape, the only definition.

The resolver constructs these models (``prw_platform.resolver.decisions``) and the product service parses them
(``prw_platform.product.events``); ``schemas/product.accepted-change.v1.json`` and the field tables in
docs/events.md are generated from them by ``python -m prw_platform.contracts.generate``. To add a field or an
event type: change the models here (and ``vocabulary.py``), run the generator, commit the regenerated files; the
drift tests in tests/unit/contracts fail until you do.

Class and field docstrings/descriptions are Markdown: they become the schema's descriptions and the docs' tables.
Every payload is the full state of its aggregate at one revision (docs/events.md), never a diff. On the wire a
decimal is a string (money is never a JSON number) and a timestamp is an ISO 8601 string with its UTC offset.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

#: ``value`` of an attribute: INV-02 definitions allow a scalar or a list of scalars; a decimal travels as a string.
AttributeScalar = str | bool | int | float

Identifier = Annotated[str, Field(min_length=1, max_length=128)]
Revision = Annotated[int, Field(ge=1)]
DECIMAL_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
DecimalString = Annotated[str, Field(pattern=DECIMAL_PATTERN)]
#: A non-negative amount of money (a shipping rate, a threshold): a decimal string.
AmountString = Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?$")]
CurrencyCode = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
CountryCode = Annotated[str, Field(pattern=r"^[A-Z]{2}$")]


def _has_offset(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("not an ISO 8601 date-time") from None
    if parsed.tzinfo is None:
        raise ValueError("an ISO 8601 date-time without a UTC offset")
    return value


OffsetDateTime = Annotated[
    str, AfterValidator(_has_offset), WithJsonSchema({"type": "string", "format": "date-time"})
]


def decimal_string(value: Decimal) -> str:
    """The wire form of a decimal: exact, never a float, never an exponent (``Decimal('1E+2')`` is ``'100'``)."""
    return format(value, "f")


def utc_timestamp(value: datetime) -> str:
    """The wire form of an aware datetime: ISO 8601 in UTC with an explicit ``+00:00`` offset."""
    if value.tzinfo is None:
        raise ValueError("a wire timestamp needs a timezone-aware datetime")
    return value.astimezone(UTC).isoformat()


class EventPayload(BaseModel):
    """Base of every payload model (and of the models nested in one).

    ``extra="allow"``, deliberately: the wire contract is a tolerant reader. A resolver deployed before the product
    service may add a key, and an older consumer must keep applying the stream instead of dead-lettering every
    event (forward compatibility); the consumer keeps such keys in its internal projection, and the public
    serializers whitelist, so an unknown key never becomes public. The producer side is strict instead: the
    resolver hands payloads to ``EventType.document`` (vocabulary.py), which refuses an undeclared key anywhere in
    the payload, so a new field cannot reach the outbox before it is declared here, in the schema and in the docs.
    """

    model_config = ConfigDict(frozen=True, extra="allow")


class ItemAttribute(EventPayload):
    """One attribute value in canonical form, with the definition version it conforms to (INV-02)."""

    value: AttributeScalar | list[AttributeScalar] = Field(
        description="Canonical value: a scalar or a list of scalars; a decimal is a decimal string."
    )
    unit: str | None = Field(
        default=None, description="Unit of a quantity (the definition's unit), else null."
    )
    definition_version: Revision = Field(
        description="Version of the attribute definition the value conforms to."
    )


class Identifiers(EventPayload):
    """Strong identifiers of an item; null when unknown."""

    gtin: str | None = Field(description="GTIN, or null.")
    mpn: str | None = Field(description="Manufacturer part number, or null.")


class ItemPayload(EventPayload):
    """`catalog_item.created` / `catalog_item.updated`: the catalog item at this revision."""

    item: Identifier = Field(description="Item id (`itm_…`); equals `aggregate.id`.")
    profile: str = Field(min_length=1, description="Normalization profile pin, e.g. `np_storage@1`.")
    status: Literal["active", "retired"] = Field(description="Only an active item can be mapped or released.")
    title: str | None = Field(description="Display title, or null.")
    brand: str | None = Field(description="Brand, or null.")
    identifiers: Identifiers = Field(description="Strong identifiers.")
    attributes: dict[str, ItemAttribute] = Field(
        description="Attribute key (e.g. `storage:capacity`) to its value."
    )


class ItemMergedPayload(ItemPayload):
    """`catalog_item.merged`: the catalog item at the revision that merged it into another item of the catalog: the
    full state, retired, and the item that survives it."""

    status: Literal["retired"] = Field(
        description="Always `retired`: a merged item is never mapped or released."
    )
    merged_into: Identifier = Field(
        description="The surviving item (`itm_…`, active when the merge was decided): the merged item's listings "
        "were remapped to it, and a release that names the merge redirects the merged item's public id to it."
    )


class ItemFields(EventPayload):
    """The public fields of an item revision as a release snapshots them: `ItemPayload` without `status`."""

    item: Identifier = Field(description="Item id (`itm_…`).")
    profile: str = Field(min_length=1, description="Normalization profile pin, e.g. `np_storage@1`.")
    title: str | None = Field(description="Display title, or null.")
    brand: str | None = Field(description="Brand, or null.")
    identifiers: Identifiers = Field(description="Strong identifiers.")
    attributes: dict[str, ItemAttribute] = Field(description="Attribute key to its value.")


class ListingPayload(EventPayload):
    """`listing.observed`: a source's listing as last observed; also the public listing fields of a release."""

    listing: Identifier = Field(description="Listing id (`lst_…`, stable per source and natural key).")
    source_id: Identifier = Field(description="Source the listing was observed on.")
    url: str | None = Field(description="Original URL, or null.")
    title: str | None = Field(description="Title on the source, or null.")
    price: DecimalString | None = Field(description="Price as a decimal string (never a number), or null.")
    currency: str | None = Field(description="ISO 4217 currency of `price`, or null.")
    availability: str | None = Field(description="Availability on the source (e.g. `in_stock`), or null.")
    observed_at: OffsetDateTime = Field(
        description="When the source showed this state; ISO 8601 with offset."
    )


class MappingPayload(EventPayload):
    """`listing_mapping.created` / `listing_mapping.corrected`: the listing's one current item (INV-01)."""

    # populate_by_name lets the resolver write ``previous_item=`` (``from`` is a keyword); the wire key stays the
    # seed's ``from`` (if_accepted_change example evt_0142: {listing, from, item}).
    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    listing: Identifier = Field(description="Listing id; equals `aggregate.id`.")
    previous_item: Identifier | None = Field(
        alias="from", description="Item the listing was mapped to before this revision, or null."
    )
    item: Identifier = Field(description="Item the listing is mapped to now (INV-07: exists, not retired).")


class ReleasedItem(EventPayload):
    """An item revision a release publishes."""

    item: Identifier = Field(description="Item id.")
    revision: Revision = Field(description="The published item revision (`published_revision` publicly).")
    fields: ItemFields = Field(description="Public fields snapshot of that revision.")


class ReleasedListing(EventPayload):
    """A public listing assignment a release publishes."""

    listing: Identifier = Field(description="Listing id.")
    item: Identifier = Field(description="The listing's one public item owner (INV-01).")
    mapping_revision: Revision = Field(description="Revision of the listing mapping published.")
    listing_revision: Revision = Field(description="Revision of the listing whose fields are published.")
    fields: ListingPayload = Field(description="Public listing fields snapshot.")


class MerchantPayload(EventPayload):
    """`merchant.created` / `merchant.updated`: a merchant an operator provisioned."""

    merchant: Identifier = Field(description="Merchant id (`mer_…`); equals `aggregate.id`.")
    name: str = Field(min_length=1, max_length=200, description="Display name.")
    url: str | None = Field(description="The merchant's home page, or null.")


class MerchantSourcePayload(EventPayload):
    """`merchant.source_bound`: the merchant that sells through a source (one merchant per source)."""

    source_id: Identifier = Field(description="Source id; equals `aggregate.id`.")
    merchant: Identifier = Field(description="The merchant the source's listings belong to now.")


class ShippingRate(EventPayload):
    """The shipping cost of one basket to one destination."""

    destination: CountryCode = Field(description="ISO 3166-1 alpha-2 country code.")
    rate: AmountString = Field(description="Cost in the policy's currency, a decimal string.")


def _one_rate_per_destination(rates: tuple[ShippingRate, ...]) -> tuple[ShippingRate, ...]:
    destinations = [rate.destination for rate in rates]
    if len(set(destinations)) != len(destinations):
        raise ValueError("a destination has one rate")
    return rates


class ShippingPolicyPayload(EventPayload):
    """`shipping_policy.accepted`: a merchant's shipping policy (one per merchant) at this revision."""

    merchant: Identifier = Field(description="Merchant id; equals `aggregate.id`.")
    currency: CurrencyCode = Field(description="ISO 4217 currency of the rates and the threshold.")
    rates: Annotated[tuple[ShippingRate, ...], AfterValidator(_one_rate_per_destination)] = Field(
        description="One rate per destination the merchant ships to (each destination once)."
    )
    free_shipping_threshold: AmountString | None = Field(
        description="A basket worth at least this much ships free; null: never free."
    )


class ReleasedMerchant(EventPayload):
    """A merchant revision a release publishes."""

    merchant: Identifier = Field(description="Merchant id.")
    revision: Revision = Field(description="The published merchant revision.")
    fields: MerchantPayload = Field(description="Public fields snapshot of that revision.")


class ReleasedMerchantSource(EventPayload):
    """A source → merchant binding a release publishes."""

    source_id: Identifier = Field(description="Source id.")
    merchant: Identifier = Field(description="The source's merchant.")
    revision: Revision = Field(description="The published binding revision.")


class ReleasedShippingPolicy(EventPayload):
    """A shipping policy revision a release publishes."""

    merchant: Identifier = Field(description="Merchant id.")
    revision: Revision = Field(description="The published policy revision.")
    fields: ShippingPolicyPayload = Field(description="The policy at that revision.")


class RetiredItem(EventPayload):
    """An item a release removes from the public catalog, with the listings it owned (INV-07)."""

    item: Identifier = Field(description="Item id.")
    revision: Revision = Field(description="The item revision that retired it.")


class MergedItem(EventPayload):
    """An item a release removes from the public catalog because it was merged into another: its public id then
    redirects to the surviving item (through every later merge of that one)."""

    item: Identifier = Field(description="The merged item's id.")
    revision: Revision = Field(description="The item revision that merged it (`catalog_item.merged`).")
    into: Identifier = Field(description="The item it was merged into.")


class Picture(EventPayload):
    """A managed catalog file used as a picture (seed 004): the copy in the managed asset store, addressed by its
    content. The product service serves the bytes from the store by ``sha256`` (its object key), never by reading
    the resolver's file rows."""

    file: Identifier = Field(description="Managed file id (`fil_…`), the resolver's lifecycle row.")
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] = Field(
        description="SHA-256 of the bytes: the file's content-addressed key in the managed asset store."
    )
    media_type: str = Field(
        min_length=1, description="Media type the pipeline read the bytes as (`image/png`)."
    )
    size_bytes: Annotated[int, Field(ge=1)] = Field(description="Size of the bytes.")
    width: Annotated[int, Field(ge=1)] | None = Field(default=None, description="Width in pixels, if known.")
    height: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Height in pixels, if known."
    )


class ItemPicturesPayload(EventPayload):
    """`item_pictures.saved`: an item's pictures at this revision, the whole set (a picture left out is removed)."""

    item: Identifier = Field(description="Item id (`itm_…`); equals `aggregate.id`.")
    main: Picture | None = Field(description="The main picture, or null.")
    gallery: tuple[Picture, ...] = Field(description="The gallery, in display order.")


class ProductClassPayload(EventPayload):
    """`product_class.saved`: a product class (a category of the catalog) at this revision."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    class_id: Identifier = Field(alias="class", description="Class id; equals `aggregate.id`.")
    name: str = Field(min_length=1, max_length=200, description="Display name.")
    picture: Picture | None = Field(description="The class picture, or null.")
    members: tuple[Identifier, ...] = Field(description="Item ids of the class's members, sorted.")


class ProductClassDeletedPayload(EventPayload):
    """`product_class.deleted`: the class was deleted with its memberships; the next release removes it."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    class_id: Identifier = Field(alias="class", description="Class id; equals `aggregate.id`.")


class ReleasedItemPictures(EventPayload):
    """An item's pictures revision a release publishes."""

    item: Identifier = Field(description="Item id.")
    revision: Revision = Field(description="The published `item_pictures` revision.")
    fields: ItemPicturesPayload = Field(description="The pictures at that revision.")


class ReleasedClass(EventPayload):
    """A product class revision a release publishes."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    class_id: Identifier = Field(alias="class", description="Class id.")
    revision: Revision = Field(description="The published `product_class` revision.")
    fields: ProductClassPayload = Field(description="The class at that revision.")


class RemovedClass(EventPayload):
    """A deleted product class a release removes from the public catalog."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    class_id: Identifier = Field(alias="class", description="Class id.")
    revision: Revision = Field(description="The `product_class` revision that deleted it.")


class ReleasePayload(EventPayload):
    """`release.authorized`: what one publication adds or changes (earlier releases stay public)."""

    release: Identifier = Field(
        description="Release aggregate id, `rel_<catalog_id>`; equals `aggregate.id`."
    )
    publication_revision: Revision = Field(description="Identifies the release; equals `aggregate.revision`.")
    items: tuple[ReleasedItem, ...] = Field(description="Item revisions this release publishes.")
    listings: tuple[ReleasedListing, ...] = Field(description="Listing assignments this release publishes.")
    # Defaults: a release written before merchants existed publishes none.
    merchants: tuple[ReleasedMerchant, ...] = Field(
        default=(), description="Merchant revisions this release publishes."
    )
    merchant_sources: tuple[ReleasedMerchantSource, ...] = Field(
        default=(), description="Source → merchant bindings this release publishes."
    )
    shipping_policies: tuple[ReleasedShippingPolicy, ...] = Field(
        default=(), description="Shipping policy revisions this release publishes."
    )
    retired_items: tuple[RetiredItem, ...] = Field(
        default=(),
        description="Retired items this release removes from the public catalog, with the listings they owned.",
    )
    # Default: a release written before item merges existed removes none this way.
    merged_items: tuple[MergedItem, ...] = Field(
        default=(),
        description="Merged items this release removes from the public catalog; their ids redirect to the items "
        "they were merged into.",
    )
    # Defaults: a release written before managed pictures existed publishes none (seed 004).
    item_pictures: tuple[ReleasedItemPictures, ...] = Field(
        default=(), description="Item pictures revisions this release publishes."
    )
    classes: tuple[ReleasedClass, ...] = Field(
        default=(), description="Product class revisions this release publishes."
    )
    removed_classes: tuple[RemovedClass, ...] = Field(
        default=(), description="Deleted product classes this release removes from the public catalog."
    )

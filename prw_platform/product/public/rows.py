"""The values of the released public snapshot (``store`` reads and writes them; the serializers render them): the
filters of a list query, what a public read answers, and the converters from a statement's JSON columns. No SQL
here: ``store`` owns the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ItemFilters:
    """Filters on released items; all given filters must match (if_product_query)."""

    brand: str | None = None  # case-insensitive equality
    gtin: str | None = None
    mpn: str | None = None
    profile: str | None = None
    #: Text search: every word occurs, case-insensitively, in the title, brand, MPN or GTIN.
    text: str | None = None
    #: (attribute key, value) pairs; a value matches the attribute's value, its value and unit ("1 TB"), or the
    #: canonical value and unit a profile reads it as (1 TB is stored as 1000 GB: ``items`` resolves it).
    attributes: tuple[tuple[str, str], ...] = ()
    #: A product class a profile declares (``cls_storage_ssd``).
    item_class: str | None = None


@dataclass(frozen=True, slots=True)
class AttributeCondition:
    """One ``attr[key]=text`` filter, with the canonical value and unit a profile read the text as (if any)."""

    key: str
    text: str
    canonical: str | None = None
    unit: str | None = None


@dataclass(frozen=True, slots=True)
class ClassCondition:
    """Items of a profile (by name, any version) whose attributes satisfy one of ``any_of``."""

    profile: str
    any_of: tuple[dict[str, list[str]], ...]


@dataclass(frozen=True, slots=True)
class ItemSearch:
    """A list query resolved against the vocabulary: what ``store.page_read`` reads."""

    filters: ItemFilters
    attributes: tuple[AttributeCondition, ...] = ()
    item_class: ClassCondition | None = None
    facet_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PublicListing:
    listing_id: str
    item_id: str
    publication_revision: int
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PublicItem:
    item_id: str
    published_revision: int
    publication_revision: int
    fields: dict[str, Any]
    #: Only the detail query loads listings; None in a collection.
    listings: tuple[PublicListing, ...] | None = None
    #: The released pictures (``{"main": picture | None, "gallery": [picture]}``, public_fields), None when no
    #: release published any for the item (seed 004).
    pictures: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Release:
    """The release the serving generation points at; ``publication_revision`` None before the first one."""

    generation: int
    publication_revision: int | None


#: What a read of a catalog not served here answers.
NO_RELEASE = Release(0, None)


@dataclass(frozen=True, slots=True)
class FacetCount:
    key: str
    value: Any
    unit: str | None
    count: int


@dataclass(frozen=True, slots=True)
class ItemPage:
    items: tuple[PublicItem, ...]
    next_cursor: str | None
    #: The catalog's current release (None before the first release is applied).
    publication_revision: int | None
    #: Counts per attribute value over every item matching the filters (only the keys asked for).
    facets: tuple[FacetCount, ...] = ()
    #: The serving generation (0: the catalog is not projected here); with the revision it makes the ETag.
    generation: int = 0


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """A page of a released collection by id (merchants, classes); ``next_cursor`` None on the last page."""

    entries: tuple[T, ...]
    next_cursor: str | None
    release: Release


@dataclass(frozen=True, slots=True)
class Detail(Generic[T]):
    """One released entry (an item, a merchant, a class), None when the release served does not publish it."""

    release: Release
    entry: T | None
    #: An item the release served does not publish because it was merged: the public item its id leads to now.
    moved_to: str | None = None


@dataclass(frozen=True, slots=True)
class SourceSummary:
    """What the release served publishes of a source: its public listings and the items that own them."""

    release: Release
    source_id: str
    listings: int
    items: int
    last_observed_at: str | None


def release_of(row: dict[str, Any]) -> Release:
    revision = row["current_revision"]
    return Release(int_of(row["generation"]), None if revision is None else int_of(revision))


def listing_of(entry: dict[str, Any]) -> PublicListing:
    return PublicListing(
        str(entry["listing_id"]),
        str(entry["item_id"]),
        int(entry["publication_revision"]),
        dict_of(entry["fields"]),
    )


def list_of(value: object) -> list[dict[str, Any]]:
    return value if isinstance(value, list) else []


def dict_of(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def int_of(value: object) -> int:
    assert isinstance(value, int)
    return value


@dataclass(frozen=True, slots=True)
class PublicMerchant:
    merchant_id: str
    published_revision: int
    publication_revision: int
    fields: dict[str, Any]
    #: The public sources bound to it, by id.
    sources: tuple[str, ...]
    #: The released shipping policy's fields (ShippingPolicyPayload), or None.
    shipping_policy: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class ListingMerchant:
    """The public merchant of a listing (through its source's released binding), with its released policy."""

    merchant_id: str
    name: str | None
    shipping_policy: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class MerchantListing:
    """A public listing with its merchant (None when its source is bound to no public merchant)."""

    listing: PublicListing
    merchant: ListingMerchant | None


@dataclass(frozen=True, slots=True)
class ItemListings:
    release: Release
    #: (item id, published_revision, publication_revision) of the public item, or None.
    item: PublicItem | None
    listings: tuple[MerchantListing, ...]
    #: The public item a merged item's id leads to now (``item`` is None then).
    moved_to: str | None = None


@dataclass(frozen=True, slots=True)
class Basket:
    release: Release
    #: The basket's listings that are public (whose owning item is public), with their merchants.
    listings: tuple[MerchantListing, ...]


def merchant_listing_of(entry: dict[str, Any]) -> MerchantListing:
    merchant = entry.get("merchant")
    return MerchantListing(
        listing_of(entry),
        None
        if not isinstance(merchant, dict)
        else ListingMerchant(
            str(merchant["merchant_id"]),
            merchant.get("name") if isinstance(merchant.get("name"), str) else None,
            merchant.get("shipping_policy") if isinstance(merchant.get("shipping_policy"), dict) else None,
        ),
    )


def merchant_of(entry: dict[str, Any]) -> PublicMerchant:
    sources = entry.get("sources")
    policy = entry.get("shipping_policy")
    return PublicMerchant(
        str(entry["id"]),
        int_of(entry["published_revision"]),
        int_of(entry["publication_revision"]),
        dict_of(entry["fields"]),
        tuple(str(source) for source in sources) if isinstance(sources, list) else (),
        policy if isinstance(policy, dict) else None,
    )


@dataclass(frozen=True, slots=True)
class PublicClass:
    """A released product class: its public fields (name, picture) and how many released items it has."""

    class_id: str
    published_revision: int
    publication_revision: int
    fields: dict[str, Any]
    item_count: int


def class_of(entry: dict[str, Any]) -> PublicClass:
    return PublicClass(
        str(entry["id"]),
        int_of(entry["published_revision"]),
        int_of(entry["publication_revision"]),
        dict_of(entry["fields"]),
        int_of(entry["item_count"]),
    )


def pictures_of(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None

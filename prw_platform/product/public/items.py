"""The public item reads and THE public serializer (if_product_query), and the keyset pages of every public
collection (items, merchants, classes) with their signed cursors.

Reads only the released snapshot of the serving generation (``store``), never the internal projection: "Internal
acceptance or projection application does not publish a record [...] No public serializer reads live internal
mappings." Item identity, ``published_revision`` and ``publication_revision`` come from the same ``public_item``
row in the collection, the detail and the listings, so they agree.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from collections.abc import Callable
from typing import Any, Final, TypeVar

from prw_platform.auth.signed import TokenSigner, b64url_encode
from prw_platform.inputs import unstorable_character
from prw_platform.plugins.query import QueryVocabulary
from prw_platform.product.errors import InvalidQuery
from prw_platform.product.public import store
from prw_platform.product.public.fields import (
    PUBLIC_ITEM_FIELDS,
    PUBLIC_LISTING_FIELDS,
    public_item_fields,
    public_listing_fields,
    public_pictures_fields,
)
from prw_platform.product.public.read import OneRead
from prw_platform.product.public.rows import (
    AttributeCondition,
    ClassCondition,
    Detail,
    FacetCount,
    ItemFilters,
    ItemPage,
    ItemSearch,
    Page,
    PublicItem,
    PublicListing,
    Release,
    SourceSummary,
)

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_FACETS",
    "MAX_PAGE_SIZE",
    "NO_FILTERS",
    "CursorCodec",
    "Detail",
    "FacetCount",
    "ItemDetail",
    "ItemFilters",
    "ItemPage",
    "Page",
    "PictureRender",
    "PublicItem",
    "PublicListing",
    "Release",
    "SourceSummary",
    "collection_page_read",
    "page_read",
    "serialize_item",
    "serialize_page",
    "serialize_pictures",
    "serialize_source",
]

DEFAULT_PAGE_SIZE: Final = 20
MAX_PAGE_SIZE: Final = 100
#: Attribute keys a query may ask facet counts for.
MAX_FACETS: Final = 10
#: Turns a released picture (public_fields) into its public document with a signed link (pictures.PictureLinks),
#: or None when it cannot.
PictureRender = Callable[[dict[str, Any]], dict[str, Any] | None]

#: Every released item (a frozen value, safe as a default).
NO_FILTERS: Final = ItemFilters()
NO_VOCABULARY: Final = QueryVocabulary()
#: A released item with the listings it publicly owns (INV-01), and the release served (for the ETag).
ItemDetail = Detail[PublicItem]
T = TypeVar("T")


class CursorCodec:
    """Signed keyset cursors (``TokenSigner``, purpose ``prw product cursor``): the document the last item id of
    the page and a fingerprint of the query's filters, signed with the deployment's key (every worker of
    ``prw serve`` derives the same one). A cursor the server did not issue, or issued for other filters, is
    INVALID_QUERY (422)."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("a cursor key has at least 16 bytes")
        self._signer = TokenSigner(key, _CURSOR_PURPOSE)

    def encode(self, after: str, filters: ItemFilters) -> str:
        return self.encode_keyed(after, _fingerprint(filters))

    def decode(self, cursor: str, filters: ItemFilters) -> str:
        return self.decode_keyed(cursor, _fingerprint(filters))

    def encode_keyed(self, after: str, fingerprint: str) -> str:
        """A cursor for another collection than items: ``fingerprint`` names the collection (and its query)."""
        return self._signer.sign([after, fingerprint])

    def decode_keyed(self, cursor: str, expected: str) -> str:
        document = self._signer.verify(cursor)
        if not (isinstance(document, list) and len(document) == 2):
            raise InvalidQuery("cursor is not one this API issued")
        after, fingerprint = document
        if not isinstance(after, str) or not after or unstorable_character(after) is not None:
            raise InvalidQuery("cursor is not one this API issued")
        if fingerprint != expected:
            raise InvalidQuery("cursor was issued for other filters: repeat the query that returned it")
        return after


_CURSOR_PURPOSE: Final = "prw product cursor"


#: For callers without a deployment key (tests, the operator's shell): cursors valid in this process only.
PROCESS_CURSORS: Final = CursorCodec(secrets.token_bytes(32))


def page_read(
    tenant_id: str,
    catalog_id: str,
    filters: ItemFilters = NO_FILTERS,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    facets: tuple[str, ...] = (),
    vocabulary: QueryVocabulary = NO_VOCABULARY,
    cursors: CursorCodec = PROCESS_CURSORS,
) -> OneRead[ItemPage]:
    """Released items ordered by item id, ``limit`` per page; ``cursor`` is the previous page's ``next_cursor``
    (for the same filters). ``vocabulary`` resolves ``class`` and reads attribute values with units. The query is
    checked here (``InvalidQuery``), before anything is read."""
    _check_limit(limit)
    if len(facets) > MAX_FACETS:
        raise InvalidQuery(f"at most {MAX_FACETS} facets")
    after = cursors.decode(cursor, filters) if cursor else None
    search = resolve_search(filters, vocabulary, facets)

    def page(found: ItemPage) -> ItemPage:
        items = found.items[:limit]
        more = len(found.items) > limit
        return dataclasses.replace(
            found, items=items, next_cursor=cursors.encode(items[-1].item_id, filters) if more else None
        )

    # One more than a page tells whether a next page exists.
    return store.page_read(tenant_id, catalog_id, search, after=after, limit=limit + 1).then(page)


def collection_page_read(
    collection: store.Collection[T],
    tenant_id: str,
    catalog_id: str,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    cursors: CursorCodec = PROCESS_CURSORS,
) -> OneRead[Page[T]]:
    """A released collection by id (merchants, classes), ``limit`` per page; ``cursor`` is the previous page's
    ``next_cursor``."""
    _check_limit(limit)
    after = cursors.decode_keyed(cursor, collection.name) if cursor else None

    def page(found: Page[T]) -> Page[T]:
        entries = found.entries[:limit]
        more = len(found.entries) > limit
        next_cursor = cursors.encode_keyed(collection.key(entries[-1]), collection.name) if more else None
        return Page(entries, next_cursor, found.release)

    # One more than a page tells whether a next page exists.
    return collection.read(tenant_id, catalog_id, after=after, limit=limit + 1).then(page)


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidQuery(f"limit must be between 1 and {MAX_PAGE_SIZE}")


def resolve_search(
    filters: ItemFilters, vocabulary: QueryVocabulary, facets: tuple[str, ...] = ()
) -> ItemSearch:
    """The filters with the profiles' knowledge: the class's rule, each attribute value's canonical form."""
    item_class = None
    if filters.item_class is not None:
        rule = vocabulary.classes.get(filters.item_class)
        if rule is None:
            known = ", ".join(sorted(vocabulary.classes)) or "none installed"
            raise InvalidQuery(f"unknown class {filters.item_class!r} (classes: {known})")
        item_class = ClassCondition(
            rule.profile, tuple({k: list(v) for k, v in alt.items()} for alt in rule.any_of)
        )
    conditions = []
    for key, text in filters.attributes:
        canonical = vocabulary.canonical(key, text)
        conditions.append(
            AttributeCondition(key, text, canonical.text, canonical.unit)
            if canonical
            else AttributeCondition(key, text)
        )
    return ItemSearch(filters, tuple(conditions), item_class, tuple(dict.fromkeys(facets)))


def serialize_item(item: PublicItem, render: PictureRender | None = None) -> dict[str, Any]:
    """THE public item serializer: collection entries and the detail both go through it.

    Whitelists again on the way out (public_fields), so capture, decision, review and evidence references cannot
    appear even if a snapshot carried them. An identifier the item does not have is left out, not null.
    ``pictures`` is there once a release published the item's pictures (and ``render`` signs their links): the
    released main picture (left out when none) and gallery, never a picture saved since (seed 004)."""
    fields = public_item_fields(item.fields)
    document: dict[str, Any] = {
        "item": item.item_id,
        "published_revision": item.published_revision,
        "publication_revision": item.publication_revision,
    }
    document.update({key: fields[key] for key in PUBLIC_ITEM_FIELDS if key != "item"})
    document["identifiers"] = {k: v for k, v in document["identifiers"].items() if v is not None}
    if item.pictures is not None and render is not None:
        document["pictures"] = serialize_pictures(item.pictures, render)
    if item.listings is not None:
        document["listings"] = [_serialize_listing(listing) for listing in item.listings]
    return document


def serialize_pictures(pictures: dict[str, Any], render: PictureRender) -> dict[str, Any]:
    """``{"main": picture, "gallery": [picture, ...]}``; ``main`` left out when the item has none."""
    fields = public_pictures_fields(pictures)
    document: dict[str, Any] = {}
    main = render(fields["main"]) if fields["main"] is not None else None
    if main is not None:
        document["main"] = main
    document["gallery"] = [p for p in (render(g) for g in fields["gallery"]) if p is not None]
    return document


def serialize_page(page: ItemPage, render: PictureRender | None = None) -> dict[str, Any]:
    document: dict[str, Any] = {
        "items": [serialize_item(item, render) for item in page.items],
        "next_cursor": page.next_cursor,
        "publication_revision": page.publication_revision,
    }
    if page.facets:
        facets: dict[str, list[dict[str, Any]]] = {}
        for facet in page.facets:
            entry: dict[str, Any] = {"value": facet.value, "count": facet.count}
            if facet.unit is not None:
                entry["unit"] = facet.unit
            facets.setdefault(facet.key, []).append(entry)
        document["facets"] = facets
    return document


def serialize_source(source: SourceSummary) -> dict[str, Any]:
    document: dict[str, Any] = {
        "source": source.source_id,
        "listings": source.listings,
        "items": source.items,
        "publication_revision": source.release.publication_revision,
    }
    if source.last_observed_at is not None:
        document["last_observed_at"] = source.last_observed_at
    return document


def _serialize_listing(listing: PublicListing) -> dict[str, Any]:
    fields = public_listing_fields(listing.fields)
    document: dict[str, Any] = {"listing": listing.listing_id, "item": listing.item_id}
    document.update({key: fields[key] for key in PUBLIC_LISTING_FIELDS if key != "listing"})
    document["publication_revision"] = listing.publication_revision
    return document


def _fingerprint(filters: ItemFilters) -> str:
    text = json.dumps(
        [
            filters.brand,
            filters.gtin,
            filters.mpn,
            filters.profile,
            filters.text,
            filters.attributes,
            filters.item_class,
        ]
    )
    return b64url_encode(hashlib.sha256(text.encode()).digest()[:9])

"""The public catalog service: the released catalog of one (tenant, catalog) pair, as the product API serves it.

Scope comes from the deployment, never from the request: public reads carry no identity (if_product_query
Authentication), so no caller can pick a tenant (INV-06). Built by the composition root
(``Platform.public_catalog``) over ``product_app`` with the API's statement timeout, the installed profiles'
query vocabulary (classes, values with units) and the deployment's cursor key. Every read is one statement
(``read.OneRead``, composed by ``store``), run here on ``db``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, TypeVar

from prw_platform.db.database import Database
from prw_platform.plugins.query import QueryVocabulary
from prw_platform.product.errors import PictureLinkInvalid
from prw_platform.product.public import store
from prw_platform.product.public.classes import ClassDetail, ClassPage
from prw_platform.product.public.items import (
    DEFAULT_PAGE_SIZE,
    NO_VOCABULARY,
    PROCESS_CURSORS,
    CursorCodec,
    ItemDetail,
    ItemFilters,
    ItemPage,
    PublicItem,
    Release,
    SourceSummary,
    collection_page_read,
    page_read,
)
from prw_platform.product.public.merchants import ItemListings, MerchantDetail, MerchantPage
from prw_platform.product.public.pictures import PictureBytes, PictureLinks, SignedPictures
from prw_platform.product.public.read import OneRead
from prw_platform.product.public.rows import Page
from prw_platform.product.public.shipping import BasketLine, ShippingEvaluation, evaluate_shipping

#: if_product_query Tenant: "Deployment binds ten_primary and tenant-private cat_primary."
DEFAULT_TENANT_ID: Final = "ten_primary"
DEFAULT_CATALOG_ID: Final = "cat_primary"
#: How long a readiness probe waits for the database (a connection and ``SELECT 1``).
READINESS_TIMEOUT_SECONDS: Final = 2.0
T = TypeVar("T")


@dataclass(frozen=True)
class PublicCatalog:
    db: Database
    tenant_id: str
    catalog_id: str
    vocabulary: QueryVocabulary = field(default=NO_VOCABULARY)
    cursors: CursorCodec = field(default=PROCESS_CURSORS)
    #: Signed links of released pictures (seed 004); None: documents carry no pictures and no file is served.
    pictures: PictureLinks | None = None

    def items(
        self,
        filters: ItemFilters,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        facets: tuple[str, ...] = (),
    ) -> ItemPage:
        return self.page_read(filters, limit=limit, cursor=cursor, facets=facets).run(self.db)

    async def items_async(
        self,
        filters: ItemFilters,
        *,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
        facets: tuple[str, ...] = (),
    ) -> ItemPage:
        """``items`` on the running event loop (``Database.read_row_async``), for an ``async`` route."""
        return await self.page_read(filters, limit=limit, cursor=cursor, facets=facets).run_async(self.db)

    def page_read(
        self, filters: ItemFilters, *, limit: int, cursor: str | None, facets: tuple[str, ...]
    ) -> OneRead[ItemPage]:
        """A page of ``items`` as one read (the query checked, ``InvalidQuery`` otherwise)."""
        return page_read(
            self.tenant_id,
            self.catalog_id,
            filters,
            limit=limit,
            cursor=cursor,
            facets=facets,
            vocabulary=self.vocabulary,
            cursors=self.cursors,
        )

    def ready(self, timeout_s: float = READINESS_TIMEOUT_SECONDS) -> None:
        """Readiness of the product API: its database pool answers ``SELECT 1`` within ``timeout_s``; else
        ``DatabaseUnavailable`` (503 STORAGE_UNAVAILABLE, retry later)."""
        self.db.ready(timeout_s)

    async def close_async_reads(self) -> None:
        """Close the running loop's connections of the ``*_async`` reads (the product app's lifespan)."""
        await self.db.close_async_reads()

    def release(self) -> Release:
        """The release served now: what an ``If-None-Match`` is compared with."""
        return store.release_read(self.tenant_id, self.catalog_id).run(self.db)

    async def release_async(self) -> Release:
        return await store.release_read(self.tenant_id, self.catalog_id).run_async(self.db)

    def item(self, item_id: str) -> PublicItem | None:
        return self.item_detail(item_id).entry

    def item_detail(self, item_id: str) -> ItemDetail:
        return store.item_detail_read(self.tenant_id, self.catalog_id, item_id).run(self.db)

    async def item_detail_async(self, item_id: str) -> ItemDetail:
        return await store.item_detail_read(self.tenant_id, self.catalog_id, item_id).run_async(self.db)

    def source(self, source_id: str) -> SourceSummary | None:
        """What the release served publishes of a source; None when it publishes no listing of it."""
        source = store.source_read(self.tenant_id, self.catalog_id, source_id).run(self.db)
        return source if source.listings else None

    def item_listings(self, item_id: str) -> ItemListings:
        return store.item_listings_read(self.tenant_id, self.catalog_id, item_id).run(self.db)

    def merchants(self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None) -> MerchantPage:
        return self._page(store.MERCHANTS, limit, cursor).run(self.db)

    def merchant(self, merchant_id: str) -> MerchantDetail:
        return store.MERCHANTS.detail_read(self.tenant_id, self.catalog_id, merchant_id).run(self.db)

    def classes(self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None) -> ClassPage:
        return self._page(store.CLASSES, limit, cursor).run(self.db)

    def product_class(self, class_id: str) -> ClassDetail:
        return store.CLASSES.detail_read(self.tenant_id, self.catalog_id, class_id).run(self.db)

    def _page(self, collection: store.Collection[T], limit: int, cursor: str | None) -> OneRead[Page[T]]:
        return collection_page_read(
            collection, self.tenant_id, self.catalog_id, limit=limit, cursor=cursor, cursors=self.cursors
        )

    def picture_render(self) -> SignedPictures | None:
        """What the serializers sign released pictures with for one response (a ``PictureRender``): every link of
        the response gets the same expiry. None when this catalog serves no pictures."""
        if self.pictures is None:
            return None
        return SignedPictures(self.pictures, self.tenant_id, self.catalog_id)

    def picture(self, token: str) -> PictureBytes:
        """The bytes behind a signed picture link (``PictureLinkError``: 404 NOT_FOUND, 403 LINK_EXPIRED)."""
        if self.pictures is None:
            raise PictureLinkInvalid("this catalog serves no pictures")
        return self.pictures.open(self.tenant_id, self.catalog_id, token)

    def evaluate_shipping(self, destination: str, lines: tuple[BasketLine, ...]) -> ShippingEvaluation:
        """if_product_query: computed per request, stores nothing."""
        return evaluate_shipping(self.db, self.tenant_id, self.catalog_id, destination, lines)

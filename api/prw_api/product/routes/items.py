"""if_product_query: GET /v1/items and GET /v1/items/{item_id}, released data only.

An item merged into another answers 301 with the public item its id leads to now. Both go through THE public
serializer (``prw_platform.product.public.items``); the response models document its output
(models.py). Public reads carry no identity; the deployment's catalog is the scope. Every response carries the
release's ETag (with the window of the picture links it carries) and a Cache-Control; ``If-None-Match`` with the
current ETag is a 304 (caching.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Response

from prw_api.errors import ApiError, ErrorBody
from prw_api.product.caching import not_modified_async, public_json, public_redirect
from prw_api.product.deps import ITEM_QUERY_OPENAPI, catalog_of, item_query_of
from prw_api.product.models import ItemPageBody, PublicItemDetailBody
from prw_api.routing import PlatformRoute
from prw_platform.services import Release, serialize_item, serialize_page

router = APIRouter(tags=["items"], route_class=PlatformRoute)

#: if_product_query Errors, and what every public read may answer.
NOT_MODIFIED: dict[int | str, dict[str, Any]] = {
    304: {"description": "Not Modified: If-None-Match names the current release's ETag"}
}
ERRORS: dict[int | str, dict[str, Any]] = {status: {"model": ErrorBody} for status in (422, 429, 503)}
#: An item a reviewer merged into another: its id answers with the item it leads to now.
MOVED: dict[int | str, dict[str, Any]] = {
    301: {
        "description": "Moved Permanently: the item was merged into another; Location names the public item its id "
        "leads to now (through every later merge)",
        "headers": {"Location": {"description": "The surviving item's URL", "schema": {"type": "string"}}},
    }
}


@router.get(
    "/v1/items",
    operation_id="listItems",
    name="listItems",
    summary="Released items of the catalog, filtered, one page at a time, with facet counts",
    response_model=ItemPageBody,
    responses={**NOT_MODIFIED, **ERRORS},
    openapi_extra=ITEM_QUERY_OPENAPI,
)
async def list_items(request: Request) -> Response:
    # The query and the catalog are read here, not as FastAPI dependencies: the two hottest public routes skip
    # dependency solving (deps.item_query_of). Both are ``async`` and read on the event loop: a sync route's hop
    # to a worker thread cost more CPU than the item detail's whole read (prw_platform.db.async_reads).
    query, catalog = item_query_of(request), catalog_of(request)
    pictures = catalog.picture_render()
    if (cached := await not_modified_async(request, catalog, pictures)) is not None:
        return cached
    page = await catalog.items_async(
        query.filters, limit=query.limit, cursor=query.cursor, facets=query.facets
    )
    document = serialize_page(page, pictures)
    return public_json(request, document, Release(page.generation, page.publication_revision), pictures)


@router.get(
    "/v1/items/{item_id}",
    operation_id="getItem",
    name="getItem",
    summary="One released item with the listings it publicly owns",
    response_model=PublicItemDetailBody,
    responses={**MOVED, **NOT_MODIFIED, 404: {"model": ErrorBody}, **ERRORS},
)
async def get_item(request: Request, item_id: str) -> Response:
    catalog = catalog_of(request)
    pictures = catalog.picture_render()
    if (cached := await not_modified_async(request, catalog, pictures)) is not None:
        return cached
    detail = await catalog.item_detail_async(item_id)
    if detail.entry is None and detail.moved_to is not None:
        return public_redirect(request, f"/v1/items/{quote(detail.moved_to, safe='')}", detail.release)
    if detail.entry is None:
        # if_product_query: 404 NOT_FOUND, for an unknown item and for one no applied release has published.
        raise ApiError(404, "NOT_FOUND", f"no public item {item_id!r}")
    return public_json(request, serialize_item(detail.entry, pictures), detail.release, pictures)

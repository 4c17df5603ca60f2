"""if_product_query: GET /v1/merchants, GET /v1/merchants/{merchant_id} and GET /v1/items/{item_id}/listings,
released data only, with the release's ETag and Cache-Control (304 on If-None-Match) like the item routes."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Request, Response

from prw_api.errors import ApiError, ErrorBody
from prw_api.product.caching import not_modified, public_entry, public_json, public_page, public_redirect
from prw_api.product.deps import CatalogDep, CursorQuery, limit_query
from prw_api.product.models import ItemListingsBody, MerchantBody, MerchantPageBody
from prw_api.product.routes.items import ERRORS, MOVED, NOT_MODIFIED
from prw_api.routing import PlatformRoute
from prw_platform.services import (
    DEFAULT_PAGE_SIZE,
    serialize_item_listings,
    serialize_merchant,
    serialize_merchant_page,
)

router = APIRouter(tags=["merchants"], route_class=PlatformRoute)


@router.get(
    "/v1/merchants",
    operation_id="listMerchants",
    name="listMerchants",
    summary="Released merchants, with their sources and shipping policies, one page at a time",
    response_model=MerchantPageBody,
    responses={**NOT_MODIFIED, **ERRORS},
)
def list_merchants(
    request: Request,
    catalog: CatalogDep,
    limit: Annotated[int, limit_query("Merchants per page")] = DEFAULT_PAGE_SIZE,
    cursor: CursorQuery = None,
) -> Response:
    return public_page(
        request, catalog, lambda: catalog.merchants(limit=limit, cursor=cursor), serialize_merchant_page
    )


@router.get(
    "/v1/merchants/{merchant_id}",
    operation_id="getMerchant",
    name="getMerchant",
    summary="One released merchant with its sources and shipping policy",
    response_model=MerchantBody,
    responses={**NOT_MODIFIED, 404: {"model": ErrorBody}, **ERRORS},
)
def get_merchant(request: Request, merchant_id: str, catalog: CatalogDep) -> Response:
    missing = f"no public merchant {merchant_id!r}"
    return public_entry(request, catalog, lambda: catalog.merchant(merchant_id), serialize_merchant, missing)


@router.get(
    "/v1/items/{item_id}/listings",
    operation_id="listItemListings",
    name="listItemListings",
    summary="A released item's public listings, each with its merchant, original URL and latest inventory",
    response_model=ItemListingsBody,
    responses={**MOVED, **NOT_MODIFIED, 404: {"model": ErrorBody}, **ERRORS},
)
def list_item_listings(request: Request, item_id: str, catalog: CatalogDep) -> Response:
    if (cached := not_modified(request, catalog)) is not None:
        return cached
    found = catalog.item_listings(item_id)
    if found.item is None and found.moved_to is not None:
        return public_redirect(request, f"/v1/items/{quote(found.moved_to, safe='')}/listings", found.release)
    if found.item is None:
        raise ApiError(404, "NOT_FOUND", f"no public item {item_id!r}")
    return public_json(request, serialize_item_listings(found.item, found.listings), found.release)

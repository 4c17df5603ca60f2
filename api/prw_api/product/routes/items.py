"""if_product_query: GET /v1/items and GET /v1/items/{item_id}, released data only.

Both go through THE public serializer (``prw_platform.product.queries``); the response models only validate and
document its output (models.py). Public reads carry no identity; the deployment's catalog is the scope.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from prw_api.errors import ApiError, ErrorBody
from prw_api.product.deps import ATTRIBUTE_FILTER_OPENAPI, CatalogDep, ItemQueryDep
from prw_api.product.models import ItemPageBody, PublicItemDetailBody
from prw_api.routing import PlatformRoute
from prw_platform.services import serialize_item, serialize_page

router = APIRouter(tags=["items"], route_class=PlatformRoute)


@router.get(
    "/v1/items",
    operation_id="listItems",
    name="listItems",
    summary="Released items of the catalog, filtered, one page at a time",
    response_model=ItemPageBody,
    # The serializer leaves out what a snapshot does not have (e.g. an absent identifier): keep it out.
    response_model_exclude_unset=True,
    responses={status: {"model": ErrorBody} for status in (422, 503)},
    openapi_extra=ATTRIBUTE_FILTER_OPENAPI,
)
def list_items(query: ItemQueryDep, catalog: CatalogDep) -> dict[str, Any]:
    page = catalog.items(query.filters, limit=query.limit, cursor=query.cursor)
    return serialize_page(page)


@router.get(
    "/v1/items/{item_id}",
    operation_id="getItem",
    name="getItem",
    summary="One released item with the listings it publicly owns",
    response_model=PublicItemDetailBody,
    response_model_exclude_unset=True,
    responses={status: {"model": ErrorBody} for status in (404, 503)},
)
def get_item(item_id: str, catalog: CatalogDep) -> dict[str, Any]:
    item = catalog.item(item_id)
    if item is None:
        # if_product_query: 404 NOT_FOUND, for an unknown item and for one no applied release has published.
        raise ApiError(404, "NOT_FOUND", f"no public item {item_id!r}")
    return serialize_item(item)

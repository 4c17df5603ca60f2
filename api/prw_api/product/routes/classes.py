"""Seed 004: GET /v1/categories and GET /v1/categories/{category_id}, released product classes only
(name, picture, how many released items), and GET /v1/files/{token}, the bytes of a released picture behind the
signed link the documents carry. The category reads carry the ETag and Cache-Control of the item routes.

Product classes are served as *categories* on the public origin because if_product_query already gives ``class`` a
meaning there: ``/v1/items?class=cls_storage_ssd`` filters by a class a normalization profile declares. A public
``/v1/classes/{id}`` would invite ``/v1/classes/cls_storage_ssd``, which is no managed class (404). The admin origin
keeps ``/v1/classes/{class_id}`` for managing them (its own contract, schemas/openapi-admin.yaml)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from prw_api.errors import ApiError, ErrorBody
from prw_api.product.caching import public_entry, public_page
from prw_api.product.deps import CatalogDep, CursorQuery, limit_query
from prw_api.product.models import CategoryPageBody, PublicCategoryBody
from prw_api.product.routes.items import ERRORS, NOT_MODIFIED
from prw_api.routing import PlatformRoute
from prw_platform.errors import PictureLinkError
from prw_platform.services import DEFAULT_PAGE_SIZE, serialize_class, serialize_class_page

router = APIRouter(tags=["categories"], route_class=PlatformRoute)

#: A released picture is immutable under its link (content-addressed), so a browser may keep it as long as the link
#: lives; never sniffed as anything but the picture type the pipeline read it as.
PICTURE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'",
    "Cross-Origin-Resource-Policy": "cross-origin",
}


@router.get(
    "/v1/categories",
    operation_id="listCategories",
    name="listCategories",
    summary="Released product classes (categories), with their pictures and released item counts",
    response_model=CategoryPageBody,
    responses={**NOT_MODIFIED, **ERRORS},
)
def list_categories(
    request: Request,
    catalog: CatalogDep,
    limit: Annotated[int, limit_query("Classes per page")] = DEFAULT_PAGE_SIZE,
    cursor: CursorQuery = None,
) -> Response:
    pictures = catalog.picture_render()
    return public_page(
        request,
        catalog,
        lambda: catalog.classes(limit=limit, cursor=cursor),
        lambda page: serialize_class_page(page, pictures),
        pictures,
    )


@router.get(
    "/v1/categories/{category_id}",
    operation_id="getCategory",
    name="getCategory",
    summary="One released product class (category)",
    response_model=PublicCategoryBody,
    responses={**NOT_MODIFIED, 404: {"model": ErrorBody}, **ERRORS},
)
def get_category(request: Request, category_id: str, catalog: CatalogDep) -> Response:
    # 404 NOT_FOUND also for a class a release removed.
    pictures = catalog.picture_render()
    return public_entry(
        request,
        catalog,
        lambda: catalog.product_class(category_id),
        lambda product_class: serialize_class(product_class, pictures),
        f"no public category {category_id!r}",
        pictures,
    )


@router.get(
    "/v1/files/{token}",
    operation_id="getFile",
    name="getFile",
    summary="The bytes of a released picture, behind the signed link an item or class document carries",
    response_class=Response,
    responses={
        200: {"content": {"image/*": {}}, "description": "the picture's bytes, as the pipeline stored them"},
        **{status: {"model": ErrorBody} for status in (403, 404, 429, 503)},
    },
)
def get_file(catalog: CatalogDep, token: Annotated[str, Path(min_length=1, max_length=2000)]) -> Response:
    try:
        picture = catalog.picture(token)
    except PictureLinkError as refused:
        raise ApiError(refused.status, refused.code, str(refused)) from refused
    headers = {
        **PICTURE_HEADERS,
        "ETag": f'"{picture.sha256}"',
        "Cache-Control": "public, max-age=300, immutable",
    }
    return Response(picture.data, media_type=picture.media_type, headers=headers)

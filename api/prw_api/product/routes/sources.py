"""if_product_query: GET /v1/sources/{source_id}: what the current release publishes from a source."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from prw_api.errors import ApiError, ErrorBody
from prw_api.product.caching import not_modified, public_json
from prw_api.product.deps import CatalogDep
from prw_api.product.models import PublicSourceBody
from prw_api.product.routes.items import ERRORS, NOT_MODIFIED
from prw_api.routing import PlatformRoute
from prw_platform.services import serialize_source

router = APIRouter(tags=["sources"], route_class=PlatformRoute)


@router.get(
    "/v1/sources/{source_id}",
    operation_id="getSource",
    name="getSource",
    summary="A source as the current release publishes it: its public listings and the items owning them",
    response_model=PublicSourceBody,
    responses={**NOT_MODIFIED, 404: {"model": ErrorBody}, **ERRORS},
)
def get_source(request: Request, source_id: str, catalog: CatalogDep) -> Response:
    if (cached := not_modified(request, catalog)) is not None:
        return cached
    source = catalog.source(source_id)
    if source is None:
        # if_product_query: 404 NOT_FOUND; a source the release publishes no listing of is not public.
        raise ApiError(404, "NOT_FOUND", f"no public source {source_id!r}")
    return public_json(request, serialize_source(source), source.release)

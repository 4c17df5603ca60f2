"""Item merges and splits on the admin origin (AW-01, INV-07), and the catalog's likely duplicates.

Role reviewer in the active tenant, with the session's CSRF token, for the two decisions; the actor is the
session's reviewer (``reviewer:<subject>``), never a body field. ``Idempotency-Key`` (optional): a retry with the
same key and body returns the first decision (200, ``Idempotent-Replayed: true``); the same key with another body
is 409 IDEMPOTENCY_CONFLICT. A refusal writes nothing.

- ``POST /v1/items/{item_id}/merge``: merge the item (a duplicate) into ``into``: 201 with the decision; 422
  MERGE_INTO_SELF, 404 NOT_FOUND (an item the tenant does not have), 409 CROSS_CATALOG (an item of another catalog),
  409 ITEM_RETIRED (either item retired or merged already).
- ``POST /v1/items/{item_id}/split``: move ``listing_ids`` to a new item: 201 with the decision; 409
  LISTING_NOT_ON_ITEM, 404 NOT_FOUND, 409 CROSS_CATALOG, 409 ITEM_RETIRED, 409 ITEM_EXISTS, 409 IDENTIFIER_CONFLICT,
  409 INVARIANT_VIOLATION.
- ``GET /v1/catalogs/{catalog_id}/duplicates``: role viewer; the likely duplicate pairs, best first; 404 NOT_FOUND
  for a catalog the tenant does not have.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from prw_api.admin.deps import DecisionsDep, ReviewDep, ReviewerWriteDep, ViewerDep
from prw_api.admin.item_models import (
    DuplicateList,
    DuplicatePairView,
    ItemMergeRequest,
    ItemMergeView,
    ItemSplitRequest,
    ItemSplitView,
)
from prw_api.admin.routes.decisions import REPLAYED_HEADER
from prw_api.admin.routes.releases import IdempotencyKey
from prw_api.errors import ErrorBody
from prw_api.ids import CatalogId, ItemId
from prw_api.routing import PlatformRoute
from prw_platform.services import MergeItems, SplitItem

router = APIRouter(tags=["items"], route_class=PlatformRoute)

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (401, 403, 404, 409, 422, 503)
}


@router.post(
    "/v1/items/{item_id}/merge",
    operation_id="mergeItem",
    status_code=201,
    response_model=ItemMergeView,
    responses={200: {"model": ItemMergeView, "description": "a replay of the Idempotency-Key"}, **_ERRORS},
)
def merge_item(
    item_id: ItemId,
    body: ItemMergeRequest,
    access: ReviewerWriteDep,
    decisions: DecisionsDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> ItemMergeView:
    command = MergeItems(body.catalog_id, item_id, body.into, access.actor, body.rationale, idempotency_key)
    merged = decisions.merge_items(command, access.tenant_id)
    if merged.replayed:
        response.status_code = 200
        response.headers[REPLAYED_HEADER] = "true"
    return ItemMergeView.model_validate(merged)


@router.post(
    "/v1/items/{item_id}/split",
    operation_id="splitItem",
    status_code=201,
    response_model=ItemSplitView,
    responses={200: {"model": ItemSplitView, "description": "a replay of the Idempotency-Key"}, **_ERRORS},
)
def split_item(
    item_id: ItemId,
    body: ItemSplitRequest,
    access: ReviewerWriteDep,
    decisions: DecisionsDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> ItemSplitView:
    command = SplitItem(
        body.catalog_id,
        item_id,
        tuple(body.listing_ids),
        body.title,
        access.actor,
        body.rationale,
        brand=body.brand,
        gtin=body.gtin,
        mpn=body.mpn,
        new_item_id=body.new_item_id,
        idempotency_key=idempotency_key,
    )
    split = decisions.split_item(command, access.tenant_id)
    if split.replayed:
        response.status_code = 200
        response.headers[REPLAYED_HEADER] = "true"
    return ItemSplitView.model_validate(split)


@router.get(
    "/v1/catalogs/{catalog_id}/duplicates",
    operation_id="listDuplicateItems",
    response_model=DuplicateList,
    responses={status: {"model": ErrorBody} for status in (401, 403, 404, 422, 503)},
)
def list_duplicates(
    catalog_id: CatalogId,
    access: ViewerDep,
    review: ReviewDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> DuplicateList:
    pairs = review.duplicates(access.tenant_id, catalog_id, limit=limit)
    return DuplicateList(catalog_id=catalog_id, pairs=[DuplicatePairView.model_validate(p) for p in pairs])

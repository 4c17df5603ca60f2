"""The console's item pages (outside the OpenAPI contract), drawn from the services the JSON routes use:

- ``GET /console/duplicates``: a catalog's likely duplicate pairs (``GET /v1/catalogs/{id}/duplicates``), each
  with a merge button either way;
- ``GET /console/items/{item_id}``: an item with the listings mapped to it now, a merge form and a split form;
- ``POST /console/items/{item_id}/merge`` and ``POST /console/items/{item_id}/split`` (role reviewer, CSRF, the
  Idempotency-Key made when the page was drawn: ``POST /v1/items/{id}/merge`` and ``/split``): then the item the
  listings moved to; a refusal shows the item again with its code, nothing written.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from prw_api.admin.console.access import common_context, console_access, console_form_access
from prw_api.admin.console.errors import ConsoleRoute
from prw_api.admin.console.rendering import page
from prw_api.admin.deps import DecisionsDep, ReviewDep, SessionsDep
from prw_api.ids import CatalogId, ItemId
from prw_platform.errors import DecisionError, StreamUnavailable
from prw_platform.services import Access, MergeItems, ReviewQueue, SplitItem

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

Text = Annotated[str, Form(max_length=500)]


def _key(action: str, item_id: str) -> str:
    """One key per form, made when the page is drawn: a double submit makes one decision."""
    return f"console:{action}:{item_id}:{secrets.token_urlsafe(12)}"


@router.get("/duplicates", response_class=HTMLResponse)
def duplicates_page(
    request: Request,
    sessions: SessionsDep,
    review: ReviewDep,
    decisions: DecisionsDep,
    catalog: Annotated[CatalogId | None, Query()] = None,
) -> Response:
    access = console_access(request, sessions, "viewer")
    catalogs = decisions.pending_releases(access.tenant_id)
    chosen = catalog or (catalogs[0].catalog_id if catalogs else None)
    pairs = review.duplicates(access.tenant_id, chosen) if chosen else []
    context = {
        **common_context(access, "duplicates"),
        "catalogs": catalogs,
        "catalog_id": chosen,
        "pairs": pairs,
        "keys": {
            (p.first.item_id, p.second.item_id): (
                _key("merge", p.second.item_id),
                _key("merge", p.first.item_id),
            )
            for p in pairs
        },
    }
    return page(request, "duplicates.html", context)


@router.get("/items/{item_id}", response_class=HTMLResponse)
def item_page(
    request: Request,
    item_id: ItemId,
    sessions: SessionsDep,
    review: ReviewDep,
    merged: Annotated[ItemId | None, Query()] = None,
    split_from: Annotated[ItemId | None, Query()] = None,
) -> Response:
    access = console_access(request, sessions, "viewer")
    return _item_page(request, access, review, item_id, merged=merged, split_from=split_from)


@router.post("/items/{item_id}/merge")
def merge(
    request: Request,
    item_id: ItemId,
    sessions: SessionsDep,
    review: ReviewDep,
    decisions: DecisionsDep,
    csrf_token: Annotated[str, Form(max_length=200)],
    catalog_id: Annotated[CatalogId, Form()],
    into: Annotated[str, Form(min_length=1, max_length=200)],
    idempotency_key: Annotated[str, Form(min_length=1, max_length=200)],
    rationale: Annotated[str, Form(max_length=4000)] = "",
) -> Response:
    access = console_form_access(request, sessions, csrf_token, "reviewer")
    survivor = into.strip()
    reason = rationale.strip() or f"Merged {item_id} into {survivor} in the review console: the same product"
    command = MergeItems(catalog_id, item_id, survivor, access.actor, reason, idempotency_key)
    try:
        merged = decisions.merge_items(command, access.tenant_id)
    except (DecisionError, StreamUnavailable) as error:
        problem = {"code": error.code, "message": str(error)}
        return _item_page(request, access, review, item_id, status_code=error.status, problem=problem)
    return RedirectResponse(f"/console/items/{merged.into}?merged={merged.item_id}", status_code=303)


@router.post("/items/{item_id}/split")
def split(
    request: Request,
    item_id: ItemId,
    sessions: SessionsDep,
    review: ReviewDep,
    decisions: DecisionsDep,
    csrf_token: Annotated[str, Form(max_length=200)],
    catalog_id: Annotated[CatalogId, Form()],
    title: Annotated[str, Form(min_length=1, max_length=500)],
    idempotency_key: Annotated[str, Form(min_length=1, max_length=200)],
    listing_ids: Annotated[list[str], Form(max_length=500)] = [],  # noqa: B006 (FastAPI copies the default)
    brand: Text = "",
    gtin: Text = "",
    mpn: Text = "",
    rationale: Annotated[str, Form(max_length=4000)] = "",
) -> Response:
    access = console_form_access(request, sessions, csrf_token, "reviewer")
    moved = tuple(listing_ids)
    reason = rationale.strip() or f"Split {len(moved)} listings off {item_id} in the review console"
    command = SplitItem(
        catalog_id,
        item_id,
        moved,
        title.strip(),
        access.actor,
        reason,
        brand=brand.strip() or None,
        gtin=gtin.strip() or None,
        mpn=mpn.strip() or None,
        idempotency_key=idempotency_key,
    )
    try:
        made = decisions.split_item(command, access.tenant_id)
    except (DecisionError, StreamUnavailable) as error:
        problem = {"code": error.code, "message": str(error)}
        return _item_page(request, access, review, item_id, status_code=error.status, problem=problem)
    return RedirectResponse(f"/console/items/{made.new_item_id}?split_from={made.item_id}", status_code=303)


def _item_page(
    request: Request,
    access: Access,
    review: ReviewQueue,
    item_id: str,
    *,
    status_code: int = 200,
    **extra: Any,
) -> Response:
    item = review.item(access.tenant_id, item_id)
    context = {
        **common_context(access, "duplicates"),
        "item": item,
        "merge_key": _key("merge", item_id),
        "split_key": _key("split", item_id),
        **extra,
    }
    return page(request, "item.html", context, status_code=status_code)

"""Catalog administration on the admin origin (INV-07): retire an item; provision a merchant,
bind a source to it, accept its shipping policy.

Role operator_admin in the active tenant, with the session's CSRF token. Each write is an AW-01 decision with the
operator as actor (``operator:<subject>``): the fact at revision + 1, the immutable decision row and its events at
the next stream positions, in one transaction; nothing of it is public before a release (``POST /v1/releases``, or
at once on a catalog that releases automatically).

- ``POST /v1/items/{item_id}/retirement``: 201 with the decision; ``Idempotency-Key`` replays the first result
  (200, ``Idempotent-Replayed: true``); 404 NOT_FOUND (no such item in the catalog), 409 ITEM_RETIRED
  (retirement is final).
- ``PUT /v1/merchants/{merchant_id}``, ``PUT /v1/sources/{source_id}/merchant``,
  ``PUT /v1/merchants/{merchant_id}/shipping-policy``: the state the operator asks for; asking again for the state
  the fact has decides nothing (``unchanged``), so a PUT is safe to repeat without a key. 404
  MERCHANT_NOT_FOUND (bind or policy before the merchant exists), 409 SOURCE_NOT_IN_CATALOG, 422
  INVALID_MERCHANT_FACT.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response

from prw_api.admin.catalog_models import (
    MerchantDecision,
    MerchantRequest,
    RetirementRequest,
    RetirementView,
    ShippingPolicyRequest,
    SourceMerchantRequest,
)
from prw_api.admin.deps import AdminWriteDep, DecisionsDep
from prw_api.admin.routes.decisions import REPLAYED_HEADER
from prw_api.admin.routes.releases import IdempotencyKey
from prw_api.errors import ErrorBody
from prw_api.ids import ItemId, MerchantId, SourceId
from prw_api.routing import PlatformRoute
from prw_platform.services import MerchantService, MerchantSpec, RetireItem, ShippingPolicySpec

router = APIRouter(tags=["catalog"], route_class=PlatformRoute)

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody} for status in (401, 403, 404, 409, 422, 503)
}


def get_merchants(request: Request) -> MerchantService:
    merchants: MerchantService = request.app.state.merchants
    return merchants


MerchantsDep = Annotated[MerchantService, Depends(get_merchants)]


@router.post(
    "/v1/items/{item_id}/retirement",
    operation_id="retireItem",
    status_code=201,
    response_model=RetirementView,
    responses={200: {"model": RetirementView, "description": "a replay of the Idempotency-Key"}, **_ERRORS},
)
def retire_item(
    item_id: ItemId,
    body: RetirementRequest,
    access: AdminWriteDep,
    decisions: DecisionsDep,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> RetirementView:
    command = RetireItem(body.catalog_id, item_id, access.actor, body.rationale, idempotency_key)
    retired = decisions.retire_item(command, access.tenant_id)
    if retired.replayed:
        response.status_code = 200
        response.headers[REPLAYED_HEADER] = "true"
    return RetirementView.of(retired)


@router.put(
    "/v1/merchants/{merchant_id}",
    operation_id="provisionMerchant",
    response_model=MerchantDecision,
    responses=_ERRORS,
)
def provision_merchant(
    merchant_id: MerchantId, body: MerchantRequest, access: AdminWriteDep, merchants: MerchantsDep
) -> MerchantDecision:
    spec = MerchantSpec(merchant_id, body.name, body.url)
    return MerchantDecision.of(
        merchants.provision(
            access.tenant_id, body.catalog_id, spec, actor=access.actor, rationale=body.rationale
        )
    )


@router.put(
    "/v1/sources/{source_id}/merchant",
    operation_id="bindSourceMerchant",
    response_model=MerchantDecision,
    responses=_ERRORS,
)
def bind_source(
    source_id: SourceId, body: SourceMerchantRequest, access: AdminWriteDep, merchants: MerchantsDep
) -> MerchantDecision:
    return MerchantDecision.of(
        merchants.bind_source(
            access.tenant_id,
            body.catalog_id,
            source_id,
            body.merchant_id,
            actor=access.actor,
            rationale=body.rationale,
        )
    )


@router.put(
    "/v1/merchants/{merchant_id}/shipping-policy",
    operation_id="acceptShippingPolicy",
    response_model=MerchantDecision,
    responses=_ERRORS,
)
def accept_shipping_policy(
    merchant_id: MerchantId, body: ShippingPolicyRequest, access: AdminWriteDep, merchants: MerchantsDep
) -> MerchantDecision:
    spec = ShippingPolicySpec(merchant_id, body.currency, body.decimal_rates(), body.decimal_threshold())
    return MerchantDecision.of(
        merchants.accept_shipping_policy(
            access.tenant_id, body.catalog_id, spec, actor=access.actor, rationale=body.rationale
        )
    )

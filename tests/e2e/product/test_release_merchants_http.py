"""Merchants reach the public API only through a release (if_product_query "only released data is
public"), on real parts: operator decisions on a manual catalog (AW-01), the relay (AW-03), the product consumer
(AW-04) and the product app over HTTP. Before the operator's release nothing of the merchant is public; after it
the merchant, its source and its policy are; a later policy stays private until the next release."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import httpx
import pytest

from prw_platform.bootstrap import Platform
from prw_platform.resolver.decisions import MerchantSpec, ShippingPolicySpec
from prw_platform.runtime import drain
from prw_platform.services import AuthorizeRelease
from tests.e2e.product.decisions import served_manual_catalog

TENANT, CATALOG, SOURCE = "ten_relmer", "cat_relmer", "src_relmer_web"
OPERATOR = "operator:ops_anna"
POLICY = ShippingPolicySpec("mer_relmer", "EUR", {"DE": Decimal("4.90")}, None)


@pytest.fixture
def product(platform: Platform) -> Iterator[httpx.Client]:
    with served_manual_catalog(platform, TENANT, CATALOG, SOURCE) as http:
        yield http


def _release(platform: Platform) -> None:
    platform.decisions.release(AuthorizeRelease(CATALOG, OPERATOR, "publish the merchant"), TENANT)
    drain(platform)


def test_a_merchant_is_public_only_after_the_operators_release(
    platform: Platform, product: httpx.Client
) -> None:
    merchants = platform.merchants
    merchants.provision(TENANT, CATALOG, MerchantSpec("mer_relmer", "Relmer"), actor=OPERATOR)
    merchants.bind_source(TENANT, CATALOG, SOURCE, "mer_relmer", actor=OPERATOR)
    merchants.accept_shipping_policy(TENANT, CATALOG, POLICY, actor=OPERATOR)
    drain(platform)  # applied internally: still private
    assert product.get("/v1/merchants/mer_relmer").status_code == 404

    _release(platform)

    released = product.get("/v1/merchants/mer_relmer")
    assert released.status_code == 200, released.text
    merchant = released.json()
    assert (merchant["name"], merchant["sources"]) == ("Relmer", [SOURCE])
    assert merchant["shipping_policy"]["rates"] == [{"destination": "DE", "rate": "4.90"}]
    assert merchant["publication_revision"] == 1


def test_a_later_policy_stays_private_until_the_next_release(
    platform: Platform, product: httpx.Client
) -> None:
    merchants = platform.merchants
    merchants.provision(TENANT, CATALOG, MerchantSpec("mer_relmer", "Relmer"), actor=OPERATOR)
    merchants.accept_shipping_policy(TENANT, CATALOG, POLICY, actor=OPERATOR)
    _release(platform)
    cheaper = ShippingPolicySpec("mer_relmer", "EUR", {"DE": Decimal("1.90")}, None)
    merchants.accept_shipping_policy(TENANT, CATALOG, cheaper, actor=OPERATOR)
    drain(platform)

    def rates() -> object:
        return product.get("/v1/merchants/mer_relmer").json()["shipping_policy"]["rates"]

    assert rates() == [{"destination": "DE", "rate": "4.90"}]
    _release(platform)
    assert rates() == [{"destination": "DE", "rate": "1.90"}]

"""Operator decisions on merchants: provision a merchant, bind a source to it, accept its shipping policy. Each is
an AW-01 decision like any other (``DecisionWriter``): the fact at revision + 1 and its ``merchant.*`` /
``shipping_policy.accepted`` event, plus ``release.authorized`` when the catalog publishes automatically.

Asking for the state a fact already has decides nothing (``None``): provisioning is safe to repeat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection, Database
from prw_platform.resolver import catalogs
from prw_platform.resolver.decisions import catalog_decisions, merchants
from prw_platform.resolver.decisions.commands import DecisionResult
from prw_platform.resolver.decisions.errors import MerchantNotFound, SourceNotInCatalog
from prw_platform.resolver.decisions.events import EventBatch
from prw_platform.resolver.decisions.merchants import (
    MerchantSourceState,
    MerchantSpec,
    MerchantState,
    ShippingPolicySpec,
    ShippingPolicyState,
)
from prw_platform.resolver.decisions.writer import DecisionWriter, StreamLocator


@dataclass(frozen=True)
class _Change:
    """One merchant fact's next revision, computed under the cursor lock."""

    action: str
    details: dict[str, Any]
    add_event: Callable[[EventBatch], None]
    #: (conn, tenant_id, decision_id, now): write the fact at its new revision.
    write: Callable[[Connection, str, str, datetime], None]
    #: What an automatic release publishes of it.
    merchants: tuple[MerchantState, ...] = ()
    merchant_sources: tuple[MerchantSourceState, ...] = ()
    shipping_policies: tuple[ShippingPolicyState, ...] = ()


class MerchantService:
    """The composition root binds the resolver database, the stream locator and the platform's clock."""

    def __init__(self, db: Database, streams: StreamLocator, *, clock: Clock = utc_now) -> None:
        self._db = db
        self._streams = streams
        self._clock = clock

    def provision(
        self, tenant_id: str, catalog_id: str, spec: MerchantSpec, *, actor: str, rationale: str = ""
    ) -> DecisionResult | None:
        """Create the merchant, or accept its new name / URL (revision + 1); None when nothing changes."""

        def plan(conn: Connection, stream: StreamKey) -> _Change | None:
            current = merchants.get_merchant(conn, tenant_id, spec.merchant_id)
            merchant = merchants.next_merchant(current, catalog_id, spec)
            if merchant is None:
                return None
            return _Change(
                "provision_merchant",
                {"merchant_id": merchant.merchant_id, "revision": merchant.revision},
                lambda batch: batch.merchant_changed(merchant),
                lambda conn, tenant, decision, now: merchants.write_merchant(
                    conn, tenant, merchant, decision, now
                ),
                merchants=(merchant,),
            )

        return self._decide(tenant_id, catalog_id, actor, rationale or "merchant provisioned", plan)

    def bind_source(
        self,
        tenant_id: str,
        catalog_id: str,
        source_id: str,
        merchant_id: str,
        *,
        actor: str,
        rationale: str = "",
    ) -> DecisionResult | None:
        """The source's listings are ``merchant_id``'s offers from now on; None when they already are."""

        def plan(conn: Connection, stream: StreamKey) -> _Change | None:
            if catalogs.source_catalog(conn, tenant_id, source_id) != catalog_id:
                raise SourceNotInCatalog(f"source {source_id} is not a source of catalog {catalog_id}")
            merchant = _merchant_of_catalog(conn, tenant_id, catalog_id, merchant_id)
            current = merchants.get_binding(conn, tenant_id, source_id)
            binding = merchants.next_binding(current, catalog_id, source_id, merchant_id)
            if binding is None:
                return None
            return _Change(
                "bind_source",
                {"source_id": source_id, "merchant_id": merchant_id, "revision": binding.revision},
                lambda batch: batch.source_bound(binding, merchant),
                lambda conn, tenant, decision, now: merchants.write_binding(
                    conn, tenant, binding, decision, now
                ),
                merchant_sources=(binding,),
            )

        return self._decide(tenant_id, catalog_id, actor, rationale or "source bound to its merchant", plan)

    def accept_shipping_policy(
        self, tenant_id: str, catalog_id: str, spec: ShippingPolicySpec, *, actor: str, rationale: str = ""
    ) -> DecisionResult | None:
        """Accept the merchant's shipping policy (it replaces the previous one); None when it is the current one."""

        def plan(conn: Connection, stream: StreamKey) -> _Change | None:
            merchant = _merchant_of_catalog(conn, tenant_id, catalog_id, spec.merchant_id)
            current = merchants.get_policy(conn, tenant_id, spec.merchant_id)
            policy = merchants.next_policy(current, catalog_id, spec)
            if policy is None:
                return None
            return _Change(
                "accept_shipping_policy",
                {"merchant_id": policy.merchant_id, "revision": policy.revision},
                lambda batch: batch.shipping_policy_accepted(policy, merchant),
                lambda conn, tenant, decision, now: merchants.write_policy(
                    conn, tenant, policy, decision, now
                ),
                shipping_policies=(policy,),
            )

        return self._decide(tenant_id, catalog_id, actor, rationale or "shipping policy accepted", plan)

    def _decide(
        self,
        tenant_id: str,
        catalog_id: str,
        actor: str,
        rationale: str,
        plan: Callable[[Connection, StreamKey], _Change | None],
    ) -> DecisionResult | None:
        if not actor.startswith("operator:") or len(actor) == len("operator:"):
            raise ValueError(f"merchants are provisioned by an operator (operator:<id>), not {actor!r}")
        stream = catalog_decisions.catalog_stream(self._db, self._streams, tenant_id, catalog_id)

        def work(conn: Connection) -> DecisionResult | None:
            writer = DecisionWriter.lock(conn, stream, self._clock)
            change = plan(conn, stream)
            if change is None:
                return None
            release = None
            if writer.publishes_automatically():
                release = writer.release(
                    merchants=change.merchants,
                    merchant_sources=change.merchant_sources,
                    shipping_policies=change.shipping_policies,
                )
            record = writer.write(
                change.action,
                actor,
                rationale,
                change.details,
                events=change.add_event,
                facts=lambda: change.write(conn, tenant_id, writer.decision_id, writer.now),
                release=release,
            )
            return record.result(replayed=False)

        # A re-run after an ambiguous commit finds the fact already in the asked state: None, nothing decided twice.
        return self._db.run(work, tenant_id=tenant_id)


def _merchant_of_catalog(
    conn: Connection, tenant_id: str, catalog_id: str, merchant_id: str
) -> MerchantState:
    merchant = merchants.get_merchant(conn, tenant_id, merchant_id)
    if merchant is None or merchant.catalog_id != catalog_id:
        raise MerchantNotFound(f"no merchant {merchant_id} in catalog {catalog_id}: provision it first")
    return merchant

"""Merchant facts: merchants, source → merchant bindings and shipping policies, each an aggregate with a revision
(AW-01), like the item, listing and mapping facts of ``facts.py``.

Reads and writes run inside the decision transaction, after the stream cursor is locked; an update names the
revision it replaces, so a writer that skipped the lock fails loudly. ``next_*`` return None when the requested
state is the current one: provisioning is safe to repeat and accepts nothing new.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Final

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.contracts import (
    MerchantPayload,
    MerchantSourcePayload,
    ShippingPolicyPayload,
    ShippingRate,
    decimal_string,
)
from prw_platform.db.database import Connection, affected_rows
from prw_platform.inputs import InvalidInput, check_http_url, is_country_code, unstorable_character
from prw_platform.resolver.decisions.errors import InvalidMerchantFact

_MERCHANT_ID: Final = re.compile(r"^mer_[a-z0-9_]{1,120}$")
_CURRENCY: Final = re.compile(r"^[A-Z]{3}$")


@dataclass(frozen=True, slots=True)
class MerchantState:
    merchant_id: str
    catalog_id: str
    revision: int
    name: str
    url: str | None

    def payload(self) -> MerchantPayload:
        return MerchantPayload(merchant=self.merchant_id, name=self.name, url=self.url)


@dataclass(frozen=True, slots=True)
class MerchantSourceState:
    source_id: str
    catalog_id: str
    merchant_id: str
    revision: int

    def payload(self) -> MerchantSourcePayload:
        return MerchantSourcePayload(source_id=self.source_id, merchant=self.merchant_id)


@dataclass(frozen=True, slots=True)
class ShippingPolicyState:
    merchant_id: str
    catalog_id: str
    revision: int
    currency: str
    #: destination (ISO 3166-1 alpha-2) -> rate, in destination order.
    rates: dict[str, Decimal]
    free_shipping_threshold: Decimal | None

    def payload(self) -> ShippingPolicyPayload:
        return ShippingPolicyPayload(
            merchant=self.merchant_id,
            currency=self.currency,
            rates=tuple(
                ShippingRate(destination=destination, rate=decimal_string(rate))
                for destination, rate in sorted(self.rates.items())
            ),
            free_shipping_threshold=(
                None if self.free_shipping_threshold is None else decimal_string(self.free_shipping_threshold)
            ),
        )


@dataclass(frozen=True, slots=True)
class MerchantSpec:
    """What an operator provisions: ``merchant_id`` is ``mer_<lower-case letters, digits, _>``."""

    merchant_id: str
    name: str
    url: str | None = None


@dataclass(frozen=True, slots=True)
class ShippingPolicySpec:
    """A merchant's shipping policy as an operator submits it for acceptance."""

    merchant_id: str
    currency: str
    rates: dict[str, Decimal]
    free_shipping_threshold: Decimal | None = None


def check_merchant(spec: MerchantSpec) -> None:
    if not _MERCHANT_ID.match(spec.merchant_id):
        raise InvalidMerchantFact(f"merchant id {spec.merchant_id!r} is not mer_<a-z, 0-9, _>")
    if not spec.name.strip() or len(spec.name) > 200 or unstorable_character(spec.name) is not None:
        raise InvalidMerchantFact("a merchant has a name of 1 to 200 storable characters")
    if spec.url is not None:
        try:
            check_http_url(spec.url)  # published verbatim, like a listing's URL
        except InvalidInput as error:
            raise InvalidMerchantFact(f"merchant url: {error}") from error


def check_policy(spec: ShippingPolicySpec) -> None:
    if not _CURRENCY.match(spec.currency):
        raise InvalidMerchantFact(f"currency {spec.currency!r} is not an ISO 4217 code")
    foreign = sorted(code for code in spec.rates if not is_country_code(code))
    if foreign:
        raise InvalidMerchantFact(f"destinations {', '.join(foreign)} are not ISO 3166-1 alpha-2 codes")
    amounts = [
        *spec.rates.values(),
        *([spec.free_shipping_threshold] if spec.free_shipping_threshold else []),
    ]
    if any(not amount.is_finite() or amount < 0 for amount in amounts):
        raise InvalidMerchantFact("rates and the free-shipping threshold are amounts of 0 or more")


def next_merchant(current: MerchantState | None, catalog_id: str, spec: MerchantSpec) -> MerchantState | None:
    check_merchant(spec)
    if current is not None and current.catalog_id != catalog_id:
        raise InvalidMerchantFact(f"merchant {spec.merchant_id} belongs to catalog {current.catalog_id}")
    proposed = MerchantState(
        spec.merchant_id, catalog_id, current.revision + 1 if current else 1, spec.name.strip(), spec.url
    )
    if current is not None and proposed.payload() == current.payload():
        return None
    return proposed


def next_binding(
    current: MerchantSourceState | None, catalog_id: str, source_id: str, merchant_id: str
) -> MerchantSourceState | None:
    if current is not None and current.merchant_id == merchant_id:
        return None
    return MerchantSourceState(source_id, catalog_id, merchant_id, current.revision + 1 if current else 1)


def next_policy(
    current: ShippingPolicyState | None, catalog_id: str, spec: ShippingPolicySpec
) -> ShippingPolicyState | None:
    check_policy(spec)
    proposed = ShippingPolicyState(
        spec.merchant_id,
        catalog_id,
        current.revision + 1 if current else 1,
        spec.currency,
        dict(sorted(spec.rates.items())),
        spec.free_shipping_threshold,
    )
    if current is not None and proposed.payload() == current.payload():
        return None
    return proposed


# --- SQL ------------------------------------------------------------------------------------------------------


def get_merchant(conn: Connection, tenant_id: str, merchant_id: str) -> MerchantState | None:
    with conn.cursor(row_factory=class_row(MerchantState)) as cur:
        return cur.execute(
            """SELECT merchant_id, catalog_id, revision, name, url FROM resolver.merchant
               WHERE tenant_id = %s AND merchant_id = %s""",
            (tenant_id, merchant_id),
        ).fetchone()


def get_binding(conn: Connection, tenant_id: str, source_id: str) -> MerchantSourceState | None:
    with conn.cursor(row_factory=class_row(MerchantSourceState)) as cur:
        return cur.execute(
            """SELECT source_id, catalog_id, merchant_id, revision FROM resolver.merchant_source
               WHERE tenant_id = %s AND source_id = %s""",
            (tenant_id, source_id),
        ).fetchone()


@dataclass(frozen=True, slots=True)
class _PolicyRow:
    merchant_id: str
    catalog_id: str
    revision: int
    currency: str
    rates: dict[str, str]
    free_shipping_threshold: Decimal | None


def get_policy(conn: Connection, tenant_id: str, merchant_id: str) -> ShippingPolicyState | None:
    with conn.cursor(row_factory=class_row(_PolicyRow)) as cur:
        row = cur.execute(
            """SELECT merchant_id, catalog_id, revision, currency, rates, free_shipping_threshold
               FROM resolver.shipping_policy WHERE tenant_id = %s AND merchant_id = %s""",
            (tenant_id, merchant_id),
        ).fetchone()
    return None if row is None else _policy_state(row)


def _policy_state(row: _PolicyRow) -> ShippingPolicyState:
    return ShippingPolicyState(
        row.merchant_id,
        row.catalog_id,
        row.revision,
        row.currency,
        {destination: Decimal(rate) for destination, rate in row.rates.items()},
        row.free_shipping_threshold,
    )


def catalog_merchants(conn: Connection, tenant_id: str, catalog_id: str) -> list[MerchantState]:
    """Every merchant of the catalog at its current revision (an operator release publishes what changed)."""
    with conn.cursor(row_factory=class_row(MerchantState)) as cur:
        return cur.execute(
            """SELECT merchant_id, catalog_id, revision, name, url FROM resolver.merchant
               WHERE tenant_id = %s AND catalog_id = %s ORDER BY merchant_id""",
            (tenant_id, catalog_id),
        ).fetchall()


def catalog_bindings(conn: Connection, tenant_id: str, catalog_id: str) -> list[MerchantSourceState]:
    with conn.cursor(row_factory=class_row(MerchantSourceState)) as cur:
        return cur.execute(
            """SELECT source_id, catalog_id, merchant_id, revision FROM resolver.merchant_source
               WHERE tenant_id = %s AND catalog_id = %s ORDER BY source_id""",
            (tenant_id, catalog_id),
        ).fetchall()


def catalog_policies(conn: Connection, tenant_id: str, catalog_id: str) -> list[ShippingPolicyState]:
    with conn.cursor(row_factory=class_row(_PolicyRow)) as cur:
        rows = cur.execute(
            """SELECT merchant_id, catalog_id, revision, currency, rates, free_shipping_threshold
               FROM resolver.shipping_policy WHERE tenant_id = %s AND catalog_id = %s ORDER BY merchant_id""",
            (tenant_id, catalog_id),
        ).fetchall()
    return [_policy_state(row) for row in rows]


def write_merchant(
    conn: Connection, tenant_id: str, merchant: MerchantState, decision_id: str, now: datetime
) -> None:
    _upsert(
        conn,
        """INSERT INTO resolver.merchant (tenant_id, catalog_id, merchant_id, revision, name, url, decision_id,
               updated_at)
           VALUES (%(tenant)s, %(catalog)s, %(id)s, %(revision)s, %(name)s, %(url)s, %(decision)s, %(now)s)
           ON CONFLICT (tenant_id, merchant_id) DO UPDATE
              SET revision = excluded.revision, name = excluded.name, url = excluded.url,
                  decision_id = excluded.decision_id, updated_at = excluded.updated_at
            WHERE merchant.revision = %(previous)s""",
        {"id": merchant.merchant_id, "name": merchant.name, "url": merchant.url},
        tenant_id,
        merchant.catalog_id,
        merchant.revision,
        decision_id,
        now,
    )


def write_binding(
    conn: Connection, tenant_id: str, binding: MerchantSourceState, decision_id: str, now: datetime
) -> None:
    _upsert(
        conn,
        """INSERT INTO resolver.merchant_source (tenant_id, catalog_id, source_id, merchant_id, revision,
               decision_id, updated_at)
           VALUES (%(tenant)s, %(catalog)s, %(id)s, %(merchant)s, %(revision)s, %(decision)s, %(now)s)
           ON CONFLICT (tenant_id, source_id) DO UPDATE
              SET merchant_id = excluded.merchant_id, revision = excluded.revision,
                  decision_id = excluded.decision_id, updated_at = excluded.updated_at
            WHERE merchant_source.revision = %(previous)s""",
        {"id": binding.source_id, "merchant": binding.merchant_id},
        tenant_id,
        binding.catalog_id,
        binding.revision,
        decision_id,
        now,
    )


def write_policy(
    conn: Connection, tenant_id: str, policy: ShippingPolicyState, decision_id: str, now: datetime
) -> None:
    _upsert(
        conn,
        """INSERT INTO resolver.shipping_policy (tenant_id, catalog_id, merchant_id, revision, currency, rates,
               free_shipping_threshold, decision_id, updated_at)
           VALUES (%(tenant)s, %(catalog)s, %(id)s, %(revision)s, %(currency)s, %(rates)s, %(threshold)s,
                   %(decision)s, %(now)s)
           ON CONFLICT (tenant_id, merchant_id) DO UPDATE
              SET revision = excluded.revision, currency = excluded.currency, rates = excluded.rates,
                  free_shipping_threshold = excluded.free_shipping_threshold,
                  decision_id = excluded.decision_id, updated_at = excluded.updated_at
            WHERE shipping_policy.revision = %(previous)s""",
        {
            "id": policy.merchant_id,
            "currency": policy.currency,
            "rates": Jsonb({destination: decimal_string(rate) for destination, rate in policy.rates.items()}),
            "threshold": policy.free_shipping_threshold,
        },
        tenant_id,
        policy.catalog_id,
        policy.revision,
        decision_id,
        now,
    )


def _upsert(
    conn: Connection,
    statement: str,
    values: dict[str, Any],
    tenant_id: str,
    catalog_id: str,
    revision: int,
    decision_id: str,
    now: datetime,
) -> None:
    """Insert revision 1, or replace exactly the previous revision (the decision holds the cursor lock)."""
    params = {
        **values,
        "tenant": tenant_id,
        "catalog": catalog_id,
        "revision": revision,
        "previous": revision - 1,
        "decision": decision_id,
        "now": now,
    }
    if affected_rows(conn, statement, params) != 1:
        raise RuntimeError(f"{values['id']} changed outside the stream cursor lock")

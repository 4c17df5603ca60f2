"""Receipts (if_receipt_get): the durable answer to a capture submission; this module owns ``resolver.receipt``.

"A 202 on capture means the receipt is stored. It does not mean the listing is identified." Collectors read the
receipts of their own stable instance (not of their rotating client_id); an authenticated unknown id is 404
NOT_FOUND, another tenant's is 403 TENANT_SCOPE_DENIED, another instance's is 403 INSTANCE_SCOPE_DENIED.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import RECEIPTS_READ
from prw_platform.db.database import Connection
from prw_platform.resolver.intake.context import IntakeContext
from prw_platform.resolver.intake.errors import InstanceScopeDenied, NotFound, TenantScopeDenied


@dataclass(frozen=True, slots=True)
class Receipt:
    receipt_id: str
    capture_id: str
    status: str
    received_at: datetime
    instance_id: str


@dataclass(frozen=True, slots=True)
class _StoredReceipt:
    tenant_id: str
    receipt_id: str
    capture_id: str
    status: str
    received_at: datetime
    instance_id: str
    request_sha256: str

    def receipt(self) -> Receipt:
        return Receipt(self.receipt_id, self.capture_id, self.status, self.received_at, self.instance_id)


@dataclass(frozen=True, slots=True)
class KeyedReceipt:
    """A receipt found by its Idempotency-Key, with the canonical sha256 of the request that created it."""

    receipt: Receipt
    request_sha256: str


def new_receipt_id() -> str:
    return f"rcpt_{secrets.token_hex(12)}"


def get_receipt(ctx: IntakeContext, principal: CollectorPrincipal, receipt_id: str) -> Receipt:
    principal.require_scope(RECEIPTS_READ)
    found = ctx.db.run(lambda conn: _by_id(conn, receipt_id), tenant_id=principal.tenant_id, read_only=True)
    if found is None:
        raise NotFound(f"no receipt {receipt_id}")
    tenant_id, receipt = found
    if tenant_id != principal.tenant_id:
        raise TenantScopeDenied("the receipt belongs to another tenant")
    if receipt.instance_id != principal.instance_id:
        raise InstanceScopeDenied("the receipt belongs to another collector instance")
    return receipt


def insert_receipt(
    conn: Connection, tenant_id: str, receipt: Receipt, idempotency_key: str, request_sha256: str
) -> None:
    conn.execute(
        """INSERT INTO resolver.receipt (tenant_id, receipt_id, capture_id, instance_id, idempotency_key,
               request_sha256, status, received_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            tenant_id,
            receipt.receipt_id,
            receipt.capture_id,
            receipt.instance_id,
            idempotency_key,
            request_sha256,
            receipt.status,
            receipt.received_at,
        ),
    )


def receipt_by_key(conn: Connection, tenant_id: str, idempotency_key: str) -> KeyedReceipt | None:
    with conn.cursor(row_factory=class_row(_StoredReceipt)) as cur:
        row = cur.execute(
            """SELECT tenant_id, receipt_id, capture_id, status, received_at, instance_id, request_sha256
               FROM resolver.receipt WHERE tenant_id = %s AND idempotency_key = %s""",
            (tenant_id, idempotency_key),
        ).fetchone()
    return KeyedReceipt(row.receipt(), row.request_sha256) if row else None


def _by_id(conn: Connection, receipt_id: str) -> tuple[str, Receipt] | None:
    # Migration 0005's receipt_by_id policy: this transaction may see the one receipt it names, in any tenant,
    # only so that another tenant's id is told apart from an unknown one. Nothing of that row is returned.
    conn.execute("SELECT set_config('app.receipt_id', %s, true)", (receipt_id,))
    with conn.cursor(row_factory=class_row(_StoredReceipt)) as cur:
        row = cur.execute(
            """SELECT tenant_id, receipt_id, capture_id, status, received_at, instance_id, request_sha256
               FROM resolver.receipt WHERE receipt_id = %s""",
            (receipt_id,),
        ).fetchone()
    return (row.tenant_id, row.receipt()) if row else None

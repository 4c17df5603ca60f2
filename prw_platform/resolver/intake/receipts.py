"""Receipts (if_receipt_get): the durable answer to a capture submission; this module owns ``resolver.receipt``.

A 202 on capture means the receipt is stored, not that the listing is identified. Collectors read the
receipts of their own stable instance (not of their rotating client_id); an authenticated unknown id is 404
NOT_FOUND, another tenant's is 403 TENANT_SCOPE_DENIED, another instance's is 403 INSTANCE_SCOPE_DENIED.
Operators read any receipt (``operator_receipt``, through ``Platform.reports``).

Status: a receipt starts ``stored`` (if_capture_submit's example) and then follows its capture through
resolution, set by the resolution consumer in the transaction of its results (``record_decision``,
``record_failure``): ``accepted`` once a decision committed for the capture, ``in_review`` when a review case
opened, ``failed`` with ``reason`` (the dead-letter code) when its job was dead-lettered. ``accepted`` never
means applied (if_receipt_get): no status here follows the relay or the product service, so no status may ever
claim that the product applied or published anything.

Idempotency window (migration 0009): each use of an Idempotency-Key has a ``key_generation``; a key that comes
back after the previous generation's window starts generation n + 1 (a new capture and receipt), and the old
receipt stays readable by its id.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from psycopg.rows import class_row

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import RECEIPTS_READ
from prw_platform.db.database import Connection, Database
from prw_platform.resolver.intake.context import IntakeContext
from prw_platform.resolver.intake.errors import InstanceScopeDenied, NotFound, TenantScopeDenied

ReceiptStatus = Literal["stored", "accepted", "in_review", "failed"]

STORED: Final = "stored"
ACCEPTED: Final = (
    "accepted"  # a decision committed: never "applied" (the product service may not have it yet)
)
IN_REVIEW: Final = "in_review"
FAILED: Final = "failed"
STATUSES: Final = (STORED, ACCEPTED, IN_REVIEW, FAILED)


@dataclass(frozen=True, slots=True)
class Receipt:
    receipt_id: str
    capture_id: str
    status: ReceiptStatus
    received_at: datetime
    instance_id: str
    #: The dead-letter code when ``status`` is ``failed``; None otherwise.
    reason: str | None = None
    #: When resolution last changed ``status``; None while it is ``stored``.
    status_changed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class TenantReceipt:
    """A receipt with its tenant, as an operator reads it (any receipt of any tenant, ``prw receipts show``)."""

    tenant_id: str
    receipt: Receipt


_COLUMNS = (
    "tenant_id, receipt_id, capture_id, status, received_at, instance_id, request_sha256, key_generation, reason, "
    "status_changed_at"
)


@dataclass(frozen=True, slots=True)
class _StoredReceipt:
    tenant_id: str
    receipt_id: str
    capture_id: str
    status: ReceiptStatus
    received_at: datetime
    instance_id: str
    request_sha256: str
    key_generation: int
    reason: str | None
    status_changed_at: datetime | None

    def receipt(self) -> Receipt:
        return Receipt(
            self.receipt_id,
            self.capture_id,
            self.status,
            self.received_at,
            self.instance_id,
            self.reason,
            self.status_changed_at,
        )


@dataclass(frozen=True, slots=True)
class KeyedReceipt:
    """The latest receipt of an Idempotency-Key, with the canonical sha256 of the request that created it and
    the key's generation (migration 0009)."""

    receipt: Receipt
    request_sha256: str
    key_generation: int


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


def operator_receipt(operator_db: Database, receipt_id: str, tenant_id: str | None = None) -> TenantReceipt:
    """Any receipt, read through ``prw_operator`` (docs/operators); with ``tenant_id``, only that tenant's (another
    tenant's is TENANT_SCOPE_DENIED, as for a collector). Unknown: NOT_FOUND."""

    def read(conn: Connection) -> _StoredReceipt | None:
        with conn.cursor(row_factory=class_row(_StoredReceipt)) as cur:
            return cur.execute(
                f"SELECT {_COLUMNS} FROM resolver.receipt WHERE receipt_id = %s",  # noqa: S608 (constant columns)
                (receipt_id,),
            ).fetchone()

    row = operator_db.run(read, read_only=True)
    if row is None:
        raise NotFound(f"no receipt {receipt_id}")
    if tenant_id is not None and row.tenant_id != tenant_id:
        raise TenantScopeDenied(f"receipt {receipt_id} belongs to another tenant than {tenant_id}")
    return TenantReceipt(row.tenant_id, row.receipt())


def insert_receipt(
    conn: Connection,
    tenant_id: str,
    receipt: Receipt,
    idempotency_key: str,
    request_sha256: str,
    key_generation: int = 1,
) -> None:
    conn.execute(
        """INSERT INTO resolver.receipt (tenant_id, receipt_id, capture_id, instance_id, idempotency_key,
               key_generation, request_sha256, status, received_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)""",
        (
            tenant_id,
            receipt.receipt_id,
            receipt.capture_id,
            receipt.instance_id,
            idempotency_key,
            key_generation,
            request_sha256,
            receipt.status,
            receipt.received_at,
        ),
    )


def receipt_by_key(conn: Connection, tenant_id: str, idempotency_key: str) -> KeyedReceipt | None:
    """The latest use of the key (its highest generation), or None if the tenant never used it."""
    return send_receipt_by_key(conn, tenant_id, idempotency_key)()


def send_receipt_by_key(
    conn: Connection, tenant_id: str, idempotency_key: str
) -> Callable[[], KeyedReceipt | None]:
    """``receipt_by_key`` in two steps: the query is sent now and its row read when the returned function is
    called (in pipeline mode, together with every statement sent in between)."""
    cur = conn.cursor(row_factory=class_row(_StoredReceipt))
    cur.execute(
        f"""SELECT {_COLUMNS} FROM resolver.receipt
            WHERE tenant_id = %s AND idempotency_key = %s
            ORDER BY key_generation DESC LIMIT 1""",  # noqa: S608 (constant columns)
        (tenant_id, idempotency_key),
    )

    def latest() -> KeyedReceipt | None:
        with cur:
            row = cur.fetchone()
        return KeyedReceipt(row.receipt(), row.request_sha256, row.key_generation) if row else None

    return latest


def record_decision(
    conn: Connection, tenant_id: str, capture_id: str, *, review: bool, now: datetime
) -> None:
    """The resolution consumer committed a decision for the capture (in its results' transaction): ``accepted``
    for an automatic rule's decision, ``in_review`` when the decision opened a review case. An accepted receipt
    stays accepted (a later review case for the same capture does not undo a committed decision). Accepted
    never means applied: the product service applies the change later, or not at all (if_receipt_get)."""
    status = IN_REVIEW if review else ACCEPTED
    conn.execute(
        """UPDATE resolver.receipt SET status = %s, reason = NULL, status_changed_at = %s
           WHERE tenant_id = %s AND capture_id = %s AND status <> %s AND (%s OR status <> %s)""",
        (status, now, tenant_id, capture_id, status, not review, ACCEPTED),
    )


def record_failure(conn: Connection, tenant_id: str, capture_id: str, reason: str, now: datetime) -> None:
    """The capture's job was dead-lettered with ``reason`` (its code): ``failed``. Only a receipt still
    ``stored`` fails; one whose capture was already decided keeps that status (a late duplicate cannot undo it)."""
    conn.execute(
        """UPDATE resolver.receipt SET status = %s, reason = %s, status_changed_at = %s
           WHERE tenant_id = %s AND capture_id = %s AND status = %s""",
        (FAILED, reason, now, tenant_id, capture_id, STORED),
    )


def _by_id(conn: Connection, receipt_id: str) -> tuple[str, Receipt] | None:
    # Migration 0005's receipt_by_id policy: this transaction may see the one receipt it names, in any tenant,
    # only so that another tenant's id is told apart from an unknown one. Nothing of that row is returned.
    conn.execute("SELECT set_config('app.receipt_id', %s, true)", (receipt_id,))
    with conn.cursor(row_factory=class_row(_StoredReceipt)) as cur:
        row = cur.execute(
            f"SELECT {_COLUMNS} FROM resolver.receipt WHERE receipt_id = %s",  # noqa: S608 (constant columns)
            (receipt_id,),
        ).fetchone()
    return (row.tenant_id, row.receipt()) if row else None

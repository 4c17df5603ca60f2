"""Operator reports over the product tables, across tenants (run as the read-only ``prw_operator`` role).

The documented exception to one owner per table (``prw_platform.db.ownership.REPORT_READERS``): this module reads
any product table and writes none.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from psycopg.rows import class_row, scalar_row

from prw_platform.db.database import Connection, Database
from prw_platform.product.progress import StreamProgress, stream_progress


def projected_tenants(owner: Database) -> list[str]:
    def work(conn: Connection) -> list[str]:
        return (
            conn.cursor(row_factory=scalar_row)
            .execute("SELECT DISTINCT tenant_id FROM product.projected_scope ORDER BY 1")
            .fetchall()
        )

    return owner.run(work, read_only=True)


def all_stream_progress(owner: Database) -> list[StreamProgress]:
    return [p for tenant in projected_tenants(owner) for p in stream_progress(owner, tenant)]


def public_listings_without_public_owner(owner: Database) -> int:
    """INV-01 on the public side: every public listing has exactly one owner, and that owner is a public item of
    the same generation (0 when it holds)."""

    def work(conn: Connection) -> int:
        orphaned: int | None = (
            conn.cursor(row_factory=scalar_row)
            .execute(
                """SELECT count(*) FROM product.public_listing l
                    WHERE NOT EXISTS (SELECT 1 FROM product.public_item i
                                       WHERE i.tenant_id = l.tenant_id AND i.catalog_id = l.catalog_id
                                         AND i.generation = l.generation AND i.item_id = l.item_id)"""
            )
            .fetchone()
        )
        return orphaned or 0

    return owner.run(work, read_only=True)


@dataclass(frozen=True, slots=True)
class _PublicCounts:
    public_items: int
    public_listings: int
    public_merchants: int
    inventory_observations: int
    applied_items: int
    parked_events: int


def public_counts(owner: Database) -> dict[str, int]:
    def work(conn: Connection) -> dict[str, int]:
        counts = (
            conn.cursor(row_factory=class_row(_PublicCounts))
            .execute(
                """SELECT (SELECT count(*) FROM product.public_item) AS public_items,
                          (SELECT count(*) FROM product.public_listing) AS public_listings,
                          (SELECT count(*) FROM product.public_merchant) AS public_merchants,
                          (SELECT count(*) FROM product.inventory_observation) AS inventory_observations,
                          (SELECT count(*) FROM product.item_projection) AS applied_items,
                          (SELECT count(*) FROM product.parked_event) AS parked_events"""
            )
            .fetchone()
        )
        assert counts is not None  # scalar subqueries always return one row
        return asdict(counts)

    return owner.run(work, read_only=True)

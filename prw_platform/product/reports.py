"""Operator reports over the product tables, across tenants (run as the read-only ``prw_operator`` role)."""

from __future__ import annotations

from prw_platform.db.database import Connection, Database
from prw_platform.product.progress import StreamProgress, stream_progress


def projected_tenants(owner: Database) -> list[str]:
    def work(conn: Connection) -> list[str]:
        rows = conn.execute("SELECT DISTINCT tenant_id FROM product.projected_scope ORDER BY 1").fetchall()
        return [str(r["tenant_id"]) for r in rows]

    return owner.run(work, read_only=True)


def all_stream_progress(owner: Database) -> list[StreamProgress]:
    return [p for tenant in projected_tenants(owner) for p in stream_progress(owner, tenant)]


def public_listings_without_public_owner(owner: Database) -> int:
    """INV-01 on the public side: every public listing has exactly one owner, and that owner is a public item of
    the same generation (0 when it holds)."""

    def work(conn: Connection) -> int:
        row = conn.execute(
            """SELECT count(*) AS n FROM product.public_listing l
                WHERE NOT EXISTS (SELECT 1 FROM product.public_item i
                                   WHERE i.tenant_id = l.tenant_id AND i.catalog_id = l.catalog_id
                                     AND i.generation = l.generation AND i.item_id = l.item_id)"""
        ).fetchone()
        return int(str(row["n"])) if row else 0

    return owner.run(work, read_only=True)


def public_counts(owner: Database) -> dict[str, int]:
    def work(conn: Connection) -> dict[str, int]:
        row = conn.execute(
            """SELECT (SELECT count(*) FROM product.public_item) AS public_items,
                      (SELECT count(*) FROM product.public_listing) AS public_listings,
                      (SELECT count(*) FROM product.item_projection) AS applied_items,
                      (SELECT count(*) FROM product.parked_event) AS parked_events"""
        ).fetchone()
        return {k: int(str(v)) for k, v in (row or {}).items()}

    return owner.run(work, read_only=True)

"""The saved records that reference managed files: item pictures (a main picture and a gallery) and product classes
(the catalog's categories, each with a picture and its member items). Seed 004's "owner records".

``references`` is the workspace-scoped owner check of the cleanup consumer (discarding -> discarded needs "no
retained reference", discarding -> attached needs "a saved owner record must still name the asset").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row, scalar_row

from prw_platform.db.database import Connection


@dataclass(frozen=True, slots=True)
class ItemPicture:
    slot: str
    position: int
    file_id: str


@dataclass(frozen=True, slots=True)
class ProductClass:
    class_id: str
    catalog_id: str
    name: str
    picture_file_id: str | None
    created_at: datetime
    updated_at: datetime


def item_pictures(conn: Connection, tenant_id: str, item_id: str, *, lock: bool = False) -> list[ItemPicture]:
    query = (
        """SELECT slot, position, file_id FROM resolver.item_picture WHERE tenant_id = %s AND item_id = %s
           ORDER BY slot DESC, position FOR UPDATE"""
        if lock
        else """SELECT slot, position, file_id FROM resolver.item_picture WHERE tenant_id = %s AND item_id = %s
           ORDER BY slot DESC, position"""
    )
    with conn.cursor(row_factory=class_row(ItemPicture)) as cur:
        return cur.execute(query, (tenant_id, item_id)).fetchall()


def replace_item_pictures(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    item_id: str,
    pictures: Sequence[ItemPicture],
    now: datetime,
) -> None:
    conn.execute(
        "DELETE FROM resolver.item_picture WHERE tenant_id = %s AND item_id = %s", (tenant_id, item_id)
    )
    if pictures:
        with conn.cursor() as cur:
            cur.executemany(
                """INSERT INTO resolver.item_picture (tenant_id, catalog_id, item_id, slot, position, file_id,
                       updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)""",
                [(tenant_id, catalog_id, item_id, p.slot, p.position, p.file_id, now) for p in pictures],
            )


def get_class(conn: Connection, tenant_id: str, class_id: str, *, lock: bool = False) -> ProductClass | None:
    query = (
        """SELECT class_id, catalog_id, name, picture_file_id, created_at, updated_at FROM resolver.product_class
           WHERE tenant_id = %s AND class_id = %s FOR UPDATE"""
        if lock
        else """SELECT class_id, catalog_id, name, picture_file_id, created_at, updated_at
           FROM resolver.product_class WHERE tenant_id = %s AND class_id = %s"""
    )
    with conn.cursor(row_factory=class_row(ProductClass)) as cur:
        return cur.execute(query, (tenant_id, class_id)).fetchone()


def list_classes(conn: Connection, tenant_id: str, catalog_id: str) -> list[ProductClass]:
    with conn.cursor(row_factory=class_row(ProductClass)) as cur:
        return cur.execute(
            """SELECT class_id, catalog_id, name, picture_file_id, created_at, updated_at
               FROM resolver.product_class WHERE tenant_id = %s AND catalog_id = %s ORDER BY class_id""",
            (tenant_id, catalog_id),
        ).fetchall()


def insert_class(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    class_id: str,
    name: str,
    picture_file_id: str | None,
    now: datetime,
) -> bool:
    """False when the class id is taken (nothing written)."""
    with conn.cursor(row_factory=scalar_row) as cur:
        inserted = cur.execute(
            """INSERT INTO resolver.product_class (tenant_id, catalog_id, class_id, name, picture_file_id,
                   created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (tenant_id, class_id) DO NOTHING RETURNING class_id""",
            (tenant_id, catalog_id, class_id, name, picture_file_id, now, now),
        ).fetchone()
    return inserted is not None


def update_class(
    conn: Connection, tenant_id: str, class_id: str, name: str, picture_file_id: str | None, now: datetime
) -> None:
    conn.execute(
        """UPDATE resolver.product_class SET name = %s, picture_file_id = %s, updated_at = %s
           WHERE tenant_id = %s AND class_id = %s""",
        (name, picture_file_id, now, tenant_id, class_id),
    )


def delete_class(conn: Connection, tenant_id: str, class_id: str) -> None:
    """The class and, by ON DELETE CASCADE, its memberships."""
    conn.execute(
        "DELETE FROM resolver.product_class WHERE tenant_id = %s AND class_id = %s", (tenant_id, class_id)
    )


def class_members(conn: Connection, tenant_id: str, class_id: str) -> list[str]:
    with conn.cursor(row_factory=scalar_row) as cur:
        return cur.execute(
            """SELECT item_id FROM resolver.product_class_member WHERE tenant_id = %s AND class_id = %s
               ORDER BY item_id""",
            (tenant_id, class_id),
        ).fetchall()


def replace_members(
    conn: Connection, tenant_id: str, catalog_id: str, class_id: str, item_ids: Sequence[str]
) -> None:
    conn.execute(
        "DELETE FROM resolver.product_class_member WHERE tenant_id = %s AND class_id = %s",
        (tenant_id, class_id),
    )
    if item_ids:
        with conn.cursor() as cur:
            cur.executemany(
                """INSERT INTO resolver.product_class_member (tenant_id, catalog_id, class_id, item_id)
                   VALUES (%s, %s, %s, %s)""",
                [(tenant_id, catalog_id, class_id, item_id) for item_id in item_ids],
            )


def references(conn: Connection, tenant_id: str, file_ids: Sequence[str]) -> set[str]:
    """The files among ``file_ids`` that a saved owner record (an item picture, a class picture) still names."""
    if not file_ids:
        return set()
    with conn.cursor(row_factory=scalar_row) as cur:
        rows: list[str] = cur.execute(
            """SELECT file_id FROM resolver.item_picture WHERE tenant_id = %(t)s AND file_id = ANY(%(ids)s)
               UNION
               SELECT picture_file_id FROM resolver.product_class
               WHERE tenant_id = %(t)s AND picture_file_id = ANY(%(ids)s)""",
            {"t": tenant_id, "ids": list(file_ids)},
        ).fetchall()
    return set(rows)


# -- The accepted-change aggregates of the owner records. ---------------------------------------------------------
#: ``item_pictures`` (aggregate id: the item id) and ``product_class``: every save bumps its aggregate's revision
#: under the stream cursor lock, in the record transaction (AW-01), and appends the event at that revision.


@dataclass(frozen=True, slots=True)
class FileAggregate:
    aggregate_type: str
    aggregate_id: str
    catalog_id: str
    revision: int
    deleted: bool


def aggregate_revision(conn: Connection, tenant_id: str, aggregate_type: str, aggregate_id: str) -> int:
    """The aggregate's current revision (0: never saved). The caller holds the stream cursor lock."""
    with conn.cursor(row_factory=scalar_row) as cur:
        found: int | None = cur.execute(
            """SELECT revision FROM resolver.catalog_file_aggregate
               WHERE tenant_id = %s AND aggregate_type = %s AND aggregate_id = %s""",
            (tenant_id, aggregate_type, aggregate_id),
        ).fetchone()
    return found or 0


def write_aggregate(
    conn: Connection,
    tenant_id: str,
    aggregate: FileAggregate,
    decision_id: str,
    now: datetime,
) -> None:
    conn.execute(
        """INSERT INTO resolver.catalog_file_aggregate (tenant_id, catalog_id, aggregate_type, aggregate_id,
               revision, deleted, decision_id, updated_at)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, aggregate_type, aggregate_id) DO UPDATE
              SET revision = excluded.revision, deleted = excluded.deleted, decision_id = excluded.decision_id,
                  updated_at = excluded.updated_at""",
        (
            tenant_id,
            aggregate.catalog_id,
            aggregate.aggregate_type,
            aggregate.aggregate_id,
            aggregate.revision,
            aggregate.deleted,
            decision_id,
            now,
        ),
    )


def catalog_aggregates(conn: Connection, tenant_id: str, catalog_id: str) -> list[FileAggregate]:
    with conn.cursor(row_factory=class_row(FileAggregate)) as cur:
        return cur.execute(
            """SELECT aggregate_type, aggregate_id, catalog_id, revision, deleted
               FROM resolver.catalog_file_aggregate WHERE tenant_id = %s AND catalog_id = %s
               ORDER BY aggregate_type, aggregate_id""",
            (tenant_id, catalog_id),
        ).fetchall()

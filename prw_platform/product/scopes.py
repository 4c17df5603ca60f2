"""Which (tenant, catalog) streams the product service projects, and their current history epoch.

A delivery for a pair that is not projected goes to the DLQ; one stamped with an epoch other than the control
plane's current one (``prw_platform.epochs``) is terminally ignored, never relabeled (if_accepted_change). This
module owns ``product.projected_scope``.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg.rows import class_row, scalar_row

from prw_platform.db.database import Connection, Database

# Each query selects exactly the fields of ProjectedScope (class_row).
_FIND_SCOPE = """SELECT tenant_id, catalog_id, history_epoch, serving_generation FROM product.projected_scope
                 WHERE tenant_id = %s AND catalog_id = %s"""
_FIND_SCOPE_FOR_SHARE = _FIND_SCOPE + " FOR SHARE"
_FIND_SCOPE_FOR_UPDATE = _FIND_SCOPE + " FOR UPDATE"
#: The serving generation of the scope ``%(tenant)s`` / ``%(catalog)s`` as a scalar subquery, for a public read
#: that answers in one statement (``public_store``): this module still owns the table and the SQL that reads it.
#: A paused scope (a history epoch being fenced, ``move_to_epoch``) has none: the public API serves it as not
#: projected here (no release, no items) until the rebuild from restored state cut over, never abandoned history.
SERVING_GENERATION_SUBQUERY = """(SELECT serving_generation FROM product.projected_scope
                                   WHERE tenant_id = %(tenant)s AND catalog_id = %(catalog)s
                                     AND paused_at IS NULL)"""


@dataclass(frozen=True, slots=True)
class ProjectedScope:
    tenant_id: str
    catalog_id: str
    history_epoch: str
    #: The projection generation the public API serves and live application writes.
    serving_generation: int


def project_catalog(db: Database, tenant_id: str, catalog_id: str, history_epoch: str) -> ProjectedScope:
    """Start projecting a catalog, or move it to a new history epoch (after a restore fenced the old one)."""

    def work(conn: Connection) -> ProjectedScope:
        scope = (
            conn.cursor(row_factory=class_row(ProjectedScope))
            .execute(
                """INSERT INTO product.projected_scope (tenant_id, catalog_id, history_epoch)
                   VALUES (%s, %s, %s)
                   ON CONFLICT (tenant_id, catalog_id) DO UPDATE SET history_epoch = excluded.history_epoch
                   RETURNING tenant_id, catalog_id, history_epoch, serving_generation""",
                (tenant_id, catalog_id, history_epoch),
            )
            .fetchone()
        )
        assert scope is not None
        return scope

    return db.run(work, tenant_id=tenant_id)


def find_scope(
    conn: Connection, tenant_id: str, catalog_id: str, *, lock: bool = False
) -> ProjectedScope | None:
    """The scope row; ``lock`` takes it FOR SHARE so a concurrent epoch switch waits for this transaction."""
    query = _FIND_SCOPE_FOR_SHARE if lock else _FIND_SCOPE
    return (
        conn.cursor(row_factory=class_row(ProjectedScope)).execute(query, (tenant_id, catalog_id)).fetchone()
    )


def tenant_scopes(conn: Connection, tenant_id: str) -> list[ProjectedScope]:
    """The tenant's projected scopes, by catalog, in the caller's transaction."""
    return (
        conn.cursor(row_factory=class_row(ProjectedScope))
        .execute(
            """SELECT tenant_id, catalog_id, history_epoch, serving_generation FROM product.projected_scope
               WHERE tenant_id = %s ORDER BY catalog_id""",
            (tenant_id,),
        )
        .fetchall()
    )


def list_scopes(db: Database, tenant_id: str) -> list[ProjectedScope]:
    return db.run(lambda conn: tenant_scopes(conn, tenant_id), tenant_id=tenant_id, read_only=True)


def lock_for_cutover(conn: Connection, tenant_id: str, catalog_id: str) -> ProjectedScope | None:
    """The scope row FOR UPDATE: the live applier (which takes it FOR SHARE first) waits until the caller's
    transaction ends. This is how a rebuild pauses the live applier for its cutover (if_projection_bootstrap:
    "Pause the local applier, atomically swap the serving generation and durable consumer cursor")."""
    return (
        conn.cursor(row_factory=class_row(ProjectedScope))
        .execute(_FIND_SCOPE_FOR_UPDATE, (tenant_id, catalog_id))
        .fetchone()
    )


def swap_generation(conn: Connection, scope: ProjectedScope, generation: int) -> None:
    """Serve ``generation`` from now on, in the caller's (cutover) transaction, holding ``lock_for_cutover``. A
    public read is one statement that reads the serving generation once, so it sees one generation or the other."""
    conn.execute(
        """UPDATE product.projected_scope SET serving_generation = %s
           WHERE tenant_id = %s AND catalog_id = %s""",
        (generation, scope.tenant_id, scope.catalog_id),
    )


def move_to_epoch(conn: Connection, tenant_id: str, catalog_id: str, history_epoch: str, reason: str) -> None:
    """Fence restored history on the product side: the scope moves to the NEW epoch (deliveries of every other
    epoch are audited and terminally ignored from now on) and is paused (public serving answers 503) until a
    rebuild from restored state cut over (``resume``)."""
    conn.execute(
        """UPDATE product.projected_scope SET history_epoch = %s, paused_at = now(), paused_reason = %s
           WHERE tenant_id = %s AND catalog_id = %s""",
        (history_epoch, reason, tenant_id, catalog_id),
    )


def resume(conn: Connection, tenant_id: str, catalog_id: str) -> None:
    conn.execute(
        """UPDATE product.projected_scope SET paused_at = NULL, paused_reason = NULL
           WHERE tenant_id = %s AND catalog_id = %s""",
        (tenant_id, catalog_id),
    )


def paused_reason(conn: Connection, tenant_id: str, catalog_id: str) -> str | None:
    """Why public serving of the scope is paused (a history epoch being fenced), or None."""
    reason: str | None = (
        conn.cursor(row_factory=scalar_row)
        .execute(
            "SELECT paused_reason FROM product.projected_scope WHERE tenant_id = %s AND catalog_id = %s",
            (tenant_id, catalog_id),
        )
        .fetchone()
    )
    return reason

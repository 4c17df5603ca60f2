"""Provision tenants, catalogs (with their release policy) and sources, idempotently, and open the catalog's
accepted-change stream at the CURRENT history epoch of the control plane (``prw_platform.epochs``).

Provisioning is safe to repeat: an existing tenant is kept, an existing catalog takes the given name and release
policy, an existing source the given name and base URL. A source belongs to one catalog for good (its listings
are that catalog's listings), so provisioning it under another catalog is refused.

Opening the stream at a new epoch (after a restore) fences the cursors of older epochs, so writers still holding
an old epoch fail with HISTORY_EPOCH_FENCED instead of committing into abandoned history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from psycopg.rows import class_row, scalar_row

from prw_platform.clock import Clock, utc_now
from prw_platform.coded_error import CodedError
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection, Database, affected_rows
from prw_platform.epochs import current_epoch, ensure_epoch, issue_epoch
from prw_platform.resolver.stream.cursor import fence_catalog, open_cursor

ReleasePolicy = Literal["automatic", "manual"]


class SourceCatalogConflict(CodedError):
    code = "SOURCE_CATALOG_CONFLICT"


class StreamNotProvisioned(CodedError):
    """The control plane has no current history epoch for the catalog: provision it first (503 UNAVAILABLE)."""

    code = "STREAM_NOT_PROVISIONED"
    status = 503
    http_code = "UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class SourceSpec:
    source_id: str
    name: str
    base_url: str | None = None


@dataclass(frozen=True, slots=True)
class CatalogSpec:
    tenant_id: str
    catalog_id: str
    name: str
    #: "automatic" releases every decision that changes public state; "manual" waits for an operator.
    release_policy: ReleasePolicy = "manual"
    sources: tuple[SourceSpec, ...] = ()
    tenant_name: str | None = None


@dataclass(frozen=True, slots=True)
class ProvisionedCatalog:
    stream: StreamKey
    release_policy: ReleasePolicy
    sources: tuple[str, ...]
    #: True when this call opened the stream cursor (a new catalog, or a new history epoch).
    stream_opened: bool


def provision_catalog(
    resolver: Database, control: Database, spec: CatalogSpec, *, clock: Clock = utc_now
) -> ProvisionedCatalog:
    """Create or update the tenant, catalog and sources, and open the stream at the current epoch."""
    epoch = ensure_epoch(control, spec.tenant_id, spec.catalog_id)
    stream = StreamKey(spec.tenant_id, spec.catalog_id, epoch.epoch_id)

    def work(conn: Connection) -> bool:
        conn.execute(
            "INSERT INTO resolver.tenant (tenant_id, name) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (spec.tenant_id, spec.tenant_name or spec.tenant_id),
        )
        conn.execute(
            """INSERT INTO resolver.catalog (tenant_id, catalog_id, name, release_policy) VALUES (%s, %s, %s, %s)
               ON CONFLICT (tenant_id, catalog_id)
               DO UPDATE SET name = excluded.name, release_policy = excluded.release_policy""",
            (spec.tenant_id, spec.catalog_id, spec.name, spec.release_policy),
        )
        for source in spec.sources:
            _provision_source(conn, spec, source)
        now = clock()
        opened = open_cursor(conn, stream, now)
        # AW-03 "Prune": the stream's retention row and the product's live consumer, from the first event on.
        # (Imported here: retention's errors live in the intake package, which imports this module.)
        from prw_platform.resolver.stream import retention

        retention.open_stream(conn, stream, now)
        return opened

    opened = resolver.run(work, tenant_id=spec.tenant_id)
    return ProvisionedCatalog(stream, spec.release_policy, tuple(s.source_id for s in spec.sources), opened)


def fence_restored_stream(
    resolver: Database,
    control: Database,
    tenant_id: str,
    catalog_id: str,
    reason: str,
    *,
    clock: Clock = utc_now,
) -> tuple[list[str], StreamKey]:
    """if_projection_bootstrap "Fence restored history", the resolver's part: fence every cursor of the catalog
    in this (restored) database first (old writers stop: HISTORY_EPOCH_FENCED), then issue a NEW epoch in the
    control plane, which lives outside the restored database, then open the new epoch's cursor at position 0 with
    its retention row and live consumer (writers resume on the new epoch). Old events are abandoned, never
    relabeled: the outbox keeps them under their own epoch. Returns the fenced epochs and the new stream."""
    # (Imported here: retention's errors live in the intake package, which imports this module.)
    from prw_platform.resolver.stream import retention

    fenced = resolver.run(
        lambda conn: fence_catalog(conn, tenant_id, catalog_id, clock()), tenant_id=tenant_id
    )
    epoch = issue_epoch(control, tenant_id, catalog_id, reason)
    stream = StreamKey(tenant_id, catalog_id, epoch.epoch_id)

    def open_new(conn: Connection) -> None:
        now = clock()
        open_cursor(conn, stream, now)
        retention.open_stream(conn, stream, now)

    resolver.run(open_new, tenant_id=tenant_id)
    return fenced, stream


def _provision_source(conn: Connection, spec: CatalogSpec, source: SourceSpec) -> None:
    existing = conn.execute(
        "SELECT catalog_id FROM resolver.source WHERE tenant_id = %s AND source_id = %s FOR UPDATE",
        (spec.tenant_id, source.source_id),
    ).fetchone()
    if existing is not None and existing["catalog_id"] != spec.catalog_id:
        raise SourceCatalogConflict(
            f"source {source.source_id} belongs to catalog {existing['catalog_id']}, not {spec.catalog_id}"
        )
    conn.execute(
        """INSERT INTO resolver.source (tenant_id, source_id, catalog_id, name, base_url) VALUES (%s, %s, %s, %s, %s)
           ON CONFLICT (tenant_id, source_id) DO UPDATE SET name = excluded.name, base_url = excluded.base_url""",
        (spec.tenant_id, source.source_id, spec.catalog_id, source.name, source.base_url),
    )


def set_release_policy(resolver: Database, tenant_id: str, catalog_id: str, policy: ReleasePolicy) -> None:
    """Provisioning's switch (no decision recorded); an operator's goes through ``DecisionService``."""
    resolver.run(lambda conn: write_release_policy(conn, tenant_id, catalog_id, policy), tenant_id=tenant_id)


def write_release_policy(conn: Connection, tenant_id: str, catalog_id: str, policy: ReleasePolicy) -> None:
    updated = affected_rows(
        conn,
        "UPDATE resolver.catalog SET release_policy = %s WHERE tenant_id = %s AND catalog_id = %s",
        (policy, tenant_id, catalog_id),
    )
    if updated != 1:
        raise LookupError(f"no catalog {catalog_id} for tenant {tenant_id}")


def source_catalog(conn: Connection, tenant_id: str, source_id: str) -> str | None:
    """The catalog a source of the tenant belongs to, or None when the tenant has no such source."""
    return send_source_catalog(conn, tenant_id, source_id)()


def send_source_catalog(conn: Connection, tenant_id: str, source_id: str) -> Callable[[], str | None]:
    """``source_catalog`` in two steps: the query is sent now and read when the returned function is called (in
    pipeline mode, together with every statement sent in between)."""
    cur = conn.cursor(row_factory=scalar_row)
    cur.execute(
        "SELECT catalog_id FROM resolver.source WHERE tenant_id = %s AND source_id = %s",
        (tenant_id, source_id),
    )

    def catalog() -> str | None:
        with cur:
            catalog_id: str | None = cur.fetchone()
        return catalog_id

    return catalog


def sources_in_catalog(
    conn: Connection, tenant_id: str, catalog_id: str, source_ids: Sequence[str]
) -> set[str]:
    """Which of ``source_ids`` are sources of the catalog."""
    with conn.cursor(row_factory=scalar_row) as cur:
        found: list[str] = cur.execute(
            "SELECT source_id FROM resolver.source WHERE tenant_id = %s AND catalog_id = %s AND source_id = ANY(%s)",
            (tenant_id, catalog_id, list(source_ids)),
        ).fetchall()
    return set(found)


@dataclass(frozen=True, slots=True)
class CatalogPolicy:
    catalog_id: str
    name: str
    release_policy: ReleasePolicy


def catalog_policies(conn: Connection, tenant_id: str) -> list[CatalogPolicy]:
    """The tenant's catalogs with their release policy (a CHECK constraint keeps it manual or automatic)."""
    with conn.cursor(row_factory=class_row(CatalogPolicy)) as cur:
        return cur.execute(
            """SELECT catalog_id, name, release_policy FROM resolver.catalog WHERE tenant_id = %s
               ORDER BY catalog_id""",
            (tenant_id,),
        ).fetchall()


def release_policy(conn: Connection, tenant_id: str, catalog_id: str) -> ReleasePolicy:
    return send_release_policy(conn, tenant_id, catalog_id)()


def send_release_policy(conn: Connection, tenant_id: str, catalog_id: str) -> Callable[[], ReleasePolicy]:
    """``release_policy`` in two steps: the query is sent now and read when the returned function is called (in
    pipeline mode, together with every statement sent in between)."""
    cur = conn.cursor(row_factory=scalar_row)
    cur.execute(
        "SELECT release_policy FROM resolver.catalog WHERE tenant_id = %s AND catalog_id = %s",
        (tenant_id, catalog_id),
    )

    def policy() -> ReleasePolicy:
        with cur:
            found: str | None = cur.fetchone()
        if found is None:
            raise LookupError(f"no catalog {catalog_id}")
        if found not in ("automatic", "manual"):
            raise ValueError(f"catalog {catalog_id} has an unknown release policy {found!r}")
        return "automatic" if found == "automatic" else "manual"

    return policy


def current_stream(control: Database, tenant_id: str, catalog_id: str) -> StreamKey:
    """The stream decisions write to now: the catalog at the control plane's current history epoch."""
    epoch = current_epoch(control, tenant_id, catalog_id)
    if epoch is None:
        raise StreamNotProvisioned(f"no history epoch for {tenant_id}/{catalog_id}")
    return StreamKey(tenant_id, catalog_id, epoch.epoch_id)

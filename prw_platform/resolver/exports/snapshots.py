"""Snapshot exports (if_projection_bootstrap): ``POST /v1/exports/snapshots``,
``GET /v1/exports/snapshots/{id}`` and the ``exports`` stage that builds them.

``SnapshotExports.run_export`` pins retention with a rebuild lease committed before the snapshot opens, reads
the committed cursor W and all accepted state in one REPEATABLE READ READ ONLY snapshot (positions commit in
cursor order, AW-01, so that state is exactly the state after W), advances the pin to W, writes one
checksummed object per aggregate type, and marks the manifest ready only after a valid lease check, aborting
if the epoch changed. A failed export, or a ready one whose lease expired, answers 410 EXPORT_EXPIRED. Object
links are signed tokens scoped to one export and one object (``ExportLinks``). The steps for operators:
docs/operators/exports.md.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeVar

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import EXPORTS_READ
from prw_platform.auth.signed import TokenSigner
from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import MappingPayload, ProductClassDeletedPayload, StreamKey
from prw_platform.db.database import REPEATABLE_READ, Connection, Database
from prw_platform.db.errors import DatabaseUnavailable
from prw_platform.resolver.decisions import facts, releases
from prw_platform.resolver.decisions import merchants as merchant_facts
from prw_platform.resolver.files import published as file_facts
from prw_platform.resolver.files import records as file_records
from prw_platform.resolver.intake.errors import (
    IdempotencyConflict,
    NotFound,
    TenantScopeDenied,
    ValidationFailed,
)
from prw_platform.resolver.stream import retention
from prw_platform.resolver.stream.cursor import open_stream_position
from prw_platform.resolver.stream.retention import ExportExpired, RetentionPolicy, RetentionUnavailable
from prw_platform.storage import ObjectStore
from prw_platform.storage.keys import ObjectKey
from prw_platform.storage.port import sha256_hex

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The aggregate types an export can carry, one object each (seed example: catalog_item, listing_mapping,
#: merchant, shipping_policy ...); ``inventory_history`` holds every accepted observation of each listing (its
#: inventory at each revision, migration 0021), ``release`` the current public release's revisions.
AGGREGATES: Final = (
    "catalog_item",
    "listing",
    "listing_mapping",
    "merchant",
    "merchant_source",
    "shipping_policy",
    "item_pictures",
    "product_class",
    "inventory_history",
    "release",
)
MEDIA_TYPE: Final = "application/x-ndjson"
#: How long an object link lives (if_projection_bootstrap Retries: "An expired signed URL is fixed by re-GETting
#: the manifest").
LINK_TTL: Final = timedelta(minutes=15)
_PURPOSE: Final = "prw export object v1"


class ExportLinkInvalid(NotFound):
    """A forged, altered or foreign object token, or an object of another export: 404, nothing revealed."""


@dataclass(frozen=True, slots=True)
class ExportSnapshot:
    export_id: str
    tenant_id: str
    catalog_id: str
    idempotency_key: str
    aggregates: list[str]
    status: str
    history_epoch: str | None
    lease_id: str | None
    position: int | None
    manifest: dict[str, Any] | None
    error_code: str | None
    error: str | None
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """What ``POST`` returns: the export and whether this call created it (201/202 vs. a replay)."""

    snapshot: ExportSnapshot
    created: bool


@dataclass(frozen=True, slots=True)
class ObjectLink:
    aggregate: str
    sha256: str
    size: int
    count: int
    token: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class ExportView:
    """A pending or ready export for its principal: the stored export plus, when ready, fresh object links."""

    snapshot: ExportSnapshot
    links: tuple[ObjectLink, ...] = ()


@dataclass(frozen=True, slots=True)
class ExportObject:
    aggregate: str
    sha256: str
    data: bytes


_COLUMNS: Final = """export_id, tenant_id, catalog_id, idempotency_key, aggregates, status, history_epoch, lease_id,
    position, manifest, error_code, error, created_at, finished_at"""


def _get(conn: Connection, export_id: str) -> ExportSnapshot | None:
    with conn.cursor(row_factory=class_row(ExportSnapshot)) as cur:
        return cur.execute(
            """SELECT export_id, tenant_id, catalog_id, idempotency_key, aggregates, status, history_epoch,
                   lease_id, position, manifest, error_code, error, created_at, finished_at
               FROM resolver.export_snapshot WHERE export_id = %s""",
            (export_id,),
        ).fetchone()


def _by_key(conn: Connection, tenant_id: str, catalog_id: str, key: str) -> ExportSnapshot | None:
    with conn.cursor(row_factory=class_row(ExportSnapshot)) as cur:
        return cur.execute(
            """SELECT export_id, tenant_id, catalog_id, idempotency_key, aggregates, status, history_epoch,
                   lease_id, position, manifest, error_code, error, created_at, finished_at
               FROM resolver.export_snapshot WHERE tenant_id = %s AND catalog_id = %s AND idempotency_key = %s""",
            (tenant_id, catalog_id, key),
        ).fetchone()


@dataclass(frozen=True, slots=True)
class _Pending:
    export_id: str
    tenant_id: str


def pending_exports(conn: Connection, limit: int) -> list[tuple[str, str]]:
    """(export_id, tenant_id) of the oldest pending exports of every tenant (``resolver_pruner``'s view)."""
    with conn.cursor(row_factory=class_row(_Pending)) as cur:
        rows = cur.execute(
            """SELECT export_id, tenant_id FROM resolver.export_snapshot WHERE status = 'pending'
               ORDER BY created_at, export_id LIMIT %s""",
            (limit,),
        ).fetchall()
    return [(r.export_id, r.tenant_id) for r in rows]


@dataclass(frozen=True, slots=True)
class _State:
    """Everything one snapshot read: the epoch, W and the accepted state as JSON Lines per aggregate type."""

    history_epoch: str
    position: int
    objects: dict[str, list[dict[str, Any]]]


def read_snapshot(conn: Connection, tenant_id: str, catalog_id: str, aggregates: list[str]) -> _State | None:
    """if_projection_bootstrap "Read one snapshot", in the caller's REPEATABLE READ READ ONLY transaction."""
    opened = open_stream_position(conn, tenant_id, catalog_id)
    if opened is None:
        return None
    epoch, position = opened
    objects: dict[str, list[dict[str, Any]]] = {}

    def entry(kind: str, aggregate_id: str, revision: int, payload: Any) -> dict[str, Any]:
        return {
            "aggregate": {"type": kind, "id": aggregate_id, "revision": revision},
            "payload": payload.model_dump(mode="json", by_alias=True),
        }

    wanted = set(aggregates)
    if "catalog_item" in wanted:
        items = [
            *facts.items_with_status(conn, tenant_id, catalog_id, facts.ACTIVE),
            *facts.items_with_status(conn, tenant_id, catalog_id, facts.RETIRED),
        ]
        objects["catalog_item"] = [
            entry("catalog_item", i.item_id, i.revision, i.payload())
            for i in sorted(items, key=lambda i: i.item_id)
        ]
    if wanted & {"listing", "listing_mapping"}:
        mapped = facts.mapped_listings(conn, tenant_id, catalog_id)
        if "listing" in wanted:
            objects["listing"] = [
                entry("listing", lst.listing_id, lst.revision, lst.payload()) for lst, _ in mapped
            ]
        if "listing_mapping" in wanted:
            objects["listing_mapping"] = [
                entry(
                    "listing_mapping",
                    m.listing_id,
                    m.revision,
                    MappingPayload(listing=m.listing_id, previous_item=None, item=m.item_id),
                )
                for _, m in mapped
            ]
    if "merchant" in wanted:
        objects["merchant"] = [
            entry("merchant", m.merchant_id, m.revision, m.payload())
            for m in merchant_facts.catalog_merchants(conn, tenant_id, catalog_id)
        ]
    if "merchant_source" in wanted:
        objects["merchant_source"] = [
            entry("merchant_source", b.source_id, b.revision, b.payload())
            for b in merchant_facts.catalog_bindings(conn, tenant_id, catalog_id)
        ]
    if "shipping_policy" in wanted:
        objects["shipping_policy"] = [
            entry("shipping_policy", p.merchant_id, p.revision, p.payload())
            for p in merchant_facts.catalog_policies(conn, tenant_id, catalog_id)
        ]
    for kind in ("item_pictures", "product_class"):
        if kind in wanted:
            # Seed 004: each item's pictures and each class at its current revision; a deleted class as its
            # deletion (its revision still counts: a class created again continues from it).
            objects[kind] = [
                entry(
                    kind,
                    fact.aggregate_id,
                    fact.revision,
                    fact.payload or ProductClassDeletedPayload(class_id=fact.aggregate_id),
                )
                for aggregate in file_records.catalog_aggregates(conn, tenant_id, catalog_id)
                if aggregate.aggregate_type == kind
                for fact in (file_facts.current_fact(conn, tenant_id, aggregate),)
            ]
    if "inventory_history" in wanted:
        objects["inventory_history"] = [
            observation.export_line() for observation in facts.inventory_history(conn, tenant_id, catalog_id)
        ]
    if "release" in wanted:
        objects["release"] = [releases.released_revisions(conn, tenant_id, catalog_id)]
    return _State(epoch, position, objects)


class ExportLinks:
    """Signed object links scoped to one export and one object (if_projection_bootstrap Authorization: "Signed
    object URLs are scoped to one export")."""

    def __init__(self, store: ObjectStore, bucket: str, secret: bytes, *, clock: Clock = utc_now) -> None:
        self._store = store
        self._bucket = bucket
        self._signer = TokenSigner(secret, _PURPOSE)
        self._clock = clock

    def issue(self, snapshot: ExportSnapshot) -> tuple[ObjectLink, ...]:
        assert snapshot.manifest is not None
        expires_at = (self._clock() + LINK_TTL).replace(microsecond=0)
        links = []
        for obj in snapshot.manifest["objects"]:
            token = self._signer.sign(
                {
                    "t": snapshot.tenant_id,
                    "e": snapshot.export_id,
                    "g": obj["aggregate"],
                    "s": obj["sha256"],
                    "x": int(expires_at.timestamp()),
                }
            )
            links.append(
                ObjectLink(obj["aggregate"], obj["sha256"], obj["size"], obj["count"], token, expires_at)
            )
        return tuple(links)

    def open(self, export_id: str, aggregate: str, token: str) -> ExportObject:
        claims = self._signer.verify(token)
        if (
            not isinstance(claims, dict)
            or claims.get("e") != export_id
            or claims.get("g") != aggregate
            or not isinstance(claims.get("t"), str)
            or not isinstance(claims.get("s"), str)
        ):
            raise ExportLinkInvalid("no such export object")
        if not isinstance(claims.get("x"), int) or self._clock() >= datetime.fromtimestamp(claims["x"], UTC):
            raise ExportExpired("the object link expired: GET the manifest again for fresh links")
        stored = self._store.get(ObjectKey(self._bucket, claims["t"], claims["s"]), verify=True)
        return ExportObject(aggregate, stored.sha256, stored.data)


@dataclass
class SnapshotExports:
    """POST/GET of snapshot exports for the product principal (``resolver_app``, tenant-scoped by RLS) and the
    export job (``run_batch``: pending exports found through ``claims``, the pruner's cross-tenant role)."""

    db: Database
    claims: Database
    store: ObjectStore
    bucket: str
    links: ExportLinks
    #: The control plane's current epoch of a catalog (abort on an epoch change).
    current_epoch: Callable[[str, str], str]
    policy: RetentionPolicy = field(default_factory=RetentionPolicy)
    clock: Clock = utc_now

    # -- The API. ---------------------------------------------------------------------------------------------
    def request(
        self,
        principal: CollectorPrincipal,
        idempotency_key: str,
        aggregates: list[str] | None = None,
        *,
        tenant_id: str | None = None,
        catalog_id: str | None = None,
    ) -> ExportRequest:
        principal.require_scope(EXPORTS_READ)
        if (tenant_id is not None and tenant_id != principal.tenant_id) or (
            catalog_id is not None and catalog_id != principal.catalog_id
        ):
            raise TenantScopeDenied(
                f"this client may export {principal.tenant_id}/{principal.catalog_id} only"
            )
        return self.request_for(principal.tenant_id, principal.catalog_id, idempotency_key, aggregates)

    def request_for(
        self, tenant_id: str, catalog_id: str, idempotency_key: str, aggregates: list[str] | None = None
    ) -> ExportRequest:
        """Request an export of one catalog (the API after its scope checks; ``prw export snapshot`` as an
        operator). Idempotent per (tenant, catalog, Idempotency-Key); refused requests persist nothing."""
        wanted = aggregates if aggregates else list(AGGREGATES)
        unknown = sorted(set(wanted) - set(AGGREGATES))
        if unknown or len(set(wanted)) != len(wanted):
            raise ValidationFailed(f"aggregates must be distinct names of {', '.join(AGGREGATES)}: {unknown}")
        if not 1 <= len(idempotency_key) <= 200:
            raise ValidationFailed("an Idempotency-Key of 1 to 200 characters is required")
        now = self.clock()

        def work(conn: Connection) -> ExportRequest:
            created = conn.execute(
                """INSERT INTO resolver.export_snapshot (export_id, tenant_id, catalog_id, idempotency_key, aggregates,
                       status, created_at)
                   VALUES (%s, %s, %s, %s, %s, 'pending', %s)
                   ON CONFLICT (tenant_id, catalog_id, idempotency_key) DO NOTHING""",
                (f"exp_{secrets.token_hex(12)}", tenant_id, catalog_id, idempotency_key, wanted, now),
            ).rowcount
            snapshot = _by_key(conn, tenant_id, catalog_id, idempotency_key)
            assert snapshot is not None
            if sorted(snapshot.aggregates) != sorted(wanted):
                raise IdempotencyConflict("this Idempotency-Key was used for another export request")
            return ExportRequest(snapshot, created == 1)

        return self._run(work, tenant_id)

    def get(self, principal: CollectorPrincipal, export_id: str) -> ExportView:
        """The export: pending, or ready with fresh signed links. 410 EXPORT_EXPIRED for a failed export or one
        whose lease expired since (the retained tail after W is no longer guaranteed: request a new export)."""
        principal.require_scope(EXPORTS_READ)
        now = self.clock()

        def work(conn: Connection) -> ExportSnapshot:
            snapshot = _get(conn, export_id)
            if snapshot is None or snapshot.catalog_id != principal.catalog_id:
                raise NotFound(f"no export {export_id}")
            if snapshot.status == "failed":
                raise ExportExpired(
                    f"export {export_id} failed ({snapshot.error_code}); request a new export"
                )
            if snapshot.status == "ready":
                assert snapshot.lease_id is not None
                assert snapshot.history_epoch is not None
                stream = StreamKey(snapshot.tenant_id, snapshot.catalog_id, snapshot.history_epoch)
                retention.check_lease(conn, snapshot.lease_id, stream, now)
            return snapshot

        snapshot = self._run(work, principal.tenant_id, read_only=True)
        if snapshot.status != "ready":
            return ExportView(snapshot)
        return ExportView(snapshot, self.links.issue(snapshot))

    def release(self, principal: CollectorPrincipal, export_id: str) -> bool:
        """Release the export's lease once the rebuild cut over (if_projection_bootstrap: "atomically swap the
        serving generation and durable consumer cursor, resume after H, then release the lease"). Releasing a
        released or expired lease is a no-op (False): the rebuild's retry after a lost answer is safe."""
        principal.require_scope(EXPORTS_READ)
        now = self.clock()

        def work(conn: Connection) -> bool:
            snapshot = _get(conn, export_id)
            if snapshot is None or snapshot.catalog_id != principal.catalog_id:
                raise NotFound(f"no export {export_id}")
            if snapshot.lease_id is None:
                return False
            return retention.release_lease(conn, snapshot.lease_id, now)

        return self._run(work, principal.tenant_id)

    def open_object(self, export_id: str, aggregate: str, token: str) -> ExportObject:
        return self.links.open(export_id, aggregate, token)

    def renew(self, principal: CollectorPrincipal, export_id: str) -> retention.Lease:
        """Renew the export's lease (if_projection_bootstrap "Renew the lease throughout export/load/catch-up")."""
        view = self.get(principal, export_id)
        if view.snapshot.lease_id is None:
            raise ValidationFailed(f"export {export_id} has no lease yet")
        lease_id = view.snapshot.lease_id
        now = self.clock()
        return self._run(
            lambda conn: retention.renew_lease(conn, lease_id, self.policy.lease_ttl, now),
            principal.tenant_id,
        )

    def _run(self, work: Callable[[Connection], T], tenant_id: str, *, read_only: bool = False) -> T:
        try:
            return self.db.run(work, tenant_id=tenant_id, read_only=read_only)
        except DatabaseUnavailable as exc:
            raise RetentionUnavailable("the export service is unavailable; retry later") from exc

    # -- The export job (the ``exports`` stage). --------------------------------------------------------------
    def has_work(self) -> bool:
        return bool(self.claims.run(lambda conn: pending_exports(conn, 1), read_only=True))

    def run_batch(self, max_exports: int) -> list[ExportSnapshot]:
        pending = self.claims.run(lambda conn: pending_exports(conn, max_exports), read_only=True)
        return [self.run_export(tenant_id, export_id) for export_id, tenant_id in pending]

    def run_export(self, tenant_id: str, export_id: str) -> ExportSnapshot:
        """Build one pending export, the seed's steps in order (module docstring)."""
        snapshot = self.db.run(lambda conn: _get(conn, export_id), tenant_id=tenant_id, read_only=True)
        if snapshot is None or snapshot.status != "pending":
            raise NotFound(f"no pending export {export_id}")
        catalog_id = snapshot.catalog_id
        opened = self.db.run(
            lambda conn: open_stream_position(conn, tenant_id, catalog_id),
            tenant_id=tenant_id,
            read_only=True,
        )
        if opened is None:
            return self._fail(snapshot, None, "NO_STREAM", f"catalog {catalog_id} has no open stream")
        stream = StreamKey(tenant_id, catalog_id, opened[0])
        # 1. Pin retention: a lease pinned after P, committed before the snapshot opens.
        lease = self.db.run(
            lambda conn: self._start(conn, export_id, stream, self.clock()), tenant_id=tenant_id
        )
        # 2. One REPEATABLE READ READ ONLY snapshot: epoch, W and all accepted state.
        state = self.db.run(
            lambda conn: read_snapshot(conn, tenant_id, catalog_id, snapshot.aggregates),
            tenant_id=tenant_id,
            isolation=REPEATABLE_READ,
            read_only=True,
        )
        # Abort on an epoch change: the stream was fenced, or the control plane issued a new epoch (a restore is
        # being fenced, if_projection_bootstrap "Fence restored history").
        if (
            state is None
            or state.history_epoch != stream.history_epoch
            or self.current_epoch(tenant_id, catalog_id) != state.history_epoch
        ):
            return self._fail(
                snapshot, lease.lease_id, "EPOCH_CHANGED", "the history epoch changed before the snapshot"
            )
        # 3. Publish: advance the pin from P to W, write the objects, then check lease and epoch, then ready.
        try:
            self.db.run(
                lambda conn: retention.advance_lease(conn, lease.lease_id, state.position, self.clock()),
                tenant_id=tenant_id,
            )
        except ExportExpired as expired:
            return self._fail(snapshot, lease.lease_id, "LEASE_EXPIRED", str(expired))
        objects = [
            self._write(tenant_id, aggregate, state.objects[aggregate]) for aggregate in snapshot.aggregates
        ]
        if self.current_epoch(tenant_id, catalog_id) != state.history_epoch:
            return self._fail(
                snapshot, lease.lease_id, "EPOCH_CHANGED", "the history epoch changed during the export"
            )
        manifest = {
            "export_id": export_id,
            "tenant_id": tenant_id,
            "catalog_id": catalog_id,
            "history_epoch": state.history_epoch,
            "position": state.position,
            "lease_id": lease.lease_id,
            "objects": objects,
        }

        def ready(conn: Connection) -> ExportSnapshot | None:
            now = self.clock()
            try:
                retention.check_lease(conn, lease.lease_id, stream, now)
            except ExportExpired:
                return None
            conn.execute(
                """UPDATE resolver.export_snapshot SET status = 'ready', history_epoch = %s, position = %s,
                       manifest = %s, finished_at = %s
                   WHERE export_id = %s AND status = 'pending'""",
                (state.history_epoch, state.position, Jsonb(manifest), now, export_id),
            )
            return _get(conn, export_id)

        done = self.db.run(ready, tenant_id=tenant_id)
        if done is None:
            return self._fail(
                snapshot, lease.lease_id, "LEASE_EXPIRED", "the lease expired before the export was ready"
            )
        log.info(
            "export %s ready at %s position %d (%d objects)",
            export_id,
            state.history_epoch,
            state.position,
            len(objects),
        )
        return done

    def _start(self, conn: Connection, export_id: str, stream: StreamKey, now: datetime) -> retention.Lease:
        lease = retention.create_lease(conn, stream, f"export {export_id}", self.policy.lease_ttl, now)
        conn.execute(
            "UPDATE resolver.export_snapshot SET lease_id = %s, history_epoch = %s WHERE export_id = %s",
            (lease.lease_id, stream.history_epoch, export_id),
        )
        return lease

    def _write(self, tenant_id: str, aggregate: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
        data = "".join(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n" for row in rows).encode()
        digest = sha256_hex(data)
        self.store.put_if_absent(ObjectKey(self.bucket, tenant_id, digest), data, digest, MEDIA_TYPE)
        return {
            "aggregate": aggregate,
            "sha256": digest,
            "size": len(data),
            "count": len(rows),
            "media_type": MEDIA_TYPE,
        }

    def _fail(
        self, snapshot: ExportSnapshot, lease_id: str | None, code: str, message: str
    ) -> ExportSnapshot:
        now = self.clock()
        log.warning("export %s failed: %s (%s)", snapshot.export_id, message, code)

        def work(conn: Connection) -> ExportSnapshot:
            if lease_id is not None:
                retention.release_lease(conn, lease_id, now)
            conn.execute(
                """UPDATE resolver.export_snapshot SET status = 'failed', error_code = %s, error = %s, finished_at = %s
                   WHERE export_id = %s AND status = 'pending'""",
                (code, message, now, snapshot.export_id),
            )
            failed = _get(conn, snapshot.export_id)
            assert failed is not None
            return failed

        return self.db.run(work, tenant_id=snapshot.tenant_id)


def finished_exports(db: Database, since: datetime) -> list[ExportSnapshot]:
    """Exports that became ready or failed at or after ``since``, every tenant (``prw_operator``: the Dagster
    ``exports`` asset records each as a materialization carrying its manifest)."""

    def read(conn: Connection) -> list[ExportSnapshot]:
        with conn.cursor(row_factory=class_row(ExportSnapshot)) as cur:
            return cur.execute(
                """SELECT export_id, tenant_id, catalog_id, idempotency_key, aggregates, status, history_epoch,
                       lease_id, position, manifest, error_code, error, created_at, finished_at
                   FROM resolver.export_snapshot WHERE finished_at >= %s ORDER BY finished_at, export_id""",
                (since,),
            ).fetchall()

    return db.run(read, read_only=True)

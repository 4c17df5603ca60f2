"""Product rebuild (seed 003 if_projection_bootstrap Delivery, step by step):

1. **Request and wait**: ``POST /v1/exports/snapshots`` (an Idempotency-Key per rebuild), poll until ready.
2. **Load shadow**: into generation ``serving_generation + 1``, never served until the cutover, with the exported
   aggregate revisions and W as the starting contiguous position of the rebuild's own cursor
   (``progress.REBUILD_CONSUMER``). Every object is checked against the manifest's sha256 before it is loaded.
   The lease is renewed throughout (load and catch-up).
3. **Catch up**: choose the committed target H (the head of the retained tail, or the operator's ``target``);
   fetch ``GET /v1/exports/events?after=…&lease_id=…`` and apply every position through H into the shadow with the
   consumer's own dedupe, revision and parking rules (``apply_events(..., shadow)``). The live cursor never moves.
4. **Cut over**, one product transaction: lock the scope row FOR UPDATE (the live applier takes it FOR SHARE, so it
   pauses here); if the live cursor L went past H meanwhile, the shadow first applies (H, L] in this transaction
   (the live cursor never goes back); require the shadow's contiguous position at H and no parked event at or below
   H (``UNRESOLVED_DEPENDENCY`` otherwise: nothing is swapped); swap the serving generation and set the durable live
   cursor to H; commit. The live applier resumes after H in the new generation.
5. **Release** the lease; close the live gap after H at once (``gaps.close_gap``); the replaced generation is
   dropped later by the ``rebuild_cleanup`` stage.

A refusal of the export API (401, 403, 410, retries used up: ``RebuildRefused``), an invalid object, a target out
of range or an unresolved dependency fail the rebuild (``RebuildFailed``, recorded with its code) and swap nothing;
the lease is released and the shadow generation is left for the cleanup.

**A dead owner** (the process killed mid-load) cannot record anything: its row stays active and every later rebuild
of the stream is refused with REBUILD_RUNNING. The owner renews a heartbeat on its row with the lease
(``records.heartbeat``); once it is older than ``stale_after`` the rebuild is stale and ``abandon`` (``prw product
rebuild --abandon``, the ``product_rebuild`` job's ``abandon_stale``) marks it abandoned, releases its export
lease in the resolver and leaves its shadow generation to the cleanup; a new rebuild may start, in a generation
above every earlier rebuild's. A live rebuild (fresh heartbeat) is abandoned only with ``force``; if its owner
was alive after all, its next heartbeat or its cutover finds the row abandoned and stops with REBUILD_ABANDONED,
swapping nothing.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

import psycopg

from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection, Database
from prw_platform.product import progress
from prw_platform.product.consumer import inbox
from prw_platform.product.consumer.apply import ShadowTarget, apply_events, deliver_in
from prw_platform.product.consumer.outcomes import DeliveryResult
from prw_platform.product.errors import RejectedDelivery
from prw_platform.product.events import ProductEvent, parse_delivery
from prw_platform.product.gaps import ExportSource, close_gap
from prw_platform.product.rebuild import records
from prw_platform.product.rebuild.cleanup import (
    CLEANUP_CHUNK_ROWS,
    CleanupProgress,
    drop_finished_generations,
    drop_generation,
)
from prw_platform.product.rebuild.client import Manifest, RebuildRefused, SnapshotSource
from prw_platform.product.rebuild.load import (
    INVENTORY_HISTORY,
    LoadedState,
    SnapshotInvalid,
    load_inventory_history,
    load_object,
    load_release,
    snapshot_events,
)
from prw_platform.product.rebuild.records import RebuildRecord
from prw_platform.product.scopes import ProjectedScope, find_scope, lock_for_cutover, swap_generation

log = logging.getLogger(__name__)

#: Events per page of the retained tail (the resolver serves at most 1,000).
TAIL_PAGE: Final = 1_000

#: Reports progress: (phase, done, total or None).
ProgressCallback = Callable[[str, int, int | None], None]


class RebuildFailed(Exception):
    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class AbandonResult:
    rebuild_id: str
    tenant_id: str
    catalog_id: str
    export_id: str
    #: The shadow generation, left to the ``rebuild-cleanup`` stage.
    generation: int
    status_before: str
    heartbeat_at: datetime
    heartbeat_age_seconds: float
    #: False when the export API was not reachable: the lease then expires on its own.
    lease_released: bool


@dataclass(frozen=True, slots=True)
class RebuildResult:
    rebuild_id: str
    tenant_id: str
    catalog_id: str
    history_epoch: str
    export_id: str
    generation: int
    previous_generation: int
    #: W: where the snapshot was read; H: the live cursor after the cutover.
    start_position: int
    target_position: int
    loaded_rows: int
    caught_up: int
    seconds: float


@dataclass
class ProductRebuild:
    """The rebuild service (``prw product rebuild``, the Dagster ``product_rebuild`` job, ``prw epoch fence``)."""

    db: Database
    source_factory: Callable[[], SnapshotSource | None]
    #: The export stream for the live gap after the cutover (None: left to the ``gaps`` stage).
    gap_source_factory: Callable[[], ExportSource | None] = lambda: None
    clock: Clock = utc_now
    poll_seconds: float = 0.5
    poll_timeout_seconds: float = 600.0
    renew_every_seconds: float = 60.0
    #: A rebuild whose owner's heartbeat is older than this is stale: ``abandon`` may take it over.
    stale_after: timedelta = timedelta(minutes=10)
    cleanup_chunk_rows: int = CLEANUP_CHUNK_ROWS
    sleep: Callable[[float], None] = time.sleep
    _last_renewal: float = field(default=0.0, init=False)

    def run(
        self,
        tenant_id: str,
        catalog_id: str,
        *,
        target: int | None = None,
        on_progress: ProgressCallback | None = None,
        export_id: str | None = None,
    ) -> RebuildResult:
        """Rebuild the catalog's projection from a new snapshot export (or ``export_id``, already requested)."""
        report = on_progress or (lambda phase, done, total: None)
        source = self.source_factory()
        if source is None:
            raise RebuildFailed(
                "no export API configured (PRW_EXPORTS_URL and the product client)", code="NOT_CONFIGURED"
            )
        scope = self.db.run(lambda conn: find_scope(conn, tenant_id, catalog_id), tenant_id=tenant_id)
        if scope is None:
            raise RebuildFailed(f"{tenant_id}/{catalog_id} is not projected here", code="SCOPE_NOT_PROJECTED")
        started = time.monotonic()
        rebuild_id = f"rbd_{secrets.token_hex(10)}"
        try:
            export_id = export_id or source.request_export(tenant_id, catalog_id, f"rebuild-{rebuild_id}")
            report("export", 0, None)
            manifest = self._wait_ready(source, export_id)
        except RebuildRefused as refused:
            raise RebuildFailed(f"export refused: {refused}", code=refused.code) from refused
        if manifest.history_epoch != scope.history_epoch:
            self._release(source, export_id)
            raise RebuildFailed(
                f"the export is of epoch {manifest.history_epoch}, the product projects {scope.history_epoch}",
                code="EPOCH_MISMATCH",
            )
        try:
            record = self._start(scope, rebuild_id, manifest)
        except RebuildFailed:
            self._release(source, export_id)
            raise
        shadow = ProjectedScope(tenant_id, catalog_id, scope.history_epoch, record.generation)
        try:
            loaded = self._load(source, manifest, shadow, record, report)
            self._record(record, "catching_up", loaded_rows=loaded)
            stream = StreamKey(tenant_id, catalog_id, scope.history_epoch)
            target_position, caught_up = self._catch_up(
                source, manifest, stream, shadow, record, target, report
            )
            self._record(record, "catching_up", target_position=target_position)
            final, extra = self._cut_over(source, manifest, stream, shadow, record, target_position)
        except (RebuildRefused, SnapshotInvalid, RebuildFailed) as failure:
            code, message = failure.code, str(failure)
            if not self._record(record, "failed", error_code=code, error=message):
                # Abandoned meanwhile (its lease released, so the export API may have refused it first).
                code, message = "REBUILD_ABANDONED", f"{_abandoned(record)} (then: {code}: {message})"
            self._release(source, export_id)
            log.error("rebuild %s of %s/%s failed: %s (%s)", rebuild_id, tenant_id, catalog_id, message, code)
            raise RebuildFailed(message, code=code) from failure
        report("cutover", final, final)
        self._release(source, export_id)
        gap_source = self.gap_source_factory()
        if gap_source is not None:
            # "resume after H": what the live applier applied after H to the replaced generation comes back from
            # the retained tail now, not at the gap closer's next head check.
            close_gap(self.db, gap_source, stream)
        return RebuildResult(
            rebuild_id=rebuild_id,
            tenant_id=tenant_id,
            catalog_id=catalog_id,
            history_epoch=scope.history_epoch,
            export_id=export_id,
            generation=record.generation,
            previous_generation=record.previous_generation,
            start_position=manifest.position,
            target_position=final,
            loaded_rows=loaded,
            caught_up=caught_up + extra,
            seconds=time.monotonic() - started,
        )

    # -- the steps -----------------------------------------------------------------------------------------------
    def _wait_ready(self, source: SnapshotSource, export_id: str) -> Manifest:
        deadline = time.monotonic() + self.poll_timeout_seconds
        while True:
            manifest = source.manifest(export_id)  # 202 pending: poll GET
            if manifest is not None:
                self._last_renewal = time.monotonic()
                return manifest
            if time.monotonic() >= deadline:
                raise RebuildRefused(f"export {export_id} still pending", code="EXPORT_PENDING_TIMEOUT")
            self.sleep(self.poll_seconds)

    def _start(self, scope: ProjectedScope, rebuild_id: str, manifest: Manifest) -> RebuildRecord:
        def work(conn: Connection) -> RebuildRecord:
            locked = find_scope(conn, scope.tenant_id, scope.catalog_id, lock=True)
            assert locked is not None
            generation = (
                max(
                    locked.serving_generation,
                    records.highest_generation(conn, locked.tenant_id, locked.catalog_id),
                )
                + 1
            )
            shadow = ProjectedScope(locked.tenant_id, locked.catalog_id, locked.history_epoch, generation)
            # A failed rebuild's leftovers in this generation are not ours to build on.
            drop_generation(conn, shadow, generation)
            progress.start_cursor(conn, shadow, progress.REBUILD_CONSUMER, manifest.position)
            return records.start(
                conn,
                rebuild_id=rebuild_id,
                tenant_id=locked.tenant_id,
                catalog_id=locked.catalog_id,
                history_epoch=locked.history_epoch,
                export_id=manifest.export_id,
                lease_id=manifest.lease_id,
                generation=generation,
                previous_generation=locked.serving_generation,
                start_position=manifest.position,
                now=self.clock(),
            )

        try:
            return self.db.run(work, tenant_id=scope.tenant_id)
        except psycopg.errors.UniqueViolation as exc:
            raise RebuildFailed(
                self._running_message(scope.tenant_id, scope.catalog_id), code="REBUILD_RUNNING"
            ) from exc

    def _load(
        self,
        source: SnapshotSource,
        manifest: Manifest,
        shadow: ProjectedScope,
        record: RebuildRecord,
        report: ProgressCallback,
    ) -> int:
        total = sum(o.count for o in manifest.objects if o.aggregate != "release")
        state = LoadedState(items={}, listings={}, merchant_facts={})
        release_data: bytes | None = None
        for obj in manifest.objects:
            data = source.object_data(manifest.export_id, obj)
            self._renew(source, manifest, record)
            if obj.aggregate == "release":
                release_data = data
                continue
            if obj.aggregate == INVENTORY_HISTORY:

                def history_done(rows: int) -> None:
                    report("load", state.rows, total)
                    self._renew(source, manifest, record)

                state.rows += load_inventory_history(
                    self.db, shadow, data, position=manifest.position, on_chunk=history_done
                )
                continue

            def chunk_done(rows: int) -> None:
                report("load", state.rows, total)
                self._renew(source, manifest, record)

            events = snapshot_events(
                obj.aggregate, data, scope=shadow, position=manifest.position, export_id=manifest.export_id
            )
            load_object(self.db, shadow, obj.aggregate, events, state, on_chunk=chunk_done)
        if release_data is not None:
            load_release(
                self.db, shadow, release_data, state, position=manifest.position, export_id=manifest.export_id
            )
        report("load", state.rows, total)
        return state.rows

    def _catch_up(
        self,
        source: SnapshotSource,
        manifest: Manifest,
        stream: StreamKey,
        shadow: ProjectedScope,
        record: RebuildRecord,
        target: int | None,
        report: ProgressCallback,
    ) -> tuple[int, int]:
        """Apply the retained tail through H into the shadow; (H, events applied)."""
        target_target = ShadowTarget(shadow.serving_generation)
        contiguous = manifest.position
        chosen: int | None = target
        applied = 0
        while True:
            page = source.events(stream, contiguous, TAIL_PAGE, manifest.lease_id)
            self._renew(source, manifest, record)
            if chosen is None:
                chosen = page.head  # "Choose committed target H": the committed head now
            if chosen < manifest.position or chosen > page.head:
                raise RebuildFailed(
                    f"target {chosen} is outside [{manifest.position}, {page.head}] (W, the committed head)",
                    code="TARGET_INVALID",
                )
            if contiguous >= chosen:
                return chosen, applied
            events = _parse([m for m in page.events if int(m["sequence"]) <= chosen])
            if not events:
                break
            settled = apply_events(self.db, events, target_target)
            applied += len(events)
            through = max(
                (s.contiguous_position or 0 for s in settled if isinstance(s, DeliveryResult)),
                default=contiguous,
            )
            report("catch_up", through - manifest.position, chosen - manifest.position)
            if through <= contiguous:
                break
            contiguous = through
        self._unresolved(shadow, chosen)
        return chosen, applied

    def _cut_over(
        self,
        source: SnapshotSource,
        manifest: Manifest,
        stream: StreamKey,
        shadow: ProjectedScope,
        record: RebuildRecord,
        target: int,
    ) -> tuple[int, int]:
        """The one transaction that swaps the serving generation and the live cursor; (H, events applied here)."""
        target_target = ShadowTarget(shadow.serving_generation)

        def work(conn: Connection) -> tuple[int, int]:
            scope = lock_for_cutover(conn, shadow.tenant_id, shadow.catalog_id)
            if scope is None or scope.history_epoch != shadow.history_epoch:
                raise RebuildFailed(
                    "the scope's history epoch changed during the rebuild", code="EPOCH_CHANGED"
                )
            if scope.serving_generation != record.previous_generation:
                raise RebuildFailed("another rebuild cut over meantime", code="GENERATION_CHANGED")
            final = max(target, progress.live_position(conn, scope))
            extra = 0
            contiguous = progress.lock_stream(conn, shadow, progress.REBUILD_CONSUMER)
            while contiguous < final:
                # The live applier (paused now) went past H: the shadow follows, so the live cursor never goes back.
                page = source.events(stream, contiguous, TAIL_PAGE, manifest.lease_id)
                events = _parse([m for m in page.events if int(m["sequence"]) <= final])
                if not events:
                    break
                deliver_in(conn, events, target_target)
                extra += len(events)
                now = progress.lock_stream(conn, shadow, progress.REBUILD_CONSUMER)
                if now <= contiguous:
                    break
                contiguous = now
            parked = inbox.parked_at_or_below(conn, shadow, final)
            if parked or contiguous < final:
                raise RebuildFailed(
                    _unresolved_message(final, contiguous, parked), code="UNRESOLVED_DEPENDENCY"
                )
            swap_generation(conn, scope, shadow.serving_generation)
            progress.cut_over_cursor(conn, shadow, final)
            if not records.update(
                conn, shadow.tenant_id, record.rebuild_id, status="cut_over", target_position=final
            ):
                raise _abandoned(record)  # rolls the swap back
            return final, extra

        return self.db.run(work, tenant_id=shadow.tenant_id)

    def _unresolved(self, shadow: ProjectedScope, target: int) -> None:
        def read(conn: Connection) -> None:
            contiguous = progress.lock_stream(conn, shadow, progress.REBUILD_CONSUMER)
            parked = inbox.parked_at_or_below(conn, shadow, target)
            if parked or contiguous < target:
                raise RebuildFailed(
                    _unresolved_message(target, contiguous, parked), code="UNRESOLVED_DEPENDENCY"
                )

        self.db.run(read, tenant_id=shadow.tenant_id)

    # -- bookkeeping ---------------------------------------------------------------------------------------------
    def _renew(self, source: SnapshotSource, manifest: Manifest, record: RebuildRecord) -> None:
        """if_projection_bootstrap: "Renew the lease throughout export/load/catch-up", and the owner's heartbeat
        with it (an abandoned rebuild stops here)."""
        if time.monotonic() - self._last_renewal >= self.renew_every_seconds:
            alive = self.db.run(
                lambda conn: records.heartbeat(conn, record.tenant_id, record.rebuild_id, self.clock()),
                tenant_id=record.tenant_id,
            )
            if not alive:
                raise _abandoned(record)
            source.renew_lease(manifest.export_id)
            self._last_renewal = time.monotonic()

    def _release(self, source: SnapshotSource, export_id: str) -> None:
        try:
            source.release_lease(export_id)
        except RebuildRefused as refused:
            # The lease expires on its own; until then it only retains more.
            log.warning("releasing the lease of export %s: %s (%s)", export_id, refused, refused.code)

    def _record(self, record: RebuildRecord, status: str, **values: int | str | None) -> bool:
        """Record the rebuild's progress; an abandoned rebuild stops here (``failed``: answers False)."""
        updated: bool = self.db.run(
            lambda conn: records.update(conn, record.tenant_id, record.rebuild_id, status=status, **values),  # type: ignore[arg-type]
            tenant_id=record.tenant_id,
        )
        if not updated and status != "failed":
            raise _abandoned(record)
        return updated

    # -- recovery of a dead rebuild --------------------------------------------------------------------------------
    def abandon(
        self, tenant_id: str, catalog_id: str, *, force: bool = False, reason: str | None = None
    ) -> AbandonResult:
        """Abandon the stream's active rebuild whose owner stopped renewing its heartbeat (older than
        ``stale_after``; any age with ``force``): mark it abandoned, release its export lease in the resolver, and
        leave its shadow generation to the ``rebuild-cleanup`` stage. NO_ACTIVE_REBUILD when none runs,
        REBUILD_LIVE when its heartbeat is fresh and ``force`` is not given."""
        now = self.clock()

        def work(conn: Connection) -> tuple[RebuildRecord, float]:
            running = records.active(conn, tenant_id, catalog_id, lock=True)
            if running is None:
                raise RebuildFailed(
                    f"no rebuild of {tenant_id}/{catalog_id} is running", code="NO_ACTIVE_REBUILD"
                )
            age = (now - running.heartbeat_at).total_seconds()
            if age < self.stale_after.total_seconds() and not force:
                raise RebuildFailed(
                    f"rebuild {running.rebuild_id} of {tenant_id}/{catalog_id} is alive (heartbeat {age:.0f} s "
                    f"ago, stale after {self.stale_after.total_seconds():.0f} s): wait, or abandon it with --force",
                    code="REBUILD_LIVE",
                )
            why = reason or f"abandoned: heartbeat {age:.0f} s old" + (" (forced)" if force else "")
            records.abandon(conn, tenant_id, running.rebuild_id, why)
            return running, age

        running, age = self.db.run(work, tenant_id=tenant_id)
        released = False
        source = self.source_factory()
        if source is not None:
            try:
                source.release_lease(running.export_id)
                released = True
            except RebuildRefused as refused:
                log.warning(
                    "abandoned rebuild %s: releasing the lease of export %s: %s (%s); it expires on its own",
                    running.rebuild_id,
                    running.export_id,
                    refused,
                    refused.code,
                )
        log.warning(
            "abandoned rebuild %s of %s/%s (%s, heartbeat %.0f s old%s); generation %d left to the cleanup",
            running.rebuild_id,
            tenant_id,
            catalog_id,
            running.status,
            age,
            ", forced" if force else "",
            running.generation,
        )
        return AbandonResult(
            rebuild_id=running.rebuild_id,
            tenant_id=tenant_id,
            catalog_id=catalog_id,
            export_id=running.export_id,
            generation=running.generation,
            status_before=running.status,
            heartbeat_at=running.heartbeat_at,
            heartbeat_age_seconds=age,
            lease_released=released,
        )

    def _running_message(self, tenant_id: str, catalog_id: str) -> str:
        """REBUILD_RUNNING's message: which rebuild, how alive, and how to recover a dead one."""
        running = self.db.run(lambda conn: records.active(conn, tenant_id, catalog_id), tenant_id=tenant_id)
        recover = (
            f"if its process died, abandon it: `prw product rebuild --tenant {tenant_id} --catalog {catalog_id} "
            f"--abandon` (or the product_rebuild job with abandon_stale: true) once its heartbeat is older than "
            f"{self.stale_after.total_seconds():.0f} s; --force abandons a live one"
        )
        if running is None:
            return f"a rebuild of {tenant_id}/{catalog_id} was running; try again ({recover})"
        age = (self.clock() - running.heartbeat_at).total_seconds()
        return (
            f"rebuild {running.rebuild_id} of {tenant_id}/{catalog_id} is {running.status} (started "
            f"{running.started_at.isoformat()}, heartbeat {age:.0f} s ago"
            f"{', stale' if age >= self.stale_after.total_seconds() else ''}); {recover}"
        )

    # -- cleanup (the ``rebuild_cleanup`` stage, ``cleanup``) ------------------------------------------------------
    def clean_up(
        self,
        reads: Database,
        older_than: timedelta,
        limit: int = 10,
        *,
        chunk_rows: int | None = None,
        on_progress: CleanupProgress | None = None,
    ) -> list[RebuildRecord]:
        """Drop the generations finished rebuilds left (``cleanup.drop_finished_generations``)."""
        return drop_finished_generations(
            self.db,
            reads,
            self.clock() - older_than,
            limit,
            chunk_rows=chunk_rows or self.cleanup_chunk_rows,
            on_progress=on_progress,
        )


@dataclass
class RebuildCleanup:
    """The ``rebuild-cleanup`` stage's service."""

    rebuild: ProductRebuild
    reads: Database
    older_than: timedelta

    def has_work(self) -> bool:
        finished_before = self.rebuild.clock() - self.older_than
        return bool(self.reads.run(lambda conn: records.uncleaned(conn, finished_before, 1), read_only=True))

    def run_batch(self, limit: int, on_progress: CleanupProgress | None = None) -> list[RebuildRecord]:
        return self.rebuild.clean_up(self.reads, self.older_than, limit, on_progress=on_progress)


def _abandoned(record: RebuildRecord) -> RebuildFailed:
    return RebuildFailed(
        f"rebuild {record.rebuild_id} was abandoned (prw product rebuild --abandon): stopped, nothing swapped",
        code="REBUILD_ABANDONED",
    )


def _parse(messages: list[dict[str, object]]) -> list[ProductEvent]:
    events = []
    for message in messages:
        try:
            events.append(parse_delivery(message))
        except RejectedDelivery as rejection:
            raise RebuildFailed(
                f"retained event {message.get('event_id')} rejected: {rejection}", code=rejection.code
            ) from rejection
    return events


def _unresolved_message(target: int, contiguous: int, parked: list[inbox.ParkedAtOrBelow]) -> str:
    waiting = "; ".join(
        f"position {p.position} ({p.event_id}) waits for {p.waiting_for_type} {p.waiting_for_id} "
        f"revision {p.waiting_for_revision}"
        for p in parked
    )
    return (
        f"unresolved dependencies at or below H = {target} (the shadow is contiguous through {contiguous}): "
        f"{waiting or 'positions missing from the retained tail'}; nothing was swapped"
    )

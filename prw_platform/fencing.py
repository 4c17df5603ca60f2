"""History epoch fencing after a restore (seed 003 if_projection_bootstrap "Fence restored
history": "Pause writers, relay, consumers and public serving; issue a NEW epoch in a trusted control plane outside
the restored database. Fence old workers; abandon old events without relabeling; initialize a new cursor and
rebuild from restored state. Audit and terminally ignore old-epoch deliveries.").

``prw epoch fence`` and the Dagster ``epoch_fence`` job run ``EpochFencing.fence``, in this order:

1. **Pause public serving** of the catalog (``product.projected_scope.paused_at``): the product API answers 503
   UNAVAILABLE for it until step 6, so no reader sees a projection of abandoned history. **Pause the relay** of
   the catalog (``resolver.outbox_relay_pause``): its outbox rows, of every epoch, stay unpublished until step 6
   (a relay batch already in flight finishes; its rows are old-epoch deliveries the product audits and ignores).
2. **Fence old workers** in the restored resolver database: every open cursor of the catalog is fenced, so a
   writer still holding the old epoch fails with HISTORY_EPOCH_FENCED (no commit with the old epoch from now on).
3. **Issue a NEW epoch** in the control database (outside the restored one), then open its cursor at position 0
   with its retention row and the live consumer's registration ("initialize a new cursor"). Writers resume on the
   new epoch only now: between 2 and 3 they are paused (old epoch fenced, new one not open).
4. **Move the product scope to the new epoch**: from now on the live consumer audits every delivery of another
   epoch in the inbox (``ignored_old_epoch``) and acknowledges it, never relabels or applies it. Old-epoch rows
   the relay publishes after step 6 are exactly such deliveries.
5. **Rebuild from restored state**: a snapshot export of the restored resolver at the new epoch (W = the new
   cursor) loaded into a new generation, its tail caught up and cut over (``product.rebuild``). Until the cutover
   the live applier's work for the new epoch lands in the replaced generation, which is never served again.
   The rebuild reads the retained tail from the outbox (the export stream), not from the queue: the paused
   relay does not hold it up.
6. **Resume** the relay, then public serving: the rows committed meanwhile go out in position order, and the
   live applier finds what the rebuild already applied as duplicates.

A failure after step 1 leaves the stream paused (safe): run the command again; it fences again (a NEW epoch each
time, which is also safe) and rebuilds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Connection, Database
from prw_platform.product import scopes
from prw_platform.product.rebuild import ProductRebuild, RebuildResult
from prw_platform.product.rebuild.service import ProgressCallback
from prw_platform.resolver.catalogs import fence_restored_stream
from prw_platform.resolver.stream import outbox


class FenceRefused(Exception):
    code = "SCOPE_NOT_PROJECTED"


@dataclass(frozen=True, slots=True)
class FenceResult:
    tenant_id: str
    catalog_id: str
    #: The epochs whose cursors this fence closed in the resolver database.
    fenced_epochs: tuple[str, ...]
    #: The product's epoch before the fence.
    previous_epoch: str
    new_epoch: str
    rebuild: RebuildResult


@dataclass
class EpochFencing:
    resolver: Database
    control: Database
    product: Database
    rebuild: ProductRebuild
    clock: Clock = utc_now

    def fence(
        self,
        tenant_id: str,
        catalog_id: str,
        reason: str,
        *,
        on_progress: ProgressCallback | None = None,
        on_step: Callable[[str], None] | None = None,
    ) -> FenceResult:
        step = on_step or (lambda name: None)
        # 1. Pause public serving (and note why).
        previous = self.product.run(
            lambda conn: _pause(conn, tenant_id, catalog_id, reason), tenant_id=tenant_id
        )
        step("paused public serving")
        self.resolver.run(
            lambda conn: outbox.pause_relay(conn, tenant_id, catalog_id, f"epoch fence: {reason}"),
            tenant_id=tenant_id,
        )
        step("paused the relay")
        # 2-3. Fence old workers, issue the NEW epoch outside the restored database, open its cursor.
        fenced, stream = fence_restored_stream(
            self.resolver, self.control, tenant_id, catalog_id, reason, clock=self.clock
        )
        step(f"fenced {', '.join(fenced) or 'no open cursor'}; issued {stream.history_epoch}")
        # 4. The product follows the new epoch: other epochs' deliveries are audited and ignored.
        self.product.run(
            lambda conn: scopes.move_to_epoch(conn, tenant_id, catalog_id, stream.history_epoch, reason),
            tenant_id=tenant_id,
        )
        step("product moved to the new epoch")
        # 5. Rebuild from restored state.
        rebuilt = self.rebuild.run(tenant_id, catalog_id, on_progress=on_progress)
        step(f"rebuilt generation {rebuilt.generation} at position {rebuilt.target_position}")
        # 6. Resume the relay, then public serving.
        self.resolver.run(lambda conn: outbox.resume_relay(conn, tenant_id, catalog_id), tenant_id=tenant_id)
        step("resumed the relay")
        self.product.run(lambda conn: scopes.resume(conn, tenant_id, catalog_id), tenant_id=tenant_id)
        step("resumed public serving")
        return FenceResult(tenant_id, catalog_id, tuple(fenced), previous, stream.history_epoch, rebuilt)


def _pause(conn: Connection, tenant_id: str, catalog_id: str, reason: str) -> str:
    scope = scopes.find_scope(conn, tenant_id, catalog_id, lock=True)
    if scope is None:
        raise FenceRefused(f"{tenant_id}/{catalog_id} is not projected here")
    scopes.move_to_epoch(conn, tenant_id, catalog_id, scope.history_epoch, reason)
    return scope.history_epoch

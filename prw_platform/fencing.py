"""History epoch fencing after a restore (seed 003 if_projection_bootstrap "Fence restored history").

``EpochFencing.fence`` (``prw epoch fence``, the Dagster ``epoch_fence`` job) runs six steps in order: 1. pause
public serving and the catalog's relay; 2. fence every open cursor of the catalog in the restored database (an
old writer fails with HISTORY_EPOCH_FENCED); 3. issue a NEW epoch in the control database, outside the restored
one, and open its cursor at 0; 4. move the product scope to it (deliveries of other epochs are audited and
ignored, never relabeled); 5. rebuild the projection from the restored state at the new epoch; 6. resume the
relay, then serving. A failure leaves the catalog paused, which is safe: run it again (a NEW epoch each time).
docs/operators/rebuild.md has the details.
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

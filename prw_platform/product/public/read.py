"""One public read: one statement sent alone (``Database.read_row``, or ``read_row_async`` on an ``async`` route's
event loop), its own read-only snapshot in one round trip, and what its row means. Every read of the public API is
one of these (``store`` composes them, ``PublicCatalog`` runs them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from prw_platform.db.database import Database, Query
from prw_platform.product.errors import CatalogPaused
from prw_platform.product.scopes import paused_reason

R = TypeVar("R")
S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class OneRead(Generic[R]):
    """``of_row`` reads the statement's row; ``empty`` is the answer when there is none (no serving generation:
    the catalog is not projected here)."""

    tenant_id: str
    catalog_id: str
    statement: Query
    params: dict[str, Any]
    of_row: Callable[[dict[str, Any]], R]
    empty: R

    def run(self, db: Database) -> R:
        row = db.read_row(self.statement, self.params, tenant_id=self.tenant_id)
        if row is None:
            self._not_served(db)
            return self.empty
        return self.of_row(row)

    async def run_async(self, db: Database) -> R:
        row = await db.read_row_async(self.statement, self.params, tenant_id=self.tenant_id)
        if row is None:
            # Rare (a paused or unprojected catalog): a transaction on the sync pool, off the loop.
            await asyncio.to_thread(self._not_served, db)
            return self.empty
        return self.of_row(row)

    def then(self, answer: Callable[[R], S]) -> OneRead[S]:
        """The same statement, its answer (the empty one too) passed through ``answer``."""
        of_row = self.of_row
        return OneRead(
            self.tenant_id,
            self.catalog_id,
            self.statement,
            self.params,
            lambda row: answer(of_row(row)),
            answer(self.empty),
        )

    def _not_served(self, db: Database) -> None:
        """No serving generation: ``CatalogPaused`` (503 UNAVAILABLE at the edge) while the catalog's history epoch
        is being fenced, so a consumer never mistakes the pause for an empty catalog; nothing when it is not
        projected here. Asked only then, in a transaction of its own."""
        reason = db.run(
            lambda conn: paused_reason(conn, self.tenant_id, self.catalog_id),
            tenant_id=self.tenant_id,
            read_only=True,
        )
        if reason is not None:
            raise CatalogPaused(reason)

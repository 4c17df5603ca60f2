"""The resolver's export stream (if_projection_bootstrap "Retrieve retained events", gap closure):
``GET /v1/exports/events?after=W&history_epoch=E&limit=N`` serves a product principal the committed, authorized
events of its catalog's stream after position W, in position order.

The principal is an OAuth2 client-credentials client with scope ``exports:read``, bound to one tenant and
catalog: the tenant and catalog come from its token, a requested one is only checked against them (403
TENANT_SCOPE_DENIED).

One REPEATABLE READ READ ONLY snapshot reads the committed cursor H of the stream and the events in (W, H]:
positions are allocated under the cursor lock and commit in position order (AW-01), so every event at or below H
is committed and visible, and the page never shows a hole.

Retention: the same snapshot reads the pruned-through cursor P. A cursor ``after < P`` is stale (the
positions after it are pruned): 410 EXPORT_EXPIRED, restart from a new export. With ``lease_id`` (a rebuild's
catch-up), the lease must pin this stream and be neither expired nor released, also 410 otherwise. The live
consumer reports its durable progress here as well (``POST /v1/exports/progress``, ``report_progress``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import EXPORTS_READ
from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import StreamKey
from prw_platform.db.database import REPEATABLE_READ, Connection, Database
from prw_platform.db.errors import DatabaseUnavailable
from prw_platform.resolver.intake.errors import NotFound, TenantScopeDenied, ValidationFailed
from prw_platform.resolver.stream import outbox, retention
from prw_platform.resolver.stream.cursor import committed_position
from prw_platform.resolver.stream.retention import ProgressAck, RetentionUnavailable

#: Events per page at most (and by default).
MAX_EXPORT_LIMIT: Final = 1_000


@dataclass(frozen=True, slots=True)
class ExportPage:
    tenant_id: str
    catalog_id: str
    history_epoch: str
    after: int
    #: The stream's committed cursor in the page's snapshot: the head a consumer must reach.
    head: int
    #: product.accepted-change.v1 messages, in position order, positions ``after + 1 ...`` without a hole.
    events: tuple[dict[str, Any], ...]

    @property
    def next_after(self) -> int:
        """Where the next page starts: the last position served, or ``after`` for an empty page."""
        return self.events[-1]["sequence"] if self.events else self.after


class ExportService:
    """The export stream over ``resolver_app`` (API timeouts), tenant-scoped by RLS (INV-06)."""

    def __init__(self, db: Database, *, clock: Clock = utc_now) -> None:
        self._db = db
        self._clock = clock

    def events(
        self,
        principal: CollectorPrincipal,
        *,
        after: int,
        history_epoch: str,
        limit: int = MAX_EXPORT_LIMIT,
        catalog_id: str | None = None,
        lease_id: str | None = None,
    ) -> ExportPage:
        principal.require_scope(EXPORTS_READ)
        if catalog_id is not None and catalog_id != principal.catalog_id:
            raise TenantScopeDenied(f"this client may export {principal.catalog_id} only")
        if after < 0 or not 1 <= limit <= MAX_EXPORT_LIMIT or not history_epoch:
            raise ValidationFailed(
                f"after >= 0, 1 <= limit <= {MAX_EXPORT_LIMIT} and a history_epoch are required"
            )
        stream = StreamKey(principal.tenant_id, principal.catalog_id, history_epoch)

        def read(conn: Connection) -> ExportPage:
            head = committed_position(conn, stream)
            if head is None:
                raise NotFound(f"no stream {history_epoch} in catalog {principal.catalog_id}")
            if lease_id is not None:
                retention.check_lease(conn, lease_id, stream, now)
            pruned = retention.pruned_through(conn, stream) or 0
            if after < pruned:
                raise retention.ExportExpired(
                    f"positions after {after} are pruned (through {pruned}); restart from a new export"
                )
            rows = outbox.read_stream(
                conn, stream.tenant_id, stream.catalog_id, history_epoch, after, head, limit
            )
            return ExportPage(
                tenant_id=stream.tenant_id,
                catalog_id=stream.catalog_id,
                history_epoch=history_epoch,
                after=after,
                head=head,
                events=tuple(row.body for row in rows),
            )

        now = self._clock()
        try:
            return self._db.run(
                read, tenant_id=principal.tenant_id, isolation=REPEATABLE_READ, read_only=True
            )
        except DatabaseUnavailable as exc:
            raise RetentionUnavailable("the export stream is unavailable; retry later") from exc

    def report_progress(
        self,
        principal: CollectorPrincipal,
        *,
        history_epoch: str,
        position: int,
        consumer: str = retention.LIVE_CONSUMER,
        catalog_id: str | None = None,
    ) -> ProgressAck:
        """The product consumer's durable progress, reported after its commit (if_accepted_change; monotonic)."""
        principal.require_scope(EXPORTS_READ)
        if catalog_id is not None and catalog_id != principal.catalog_id:
            raise TenantScopeDenied(f"this client may report for {principal.catalog_id} only")
        stream = StreamKey(principal.tenant_id, principal.catalog_id, history_epoch)
        now = self._clock()
        try:
            return self._db.run(
                lambda conn: retention.report_progress(conn, stream, consumer, position, now),
                tenant_id=principal.tenant_id,
            )
        except DatabaseUnavailable as exc:
            raise RetentionUnavailable("retention control is unavailable; retry later") from exc

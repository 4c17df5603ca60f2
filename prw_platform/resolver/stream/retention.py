"""Retention control and the outbox pruner (seed 000 AW-03 "Prune"; seed 003 if_accepted_change and
if_projection_bootstrap Delivery). docs/operators/retention.md says how to run and watch it.

Owns ``resolver.retention_stream``, ``resolver.retention_consumer`` and ``resolver.retention_lease``; the outbox
rows are deleted through their owner (``outbox.prune_prefix``).

* The retention-control lock is the row lock of the stream's ``retention_stream`` row (``lock_stream``):
  registration, lease creation and advance, and pruning take it first, so a lease is never pinned at a cursor a
  concurrent prune is moving past, and a prune never reads a lease set about to change under it.
* A consumer's progress is only what it reported after committing its own transaction (``report_progress``,
  monotonic); queue delivery or ack never counts. A report only raises a position, so it locks its own consumer
  row, not the stream.
* The bound B = min(every live consumer's acknowledged position, every unexpired lease pin); the pruner removes
  positions strictly below B (one event of slack keeps "never at or above" free of off-by-one arguments), and
  nothing on a stream without a live consumer. P (``pruned_through``) is recorded with every prune: a reader
  asking ``after < P`` has a stale cursor (410 EXPORT_EXPIRED, ``exports``).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from psycopg.rows import class_row

from prw_platform.clock import Clock, utc_now
from prw_platform.contracts import StreamKey
from prw_platform.db.database import REPEATABLE_READ, Connection, Database
from prw_platform.resolver.intake.errors import IntakeError, NotFound, ValidationFailed
from prw_platform.resolver.stream import outbox
from prw_platform.resolver.stream.cursor import committed_position

log = logging.getLogger(__name__)

#: The product service's live projection consumer: registered when a stream opens (``open_stream``).
LIVE_CONSUMER: Final = "product_live"

#: Outbox rows deleted per pruner transaction at most.
PRUNE_CHUNK: Final = 10_000


class ExportExpired(IntakeError):
    """if_projection_bootstrap: 410 EXPORT_EXPIRED, do not retry; request a new export. A stale cursor (its next
    positions were pruned) or an expired, released or unknown lease."""

    code = "EXPORT_EXPIRED"
    status = 410


class RetentionUnavailable(IntakeError):
    """if_projection_bootstrap: 503 UNAVAILABLE, retry."""

    code = "UNAVAILABLE"
    status = 503
    retryable = True


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """How long published events stay at least, how long a lease lives unless renewed, and when the reports call
    retention blocked or a lease near expiry."""

    retention_age: timedelta = timedelta(days=7)
    lease_ttl: timedelta = timedelta(minutes=30)
    blocked_alert_after: timedelta = timedelta(hours=6)
    lease_warn_before: timedelta = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class StreamRetention:
    tenant_id: str
    catalog_id: str
    history_epoch: str
    pruned_through: int

    @property
    def stream(self) -> StreamKey:
        return StreamKey(self.tenant_id, self.catalog_id, self.history_epoch)


@dataclass(frozen=True, slots=True)
class Lease:
    lease_id: str
    tenant_id: str
    catalog_id: str
    history_epoch: str
    pinned_at: int
    purpose: str
    created_at: datetime
    renewed_at: datetime
    expires_at: datetime
    released_at: datetime | None

    def live(self, now: datetime) -> bool:
        return self.released_at is None and self.expires_at > now


@dataclass(frozen=True, slots=True)
class ConsumerProgress:
    consumer: str
    acknowledged_position: int
    registered_at: datetime
    reported_at: datetime | None
    retired_at: datetime | None


@dataclass(frozen=True, slots=True)
class ProgressAck:
    """The answer to a progress report: the consumer's acknowledged position after it (unchanged when the
    report was lower), and whether this report raised it."""

    consumer: str
    acknowledged_position: int
    advanced: bool


# -- The lock and registration. ---------------------------------------------------------------------------------


def open_stream(conn: Connection, stream: StreamKey, now: datetime) -> None:
    """Create the stream's retention row and register the product's live consumer at position 0, in the
    transaction that opens the stream cursor (``catalogs.provision_catalog``): from the first event on, the
    pruner knows somebody still needs it."""
    conn.execute(
        """INSERT INTO resolver.retention_stream (tenant_id, catalog_id, history_epoch, updated_at)
           VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING""",
        (stream.tenant_id, stream.catalog_id, stream.history_epoch, now),
    )
    register_consumer(conn, stream, LIVE_CONSUMER, now)


def lock_stream(conn: Connection, stream: StreamKey) -> StreamRetention:
    """THE retention-control lock of ``stream`` (its retention row, FOR UPDATE) and its pruned-through cursor."""
    with conn.cursor(row_factory=class_row(StreamRetention)) as cur:
        row = cur.execute(
            """SELECT tenant_id, catalog_id, history_epoch, pruned_through FROM resolver.retention_stream
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s
               FOR UPDATE""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch),
        ).fetchone()
    if row is None:
        raise NotFound(f"no stream {stream.history_epoch} in catalog {stream.catalog_id}")
    return row


def register_consumer(conn: Connection, stream: StreamKey, consumer: str, now: datetime) -> None:
    """Register a live consumer of ``stream`` (under the retention lock) at position 0; a no-op when it is."""
    lock_stream(conn, stream)
    conn.execute(
        """INSERT INTO resolver.retention_consumer (tenant_id, catalog_id, history_epoch, consumer, registered_at)
           VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING""",
        (stream.tenant_id, stream.catalog_id, stream.history_epoch, consumer, now),
    )


def pruned_through(conn: Connection, stream: StreamKey) -> int | None:
    """P of ``stream`` without the lock (a reader's view in its own snapshot); None for an unknown stream."""
    with conn.cursor(row_factory=class_row(StreamRetention)) as cur:
        row = cur.execute(
            """SELECT tenant_id, catalog_id, history_epoch, pruned_through FROM resolver.retention_stream
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch),
        ).fetchone()
    return None if row is None else row.pruned_through


# -- Progress reports. ------------------------------------------------------------------------------------------


def report_progress(
    conn: Connection, stream: StreamKey, consumer: str, position: int, now: datetime
) -> ProgressAck:
    """Record ``consumer``'s durable contiguous progress (reported AFTER the consumer's own commit,
    if_accepted_change). Monotonic: a lower report is ignored and logged. A position above the stream's
    committed cursor is refused (nobody can have processed what was never committed). An unknown consumer is
    registered first (under the retention lock)."""
    committed = committed_position(conn, stream)
    if committed is None:
        raise NotFound(f"no stream {stream.history_epoch} in catalog {stream.catalog_id}")
    if position < 0 or position > committed:
        raise ValidationFailed(f"position {position} is outside the committed stream 0..{committed}")
    current = _lock_consumer(conn, stream, consumer)
    if current is None:
        register_consumer(conn, stream, consumer, now)
        current = _lock_consumer(conn, stream, consumer)
        assert current is not None
    if current.retired_at is not None:
        raise ValidationFailed(f"consumer {consumer} of {stream} is retired")
    if position < current.acknowledged_position:
        log.warning(
            "retention: %s reported %d for %s below its acknowledged %d; ignored",
            consumer,
            position,
            stream,
            current.acknowledged_position,
        )
        return ProgressAck(consumer, current.acknowledged_position, advanced=False)
    conn.execute(
        """UPDATE resolver.retention_consumer SET acknowledged_position = %s, reported_at = %s
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s""",
        (position, now, stream.tenant_id, stream.catalog_id, stream.history_epoch, consumer),
    )
    return ProgressAck(consumer, position, advanced=position > current.acknowledged_position)


def _lock_consumer(conn: Connection, stream: StreamKey, consumer: str) -> ConsumerProgress | None:
    with conn.cursor(row_factory=class_row(ConsumerProgress)) as cur:
        return cur.execute(
            """SELECT consumer, acknowledged_position, registered_at, reported_at, retired_at
               FROM resolver.retention_consumer
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s
               FOR UPDATE""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch, consumer),
        ).fetchone()


def retire_consumer(conn: Connection, stream: StreamKey, consumer: str, now: datetime) -> bool:
    """An operator's explicit act (never automatic): ``consumer`` no longer holds retention back."""
    lock_stream(conn, stream)
    return (
        conn.execute(
            """UPDATE resolver.retention_consumer SET retired_at = %s
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s AND consumer = %s
                 AND retired_at IS NULL""",
            (now, stream.tenant_id, stream.catalog_id, stream.history_epoch, consumer),
        ).rowcount
        == 1
    )


# -- Leases. ----------------------------------------------------------------------------------------------------

_LEASE_COLUMNS: Final = """lease_id, tenant_id, catalog_id, history_epoch, pinned_at, purpose, created_at,
    renewed_at, expires_at, released_at"""


def create_lease(conn: Connection, stream: StreamKey, purpose: str, ttl: timedelta, now: datetime) -> Lease:
    """if_projection_bootstrap "Pin retention": under the retention-control lock, a renewable lease pinned after
    the current pruned-through cursor P. The caller commits it before it opens its snapshot."""
    retention = lock_stream(conn, stream)
    with conn.cursor(row_factory=class_row(Lease)) as cur:
        lease = cur.execute(
            """INSERT INTO resolver.retention_lease (lease_id, tenant_id, catalog_id, history_epoch, pinned_at,
                   purpose, created_at, renewed_at, expires_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
               RETURNING lease_id, tenant_id, catalog_id, history_epoch, pinned_at, purpose, created_at,
                   renewed_at, expires_at, released_at""",
            (
                f"lse_{secrets.token_hex(12)}",
                stream.tenant_id,
                stream.catalog_id,
                stream.history_epoch,
                retention.pruned_through,
                purpose,
                now,
                now,
                now + ttl,
            ),
        ).fetchone()
    assert lease is not None
    return lease


def get_lease(conn: Connection, lease_id: str, *, lock: bool = False) -> Lease | None:
    query = (
        """SELECT lease_id, tenant_id, catalog_id, history_epoch, pinned_at, purpose, created_at, renewed_at,
               expires_at, released_at FROM resolver.retention_lease WHERE lease_id = %s FOR UPDATE"""
        if lock
        else """SELECT lease_id, tenant_id, catalog_id, history_epoch, pinned_at, purpose, created_at, renewed_at,
               expires_at, released_at FROM resolver.retention_lease WHERE lease_id = %s"""
    )
    with conn.cursor(row_factory=class_row(Lease)) as cur:
        return cur.execute(query, (lease_id,)).fetchone()


def check_lease(conn: Connection, lease_id: str, stream: StreamKey, now: datetime) -> Lease:
    """The lease if it pins ``stream`` and is neither expired nor released; 410 EXPORT_EXPIRED otherwise."""
    lease = get_lease(conn, lease_id)
    if lease is None or (lease.tenant_id, lease.catalog_id, lease.history_epoch) != (
        stream.tenant_id,
        stream.catalog_id,
        stream.history_epoch,
    ):
        raise ExportExpired(f"no lease {lease_id} on this stream; request a new export")
    if not lease.live(now):
        raise ExportExpired(f"lease {lease_id} expired or was released; request a new export")
    return lease


def renew_lease(conn: Connection, lease_id: str, ttl: timedelta, now: datetime) -> Lease:
    """Extend a live lease to ``now + ttl``. An expired lease stays expired: the pruner may already have used
    its expiry, so reviving it would promise events that are gone."""
    lease = get_lease(conn, lease_id, lock=True)
    if lease is None or not lease.live(now):
        raise ExportExpired(f"lease {lease_id} expired or was released; request a new export")
    conn.execute(
        "UPDATE resolver.retention_lease SET renewed_at = %s, expires_at = %s WHERE lease_id = %s",
        (now, max(lease.expires_at, now + ttl), lease_id),
    )
    renewed = get_lease(conn, lease_id)
    assert renewed is not None
    return renewed


def advance_lease(conn: Connection, lease_id: str, position: int, now: datetime) -> Lease:
    """if_projection_bootstrap "Publish export": move the pin from P to W under retention coordination (the
    stream's retention lock). Only forward; a dead lease cannot be advanced."""
    lease = get_lease(conn, lease_id)
    if lease is None:
        raise ExportExpired(f"no lease {lease_id}")
    lock_stream(conn, StreamKey(lease.tenant_id, lease.catalog_id, lease.history_epoch))
    lease = get_lease(conn, lease_id, lock=True)
    assert lease is not None
    if not lease.live(now):
        raise ExportExpired(f"lease {lease_id} expired or was released; request a new export")
    if position > lease.pinned_at:
        conn.execute(
            "UPDATE resolver.retention_lease SET pinned_at = %s WHERE lease_id = %s", (position, lease_id)
        )
    advanced = get_lease(conn, lease_id)
    assert advanced is not None
    return advanced


def release_lease(conn: Connection, lease_id: str, now: datetime) -> bool:
    return (
        conn.execute(
            "UPDATE resolver.retention_lease SET released_at = %s WHERE lease_id = %s AND released_at IS NULL",
            (now, lease_id),
        ).rowcount
        == 1
    )


def _live_leases(conn: Connection, stream: StreamKey, now: datetime) -> list[Lease]:
    with conn.cursor(row_factory=class_row(Lease)) as cur:
        return cur.execute(
            """SELECT lease_id, tenant_id, catalog_id, history_epoch, pinned_at, purpose, created_at, renewed_at,
                   expires_at, released_at FROM resolver.retention_lease
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s
                 AND released_at IS NULL AND expires_at > %s
               ORDER BY pinned_at, lease_id""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch, now),
        ).fetchall()


def _consumers(conn: Connection, stream: StreamKey) -> list[ConsumerProgress]:
    with conn.cursor(row_factory=class_row(ConsumerProgress)) as cur:
        return cur.execute(
            """SELECT consumer, acknowledged_position, registered_at, reported_at, retired_at
               FROM resolver.retention_consumer
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s
               ORDER BY consumer""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch),
        ).fetchall()


# -- The pruner. ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Holder:
    """What holds retention of a stream back: a live consumer's acknowledged position or a lease pin."""

    kind: str  # "consumer" | "lease" | "none"
    name: str
    position: int

    def describe(self) -> str:
        if self.kind == "none":
            return "no live consumer registered"
        return f"{self.kind} {self.name} at {self.position}"


def retention_bound(
    consumers: list[ConsumerProgress], leases: list[Lease], now: datetime
) -> tuple[int, Holder] | None:
    """B = min(live consumers' acknowledged positions, unexpired lease pins), and who sets it; None when no live
    consumer is registered (then nothing may be pruned)."""
    holders = [
        Holder("consumer", c.consumer, c.acknowledged_position) for c in consumers if c.retired_at is None
    ]
    if not holders:
        return None
    holders += [Holder("lease", lease.lease_id, lease.pinned_at) for lease in leases if lease.live(now)]
    lowest = min(holders, key=lambda h: (h.position, h.kind, h.name))
    return lowest.position, lowest


@dataclass(frozen=True, slots=True)
class StreamPrune:
    stream: StreamKey
    before: int
    after: int
    rows: int
    #: Published, aged events are held back by this consumer or lease (None: nothing eligible is held).
    blocked_by: str | None

    @property
    def pruned(self) -> bool:
        return self.after > self.before


@dataclass(frozen=True, slots=True)
class PruneReport:
    streams: tuple[StreamPrune, ...] = ()

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.streams)

    @property
    def blocked(self) -> tuple[StreamPrune, ...]:
        return tuple(s for s in self.streams if s.blocked_by is not None)


def prune_stream(
    conn: Connection, stream: StreamKey, *, retention_age: timedelta, now: datetime, limit: int = PRUNE_CHUNK
) -> StreamPrune:
    """One pruner transaction for ``stream`` (the caller's): take the retention lock, compute the bound, delete
    the contiguous prefix of published events older than ``retention_age`` strictly below it (at most
    ``limit`` rows), record P and whether retention is blocked."""
    retention = lock_stream(conn, stream)
    before = retention.pruned_through
    bound = retention_bound(_consumers(conn, stream), _live_leases(conn, stream, now), now)
    cutoff = now - retention_age
    after, rows = before, 0
    blocked_by: str | None
    if bound is None:
        blocked_by = (
            Holder("none", "", 0).describe() if outbox.eligible_at(conn, stream, before + 1, cutoff) else None
        )
    else:
        position, holder = bound
        through = outbox.prunable_prefix_end(conn, stream, before, min(position - 1, before + limit), cutoff)
        if through > before:
            rows = outbox.prune_prefix(conn, stream, before, through)
            after = through
        # Blocked: the prune reached the bound, and an event past the holder's position is published and old
        # enough (it would go but for the holder). A caught-up consumer keeps only its own position: not blocked.
        held = after + 1 >= position and outbox.eligible_at(conn, stream, max(position, 0) + 1, cutoff)
        blocked_by = holder.describe() if held else None
    conn.execute(
        """UPDATE resolver.retention_stream
           SET pruned_through = %s, pruned_rows = pruned_rows + %s,
               last_pruned_at = CASE WHEN %s > 0 THEN %s ELSE last_pruned_at END,
               blocked_since = CASE WHEN %s::text IS NULL THEN NULL ELSE coalesce(blocked_since, %s) END,
               blocked_by = %s, updated_at = %s
           WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s""",
        (
            after,
            rows,
            rows,
            now,
            blocked_by,
            now,
            blocked_by,
            now,
            stream.tenant_id,
            stream.catalog_id,
            stream.history_epoch,
        ),
    )
    return StreamPrune(stream, before, after, rows, blocked_by)


@dataclass
class Pruner:
    """AW-03 "Prune" across every stream, as ``resolver_pruner`` (migration 0016: it may delete published outbox
    rows and update retention rows, nothing else). One transaction per stream and chunk, so the retention lock is held briefly and a
    progress report or an export waits at most one chunk."""

    db: Database
    policy: RetentionPolicy = field(default_factory=RetentionPolicy)
    clock: Clock = utc_now
    chunk: int = PRUNE_CHUNK

    def _streams(self) -> list[StreamKey]:
        def read(conn: Connection) -> list[StreamKey]:
            with conn.cursor(row_factory=class_row(StreamKey)) as cur:
                rows = cur.execute(
                    """SELECT tenant_id, catalog_id, history_epoch FROM resolver.retention_stream
                       ORDER BY tenant_id, catalog_id, history_epoch"""
                ).fetchall()
            return [StreamKey(r.tenant_id, r.catalog_id, r.history_epoch) for r in rows]

        return self.db.run(read, read_only=True)

    def prune(
        self, max_rows: int | None = None, progress: Callable[[StreamPrune], None] | None = None
    ) -> PruneReport:
        """Prune every stream as far as allowed (or ``max_rows`` in all). Each stream is pruned chunk by chunk
        until a chunk removes nothing."""
        results: list[StreamPrune] = []
        budget = max_rows
        for stream in self._streams():
            first: StreamPrune | None = None
            last: StreamPrune | None = None
            rows = 0
            while budget is None or budget > 0:
                limit = self.chunk if budget is None else min(self.chunk, budget)
                step = self._prune_once(stream, limit)
                first = first or step
                last = step
                rows += step.rows
                if budget is not None:
                    budget -= step.rows
                if progress is not None:
                    progress(step)
                if step.rows == 0:
                    break
            if first is not None and last is not None:
                results.append(StreamPrune(stream, first.before, last.after, rows, last.blocked_by))
        return PruneReport(tuple(results))

    def _prune_once(self, stream: StreamKey, limit: int) -> StreamPrune:
        now = self.clock()

        def work(conn: Connection) -> StreamPrune:
            return prune_stream(conn, stream, retention_age=self.policy.retention_age, now=now, limit=limit)

        return self.db.run(work)

    def run_batch(self, max_rows: int) -> PruneReport:
        return self.prune(max_rows)

    def has_work(self) -> bool:
        """Cheap probe: is some stream's next event published and old enough? (It may still be held by a
        consumer or a lease: the stage is driven by its schedule, this only wakes an idle worker.) One primary
        key probe of the outbox per stream."""
        cutoff = self.clock() - self.policy.retention_age

        def probe(conn: Connection) -> bool:
            with conn.cursor(row_factory=class_row(StreamRetention)) as cur:
                streams = cur.execute(
                    """SELECT tenant_id, catalog_id, history_epoch, pruned_through FROM resolver.retention_stream"""
                ).fetchall()
            return any(outbox.eligible_at(conn, r.stream, r.pruned_through + 1, cutoff) for r in streams)

        return self.db.run(probe, read_only=True)


# -- Reports (the Dagster ``retention`` asset and checks, ``prw retention status``). ---------------------------


@dataclass(frozen=True, slots=True)
class LeaseStatus:
    lease_id: str
    pinned_at: int
    purpose: str
    expires_at: datetime
    expires_in_seconds: float
    near_expiry: bool


@dataclass(frozen=True, slots=True)
class ConsumerStatus:
    consumer: str
    acknowledged_position: int
    lag: int
    reported_at: datetime | None
    retired: bool


@dataclass(frozen=True, slots=True)
class RetentionStatus:
    tenant_id: str
    catalog_id: str
    history_epoch: str
    committed_position: int
    pruned_through: int
    pruned_rows: int
    last_pruned_at: datetime | None
    #: The position retention may not reach (the bound B) and who sets it; None without a live consumer.
    bound: int | None
    held_by: str
    blocked_since: datetime | None
    blocked_by: str | None
    blocked_seconds: float
    #: Blocked for longer than the policy allows (the Dagster check fails).
    blocked_alert: bool
    consumers: tuple[ConsumerStatus, ...]
    leases: tuple[LeaseStatus, ...]

    @property
    def retained(self) -> int:
        return self.committed_position - self.pruned_through

    @property
    def leases_near_expiry(self) -> tuple[LeaseStatus, ...]:
        return tuple(lease for lease in self.leases if lease.near_expiry)


@dataclass(frozen=True, slots=True)
class _StatusRow:
    tenant_id: str
    catalog_id: str
    history_epoch: str
    pruned_through: int
    pruned_rows: int
    last_pruned_at: datetime | None
    blocked_since: datetime | None
    blocked_by: str | None


def retention_status(
    db: Database, policy: RetentionPolicy, now: datetime, *, tenant_id: str | None = None
) -> list[RetentionStatus]:
    """Every stream's retention (through ``prw_operator``, read-only, one snapshot): P, the bound and its holder,
    each consumer's lag, each live lease and whether it is near expiry, and how long retention has been blocked."""

    def read(conn: Connection) -> list[RetentionStatus]:
        with conn.cursor(row_factory=class_row(_StatusRow)) as cur:
            rows = cur.execute(
                """SELECT tenant_id, catalog_id, history_epoch, pruned_through, pruned_rows, last_pruned_at,
                          blocked_since, blocked_by
                   FROM resolver.retention_stream
                   WHERE %(tenant)s::text IS NULL OR tenant_id = %(tenant)s
                   ORDER BY tenant_id, catalog_id, history_epoch""",
                {"tenant": tenant_id},
            ).fetchall()
        statuses = []
        for row in rows:
            stream = StreamKey(row.tenant_id, row.catalog_id, row.history_epoch)
            committed = committed_position(conn, stream) or 0
            consumers = _consumers(conn, stream)
            leases = _live_leases(conn, stream, now)
            bound = retention_bound(consumers, leases, now)
            blocked_seconds = 0.0 if row.blocked_since is None else (now - row.blocked_since).total_seconds()
            statuses.append(
                RetentionStatus(
                    tenant_id=row.tenant_id,
                    catalog_id=row.catalog_id,
                    history_epoch=row.history_epoch,
                    committed_position=committed,
                    pruned_through=row.pruned_through,
                    pruned_rows=row.pruned_rows,
                    last_pruned_at=row.last_pruned_at,
                    bound=None if bound is None else bound[0],
                    held_by=Holder("none", "", 0).describe() if bound is None else bound[1].describe(),
                    blocked_since=row.blocked_since,
                    blocked_by=row.blocked_by,
                    blocked_seconds=blocked_seconds,
                    blocked_alert=row.blocked_since is not None
                    and blocked_seconds >= policy.blocked_alert_after.total_seconds(),
                    consumers=tuple(
                        ConsumerStatus(
                            c.consumer,
                            c.acknowledged_position,
                            max(0, committed - c.acknowledged_position),
                            c.reported_at,
                            c.retired_at is not None,
                        )
                        for c in consumers
                    ),
                    leases=tuple(
                        LeaseStatus(
                            lease.lease_id,
                            lease.pinned_at,
                            lease.purpose,
                            lease.expires_at,
                            (lease.expires_at - now).total_seconds(),
                            lease.expires_at - now <= policy.lease_warn_before,
                        )
                        for lease in leases
                    ),
                )
            )
        return statuses

    return db.run(read, isolation=REPEATABLE_READ, read_only=True)


# -- The resolver's service for the HTTP edge (progress reports) and the CLI. ----------------------------------


@dataclass
class RetentionControl:
    """Progress reports and leases in one tenant (``resolver_app``, RLS), for the export API and the
    composition root's in-process progress sink."""

    db: Database
    policy: RetentionPolicy = field(default_factory=RetentionPolicy)
    clock: Clock = utc_now

    def report_progress(self, stream: StreamKey, consumer: str, position: int) -> ProgressAck:
        now = self.clock()
        return self.db.run(
            lambda conn: report_progress(conn, stream, consumer, position, now), tenant_id=stream.tenant_id
        )

    def create_lease(self, stream: StreamKey, purpose: str) -> Lease:
        now = self.clock()
        return self.db.run(
            lambda conn: create_lease(conn, stream, purpose, self.policy.lease_ttl, now),
            tenant_id=stream.tenant_id,
        )

    def renew_lease(self, tenant_id: str, lease_id: str) -> Lease:
        now = self.clock()
        return self.db.run(
            lambda conn: renew_lease(conn, lease_id, self.policy.lease_ttl, now), tenant_id=tenant_id
        )

    def release_lease(self, tenant_id: str, lease_id: str) -> bool:
        now = self.clock()
        return self.db.run(lambda conn: release_lease(conn, lease_id, now), tenant_id=tenant_id)

    def retire_consumer(self, stream: StreamKey, consumer: str) -> bool:
        now = self.clock()
        return self.db.run(
            lambda conn: retire_consumer(conn, stream, consumer, now), tenant_id=stream.tenant_id
        )

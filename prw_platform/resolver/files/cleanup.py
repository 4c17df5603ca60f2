"""The files sweep and the cleanup consumer (seed 004 "Concurrency and Timing").

The sweep (stage ``files-sweep``, run as ``resolver_sweeper`` across tenants, on a schedule with concurrency one)
claims due detached and abandoned files with ``FOR UPDATE SKIP LOCKED`` (two overlapping sweeps claim disjoint
files), moves them to discarding and sends one message per file on ``catalog-file-cleanup`` (in the claiming
transaction on the PostgreSQL queue). It also deletes the bytes of retired files whose thirty days are over.

The consumer (stage ``files-cleanup``, at most two at once) settles one file per message in the file's tenant
(``resolver_app``, row-level security): it locks the file row, which a save naming the file also locks, and checks
the owner records again. Still named -> attached; a released file -> discarded, retired for thirty days (its bytes
stay readable); an uncommitted copy -> discarded, its bytes deleted at once unless another live file shares the
object. A failed delivery is retried with the platform's backoff; the final permitted one (the fifth receive)
moves the file to failed with the reason and sends the message to the dead-letter queue for operator review.
A message for a file that is no longer discarding (a redelivery, a duplicate) is acknowledged and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final, Literal

from prw_platform.clock import Clock
from prw_platform.db.database import Connection, Database
from prw_platform.queues import OutgoingMessage, Queue, Received
from prw_platform.resolver.files import records, store
from prw_platform.resolver.files.lifecycle import RETIREMENT_DAYS
from prw_platform.retry import RetryPolicy
from prw_platform.storage import ObjectStore
from prw_platform.storage.keys import parse_tenant_ref

SWEEP_ACTOR: Final = "sweep:files-sweep"
CONSUMER_ACTOR: Final = "consumer:files-cleanup"
#: The dead-letter reason of a file whose cleanup exhausted its deliveries.
CLEANUP_FAILED: Final = "CLEANUP_FAILED"
#: How long one delivery is invisible to the other consumer while it settles.
VISIBILITY_SECONDS: Final = 60
#: When the sweep sends the message of a file still discarding again (``store.claim_stalled``).
RESEND_AFTER: Final = store.RESEND_AFTER

Outcome = Literal["attached", "retired", "deleted", "skipped", "retried", "failed"]


def cleanup_message(claimed: store.Claimed | store.CatalogFile) -> OutgoingMessage:
    return OutgoingMessage({"tenant_id": claimed.tenant_id, "file_id": claimed.file_id})


@dataclass(frozen=True, slots=True)
class SweepReport:
    claimed: list[store.Claimed] = field(default_factory=list)
    #: Discarding files whose message was lost, sent again.
    resent: list[store.Claimed] = field(default_factory=list)
    #: Retired files whose bytes were deleted after their thirty days (or kept: another file shares them).
    expired: int = 0


class FileSweep:
    """``files-sweep``: claim due files, one cleanup message each; delete bytes whose retirement is over."""

    def __init__(
        self,
        sweeper_db: Database,
        queue: Queue,
        object_store: ObjectStore,
        clock: Clock,
        *,
        resend_after: timedelta = RESEND_AFTER,
    ) -> None:
        self._db = sweeper_db
        self._queue = queue
        self._store = object_store
        self._clock = clock
        self._resend_after = resend_after

    def run_batch(self, limit: int) -> SweepReport:
        now = self._clock()

        def claim(conn: Connection) -> tuple[list[store.Claimed], list[store.Claimed]]:
            claimed = store.claim_due(conn, now, limit, SWEEP_ACTOR, self._resend_after)
            stalled = store.claim_stalled(conn, now, max(0, limit - len(claimed)), self._resend_after)
            if self._queue.transactional_send and (claimed or stalled):
                self._queue.send_batch([cleanup_message(c) for c in (*claimed, *stalled)], conn=conn)
            return claimed, stalled

        claimed, stalled = self._db.run(claim)
        if (claimed or stalled) and not self._queue.transactional_send:
            # After the commit: a crash here leaves the files discarding with their cleanup due again after
            # ``resend_after``, when a later sweep sends their messages (``claim_stalled``).
            self._queue.send_batch([cleanup_message(c) for c in (*claimed, *stalled)])
        return SweepReport(claimed, stalled, self._expire(now, limit))

    def _expire(self, now: datetime, limit: int) -> int:
        """Delete the bytes of retired files whose thirty days are over (each under its object's lock)."""

        def expire(conn: Connection) -> int:
            expired = store.claim_expired_retirements(conn, now, limit)
            for found in expired:
                store.lock_object(conn, found.tenant_id, found.object_ref)
                if store.live_sharers(conn, found.tenant_id, found.object_ref, found.file_id, now) == 0:
                    self._store.delete(parse_tenant_ref(found.object_ref, found.tenant_id))
                store.mark_bytes_deleted(conn, found.tenant_id, found.file_id, now)
            return len(expired)

        return self._db.run(expire)

    def has_work(self) -> bool:
        now = self._clock()
        return self._db.run(lambda c: store.has_due(c, now), read_only=True)


@dataclass(frozen=True, slots=True)
class CleanupReport:
    received: int
    outcomes: Counter[str]


class FileCleanup:
    """``files-cleanup``: settle one file per message (seed 004: discarding -> attached | discarded | failed)."""

    def __init__(
        self, db: Database, queue: Queue, object_store: ObjectStore, clock: Clock, retry: RetryPolicy
    ) -> None:
        self._db = db
        self._queue = queue
        self._store = object_store
        self._clock = clock
        self._retry = retry

    @property
    def queue(self) -> Queue:
        return self._queue

    def run_batch(self, max_messages: int) -> CleanupReport:
        messages = self._queue.receive(
            min(max_messages, self._queue.receive_limit), visibility_timeout=VISIBILITY_SECONDS
        )
        outcomes: Counter[str] = Counter(self.settle(message) for message in messages)
        return CleanupReport(len(messages), outcomes)

    def has_work(self) -> bool:
        return self._queue.depth().visible > 0

    def settle(self, message: Received) -> Outcome:
        body = message.json()
        tenant_id, file_id = str(body["tenant_id"]), str(body["file_id"])
        try:
            outcome = self._db.run(lambda c: self._settle(c, tenant_id, file_id), tenant_id=tenant_id)
        except Exception as error:  # every failure is retried, and the last one is recorded for an operator
            return self._failed(message, tenant_id, file_id, f"{type(error).__name__}: {error}"[:1000])
        self._queue.ack(message.handle)
        return outcome

    def _settle(self, conn: Connection, tenant_id: str, file_id: str) -> Outcome:
        now = self._clock()
        found = store.get_files(conn, tenant_id, [file_id], lock=True).get(file_id)
        if found is None or found.state != "discarding":
            return "skipped"
        if records.references(conn, tenant_id, [file_id]):
            store.move(conn, tenant_id, [file_id], "discarding", "attached", actor=CONSUMER_ACTOR, now=now)
            return "attached"
        if found.committed:
            retained = now + timedelta(days=RETIREMENT_DAYS)
            store.move(
                conn,
                tenant_id,
                [file_id],
                "discarding",
                "discarded",
                actor=CONSUMER_ACTOR,
                now=now,
                retained_until=retained,
            )
            return "retired"
        # An uncommitted copy: deleted now, unless another live file names the same object.
        store.lock_object(conn, tenant_id, found.object_ref)
        if store.live_sharers(conn, tenant_id, found.object_ref, file_id, now) == 0:
            self._store.delete(parse_tenant_ref(found.object_ref, tenant_id))
        store.mark_bytes_deleted(conn, tenant_id, file_id, now)
        store.move(conn, tenant_id, [file_id], "discarding", "discarded", actor=CONSUMER_ACTOR, now=now)
        return "deleted"

    def _failed(self, message: Received, tenant_id: str, file_id: str, reason: str) -> Outcome:
        now = self._clock()
        if message.is_final_delivery:
            self._db.run(
                lambda c: store.move(
                    c,
                    tenant_id,
                    [file_id],
                    "discarding",
                    "failed",
                    actor=CONSUMER_ACTOR,
                    now=now,
                    failure_reason=reason,
                    failed_receives=message.receive_count,
                ),
                tenant_id=tenant_id,
            )
            self._queue.dead_letter(message, CLEANUP_FAILED, detail=reason)
            return "failed"
        self._db.run(
            lambda c: store.record_failed_receive(c, tenant_id, file_id, reason), tenant_id=tenant_id
        )
        self._queue.retry_later(message.handle, self._retry.delay(message.receive_count))
        return "retried"

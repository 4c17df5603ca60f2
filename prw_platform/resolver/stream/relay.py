"""The outbox relay (AW-03, pruning excluded): publish committed outbox rows to the accepted-change queue.

One batch is one transaction as role ``resolver_relay`` (which may read the outbox and set ``published_at``, and
nothing else):

1. read unpublished rows in position order, ``FOR UPDATE SKIP LOCKED`` so several relays take disjoint rows;
2. publish them (the stored event body plus ``published_at``; message id = event id);
3. mark exactly those rows published and commit.

A crash between 2 and 3 leaves the rows unpublished and the next batch publishes them again: duplicates are
expected (if_accepted_change), and the product consumer dedupes them in its inbox by event id.

Across streams the batch takes the lowest positions first, so one stream's backlog does not starve the others;
within a stream rows go out in position order (a queue may still deliver them in any order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Connection, Database
from prw_platform.queues.port import OutgoingMessage, Queue
from prw_platform.resolver.stream import outbox


@dataclass(frozen=True, slots=True)
class RelayMessage:
    """One product.accepted-change.v1 message. tenant, catalog and epoch are the outbox row's own columns (the
    product service never trusts payload fields for scope)."""

    message_id: str
    tenant_id: str
    catalog_id: str
    history_epoch: str
    position: int
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StreamRange:
    tenant_id: str
    catalog_id: str
    history_epoch: str
    first_position: int
    last_position: int
    count: int


@dataclass(frozen=True, slots=True)
class RelayResult:
    published: int
    event_ids: tuple[str, ...]
    streams: tuple[StreamRange, ...]

    @property
    def drained(self) -> bool:
        """True when the batch found nothing to publish (all rows published, or locked by another relay)."""
        return self.published == 0


Publish = Callable[[Sequence[RelayMessage]], None]


def relay_batch(
    relay_db: Database, publish: Publish, batch_size: int = 100, *, clock: Clock = utc_now
) -> RelayResult:
    """Publish up to ``batch_size`` unpublished outbox rows and mark them published. ``publish`` must raise
    unless the queue accepted every message; then nothing is marked and the rows go out again next time."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")

    def work(conn: Connection) -> RelayResult:
        rows = outbox.lock_unpublished(conn, batch_size)
        if not rows:
            return RelayResult(0, (), ())
        published_at = clock()
        messages = [_message(row, published_at) for row in rows]
        publish(messages)
        # AW-03: mark exactly the rows this batch locked and published.
        marked = outbox.mark_published(conn, rows, published_at)
        if marked != len(messages):
            raise RuntimeError(f"marked {marked} of {len(messages)} locked outbox rows")
        return RelayResult(len(messages), tuple(m.message_id for m in messages), _ranges(messages))

    return relay_db.run(work)


def _message(row: outbox.OutboxRow, published_at: datetime) -> RelayMessage:
    body = dict(row.body)
    body["published_at"] = published_at.isoformat()
    return RelayMessage(
        message_id=row.event_id,
        tenant_id=row.tenant_id,
        catalog_id=row.catalog_id,
        history_epoch=row.history_epoch,
        position=row.position,
        body=body,
    )


def _ranges(messages: Sequence[RelayMessage]) -> tuple[StreamRange, ...]:
    by_stream: dict[tuple[str, str, str], list[int]] = {}
    for m in messages:
        by_stream.setdefault((m.tenant_id, m.catalog_id, m.history_epoch), []).append(m.position)
    return tuple(
        StreamRange(tenant, catalog, epoch, min(positions), max(positions), len(positions))
        for (tenant, catalog, epoch), positions in sorted(by_stream.items())
    )


def publish_to_queue(queue: Queue) -> Publish:
    """A ``publish`` callable sending to the accepted-change queue, message id = event id (the consumer's dedupe
    key). Both backends' ``send_batch`` raise unless every message was accepted (SQS in chunks of 10), which is
    what ``relay_batch`` needs: a partial send is published again, never marked."""

    def publish(messages: Sequence[RelayMessage]) -> None:
        queue.send_batch([OutgoingMessage(body=m.body, message_id=m.message_id) for m in messages])

    return publish


class Relay:
    """The relay service (AW-03) the stage runtime drives: ``resolver_relay`` over the outbox, the relay's end
    of the accepted-change queue, and the platform's clock."""

    def __init__(self, relay_db: Database, queue: Queue, *, clock: Clock = utc_now) -> None:
        self._db = relay_db
        self._publish = publish_to_queue(queue)
        self._clock = clock

    def run_batch(self, batch_size: int = 100) -> RelayResult:
        return relay_batch(self._db, self._publish, batch_size, clock=self._clock)

    def has_work(self) -> bool:
        """Are committed rows unpublished? One index probe (``outbox.has_unpublished``)."""
        return self._db.run(outbox.has_unpublished, read_only=True)

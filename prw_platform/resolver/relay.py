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
from datetime import UTC, datetime
from typing import Any

from prw_platform.db.database import Connection, Database
from prw_platform.queues.port import OutgoingMessage, Queue


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
Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def relay_batch(
    relay_db: Database, publish: Publish, batch_size: int = 100, *, clock: Clock = _utc_now
) -> RelayResult:
    """Publish up to ``batch_size`` unpublished outbox rows and mark them published. ``publish`` must raise
    unless the queue accepted every message; then nothing is marked and the rows go out again next time."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")

    def work(conn: Connection) -> RelayResult:
        rows = conn.execute(
            """SELECT tenant_id, catalog_id, history_epoch, position, event_id, body
               FROM resolver.outbox
               WHERE published_at IS NULL
               ORDER BY position, tenant_id, catalog_id, history_epoch
               LIMIT %s
               FOR UPDATE SKIP LOCKED""",
            (batch_size,),
        ).fetchall()
        if not rows:
            return RelayResult(0, (), ())
        published_at = clock()
        messages = [_message(row, published_at) for row in rows]
        publish(messages)
        # AW-03: mark exactly the rows this batch locked and published.
        marked = conn.execute(
            """UPDATE resolver.outbox o SET published_at = %s
               FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[]) AS m(tenant_id, catalog_id,
                   history_epoch, position)
               WHERE o.tenant_id = m.tenant_id AND o.catalog_id = m.catalog_id
                 AND o.history_epoch = m.history_epoch AND o.position = m.position
                 AND o.published_at IS NULL""",
            (
                published_at,
                [m.tenant_id for m in messages],
                [m.catalog_id for m in messages],
                [m.history_epoch for m in messages],
                [m.position for m in messages],
            ),
        ).rowcount
        if marked != len(messages):
            raise RuntimeError(f"marked {marked} of {len(messages)} locked outbox rows")
        return RelayResult(len(messages), tuple(m.message_id for m in messages), _ranges(messages))

    return relay_db.run(work)


def _message(row: dict[str, Any], published_at: datetime) -> RelayMessage:
    body = dict(row["body"])
    body["published_at"] = published_at.isoformat()
    return RelayMessage(
        message_id=str(row["event_id"]),
        tenant_id=str(row["tenant_id"]),
        catalog_id=str(row["catalog_id"]),
        history_epoch=str(row["history_epoch"]),
        position=int(row["position"]),
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

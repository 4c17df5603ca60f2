"""The product side's queue driver (AW-04): receive a batch of accepted changes (up to 400: one receive on
PostgreSQL, receives of 10 on SQS), apply the deliveries of each stream in one product transaction in receive
order, then settle each.

How a delivery is settled (if_accepted_change "Errors"):

* committed (applied, ignored_duplicate, ignored_stale_revision, ignored_old_epoch, parked) → ack, and only
  after ``apply_events`` returned, which is after its stream's transaction committed; the batch's acks go in one
  statement (``Queue.ack_batch``). A crash between the commit and the acks leaves the messages to reappear after
  the visibility timeout; the inbox then records each as a duplicate ("AW-04: ack only after commit; crash
  before ack → redelivery → inbox dedupe");
* ``DatabaseUnavailable`` → ``retry_later`` with the platform's backoff (``prw_platform.retry``), "retry
  DB_UNAVAILABLE", for the stream whose transaction failed (nothing of it committed). The rest of the batch is
  put back untried, each with its own backoff: the next one would
  spend the pool timeout against a database already known to be down, and the batch must stay within its 30 s
  budget;
* a ``RejectedDelivery`` (SCOPE_NOT_PROJECTED, SCHEMA_INVALID, UNSUPPORTED_EVENT_TYPE, POSITION_CONFLICT) →
  ``dead_letter`` with the seed's code as the reason. SCOPE_NOT_PROJECTED also logs an alert ("Others go to the
  DLQ and raise an alert"). A dead letter does not close a gap in the stream's contiguous progress.

Anything else propagates and leaves the unsettled messages to the visibility timeout: queue errors (the committed
work is safe, its redelivery is a duplicate) and role misconfiguration (``InsufficientPrivilege``, if_db: do not
retry), which no message should be dead-lettered for.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from prw_platform.db.database import Database
from prw_platform.db.errors import DatabaseUnavailable
from prw_platform.product.consumer.apply import Settlement, apply_events
from prw_platform.product.consumer.outcomes import DeliveryResult, Outcome
from prw_platform.product.errors import RejectedDelivery, SchemaInvalid, ScopeNotProjected
from prw_platform.product.events import ProductEvent, parse_delivery
from prw_platform.queues.errors import MessageBodyInvalid
from prw_platform.queues.port import Queue, Received
from prw_platform.retry import RetryPolicy

log = logging.getLogger(__name__)

#: if_accepted_change Timeouts: "Consumer per batch 30 s"; the batch's messages stay invisible that long.
BATCH_VISIBILITY_TIMEOUT_SECONDS: Final = 30

_MAX_DETAIL_LENGTH: Final = 1_000
#: The composition root passes the platform's one policy; this default serves direct callers (tests).
DEFAULT_RETRY: Final = RetryPolicy()


@dataclass(frozen=True, slots=True)
class BatchReport:
    """What one batch did with each message it received."""

    received: int = 0
    #: Committed and acknowledged, by outcome.
    applied: int = 0
    ignored_duplicate: int = 0
    ignored_stale_revision: int = 0
    ignored_old_epoch: int = 0
    #: Stored in the inbox with their dependency, then acknowledged (if_accepted_change: "stored then ack").
    parked: int = 0
    #: Parked events that the applied ones released in the same transactions.
    released: int = 0
    #: Put back for later: the database was unavailable (DB_UNAVAILABLE).
    retried: int = 0
    #: Dead-lettered, by the seed's code.
    dead_lettered: Mapping[str, int] = field(default_factory=dict)
    #: Committed, but the ack found a newer delivery (this one outlived its visibility timeout): the message comes
    #: back and is recorded as a duplicate.
    ack_superseded: int = 0

    @property
    def acknowledged(self) -> int:
        return (
            self.applied
            + self.ignored_duplicate
            + self.ignored_stale_revision
            + self.ignored_old_epoch
            + self.parked
        )

    @property
    def dead_letter_count(self) -> int:
        return sum(self.dead_lettered.values())

    @property
    def drained(self) -> bool:
        """True when the receive found nothing."""
        return self.received == 0


#: Deliveries applied per product transaction at most (one receive on PostgreSQL, receives of 10 on SQS).
DEFAULT_BATCH: Final = 400


def process_accepted_changes(
    queue: Queue,
    product_db: Database,
    max_messages: int = DEFAULT_BATCH,
    visibility_timeout: int = BATCH_VISIBILITY_TIMEOUT_SECONDS,
    *,
    wait_seconds: int = 0,
    retry: RetryPolicy = DEFAULT_RETRY,
    on_dead_letter: Callable[[Received, RejectedDelivery], None] | None = None,
) -> BatchReport:
    """Receive up to ``max_messages`` product.accepted-change.v1 messages (receives of at most the queue's
    ``receive_limit`` - 10 on SQS, one statement on PostgreSQL - until the queue has no more visible), apply them one product transaction per stream in receive order, then settle
    each (module docstring). ``on_dead_letter`` hears of every dead-lettered delivery (the gap closer)."""
    batch: list[Received] = []
    while len(batch) < max_messages:
        asked = min(queue.receive_limit, max_messages - len(batch))
        received = queue.receive(
            asked, visibility_timeout=visibility_timeout, wait_seconds=wait_seconds if not batch else 0
        )
        batch.extend(received)
        if len(received) < asked:
            break
    tally = _Tally(received=len(batch))
    streams: dict[tuple[str, str], list[tuple[Received, ProductEvent]]] = {}
    for message in batch:
        try:
            event = parse_delivery(message.json())
        except MessageBodyInvalid as invalid:
            # A bytes body is not a product.accepted-change.v1 message.
            _dead_letter(queue, message, SchemaInvalid(str(invalid)), tally, on_dead_letter)
            continue
        except RejectedDelivery as rejection:
            _dead_letter(queue, message, rejection, tally, on_dead_letter)
            continue
        streams.setdefault((event.change.tenant_id, event.change.catalog_id), []).append((message, event))
    pending = list(streams.values())
    for index, stream in enumerate(pending):
        try:
            settled = apply_events(product_db, [event for _, event in stream])
        except DatabaseUnavailable as unavailable:
            _put_back(queue, [m for s in pending[index:] for m, _ in s], unavailable, tally, retry)
            break
        _settle(queue, [m for m, _ in stream], settled, tally, on_dead_letter)
    return tally.report()


def _settle(
    queue: Queue,
    messages: Sequence[Received],
    settled: Sequence[Settlement],
    tally: _Tally,
    on_dead_letter: Callable[[Received, RejectedDelivery], None] | None,
) -> None:
    committed: list[tuple[Received, DeliveryResult]] = []
    for message, outcome in zip(messages, settled, strict=True):
        if isinstance(outcome, RejectedDelivery):
            _dead_letter(queue, message, outcome, tally, on_dead_letter)
        else:
            committed.append((message, outcome))
    # AW-04: the product transaction has committed; only now may the messages be acknowledged.
    acked = queue.ack_batch([message.handle for message, _ in committed])
    for (message, result), ok in zip(committed, acked, strict=True):
        if ok:
            tally.outcomes[result.outcome] += 1
            tally.released += len(result.released)
        else:
            tally.ack_superseded += 1
            log.warning(
                "accepted change %s committed (%s) but its delivery was superseded before the ack; "
                "the redelivery will be a duplicate",
                message.message_id,
                result.outcome,
            )


def _dead_letter(
    queue: Queue,
    message: Received,
    rejection: RejectedDelivery,
    tally: _Tally,
    on_dead_letter: Callable[[Received, RejectedDelivery], None] | None = None,
) -> None:
    detail = str(rejection)[:_MAX_DETAIL_LENGTH] or None
    if isinstance(rejection, ScopeNotProjected):
        # if_accepted_change Authorization: an unknown (tenant, catalog) pair goes to the DLQ "and raise[s] an
        # alert": a relay or binding is pointed at the wrong product service.
        log.error(
            "ALERT %s: accepted change %s dead-lettered: %s",
            rejection.code,
            rejection.event_id or message.message_id,
            detail,
        )
    else:
        log.warning("accepted change %s dead-lettered %s: %s", message.message_id, rejection.code, detail)
    if queue.dead_letter(message, rejection.code, detail=detail):
        tally.dead_lettered[rejection.code] += 1
        if on_dead_letter is not None:
            on_dead_letter(message, rejection)


def _put_back(
    queue: Queue,
    unsettled: Sequence[Received],
    unavailable: DatabaseUnavailable,
    tally: _Tally,
    retry: RetryPolicy,
) -> None:
    log.warning(
        "product database unavailable (%s); %d accepted change(s) put back for a retry: %s",
        unavailable.code,
        len(unsettled),
        unavailable,
    )
    for message in unsettled:
        if queue.retry_later(message.handle, retry.delay(message.receive_count)):
            tally.retried += 1


@dataclass
class _Tally:
    received: int
    outcomes: Counter[Outcome] = field(default_factory=Counter)
    released: int = 0
    retried: int = 0
    dead_lettered: Counter[str] = field(default_factory=Counter)
    ack_superseded: int = 0

    def report(self) -> BatchReport:
        return BatchReport(
            received=self.received,
            applied=self.outcomes[Outcome.APPLIED],
            ignored_duplicate=self.outcomes[Outcome.IGNORED_DUPLICATE],
            ignored_stale_revision=self.outcomes[Outcome.IGNORED_STALE_REVISION],
            ignored_old_epoch=self.outcomes[Outcome.IGNORED_OLD_EPOCH],
            parked=self.outcomes[Outcome.PARKED],
            released=self.released,
            retried=self.retried,
            dead_lettered=dict(self.dead_lettered),
            ack_superseded=self.ack_superseded,
        )


class ProductApply:
    """The product consumer service the stage runtime drives (AW-04): the consumer's end of the accepted-change
    queue, ``product_app``, and the platform's retry policy."""

    def __init__(
        self,
        queue: Queue,
        product_db: Database,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        on_dead_letter: Callable[[str, str], None] | None = None,
    ) -> None:
        self.queue = queue
        self._db = product_db
        self._retry = retry
        self._on_dead_letter = on_dead_letter

    def run_batch(self, max_messages: int = DEFAULT_BATCH) -> BatchReport:
        return process_accepted_changes(
            self.queue, self._db, max_messages, retry=self._retry, on_dead_letter=self._dead_lettered
        )

    def _dead_lettered(self, message: Received, rejection: RejectedDelivery) -> None:
        """if_accepted_change: "A DLQ entry [...] does not close a gap": the gap closer fetches the stream from
        the export stream instead (when the envelope names one)."""
        if self._on_dead_letter is None or isinstance(rejection, ScopeNotProjected):
            return
        body = message.body
        if isinstance(body, dict):
            tenant, catalog = body.get("tenant_id"), body.get("catalog_id")
            if isinstance(tenant, str) and isinstance(catalog, str):
                self._on_dead_letter(tenant, catalog)

    def has_work(self) -> bool:
        return self.queue.depth().visible > 0

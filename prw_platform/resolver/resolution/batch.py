"""The batch driver: receive resolution jobs, handle each, then settle its delivery (ADR-009, if_resolution_job).

A delivery is acked only after ``handle_resolution_job`` returned, i.e. after its transaction committed
("ack only after their DB transaction commits"). Retryable failures go back with ``retry_later`` and a backoff
delay; the ``max_receives``-th delivery is the last one (the queue would dead-letter the message at the next
receive without the consumer seeing it), so its retryable failure is dead-lettered by the consumer itself with
MAX_RECEIVES_EXCEEDED and the receipt fails with it. Terminal ones go to the DLQ at once with the seed's code. A crash anywhere before the
ack leaves the message to reappear after its visibility timeout; the inbox makes that second delivery an ignored
duplicate.

One call takes one stage's queue (``resolution-jobs`` for extract, ``resolution-normalize``,
``resolution-identity``); the message's ``stage`` says what its handling does. The Dagster sensors' runs and
``prw worker resolution|normalize|identity`` all call ``process_resolution_jobs``.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

from prw_platform.queues import MAX_MESSAGES_PER_RECEIVE, Queue, QueueError, Received
from prw_platform.resolver.resolution.consumer import handle_resolution_job
from prw_platform.resolver.resolution.outcomes import SCHEMA_INVALID, Outcome
from prw_platform.resolver.resolution.services import ResolutionServices

log = logging.getLogger(__name__)

#: The queue port keeps a dead-letter detail to at most 1,000 characters.
_MAX_DETAIL = 1_000


@dataclass(frozen=True, slots=True)
class BatchReport:
    """One call of ``process_resolution_jobs``: the outcome of each delivery and how it was settled."""

    outcomes: tuple[Outcome, ...] = ()
    acked: int = 0
    retried: int = 0
    dead_lettered: int = 0
    #: Deliveries the queue did not settle: a superseded handle (False) or an unavailable queue. The message
    #: comes back after its visibility timeout and the inbox absorbs it.
    unsettled: int = 0

    @property
    def received(self) -> int:
        return len(self.outcomes)

    def count(self, status: str) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == status)

    @property
    def statuses(self) -> dict[str, int]:
        return dict(Counter(outcome.status for outcome in self.outcomes))


def process_resolution_jobs(
    queue: Queue,
    services: ResolutionServices,
    *,
    max_messages: int = MAX_MESSAGES_PER_RECEIVE,
    visibility_timeout: int | None = None,
    wait_seconds: int = 0,
) -> BatchReport:
    """Receive up to ``max_messages`` jobs, handle them one by one, settle each delivery after its handling."""
    deliveries = queue.receive(max_messages, visibility_timeout=visibility_timeout, wait_seconds=wait_seconds)
    outcomes: list[Outcome] = []
    settled: Counter[str] = Counter()
    for delivery in deliveries:
        outcome = _handle(services, delivery, final_attempt=delivery.is_final_delivery)
        outcomes.append(outcome)
        settled[_settle(queue, services, delivery, outcome)] += 1
    return BatchReport(
        outcomes=tuple(outcomes),
        acked=settled["ack"],
        retried=settled["retry"],
        dead_lettered=settled["dead_letter"],
        unsettled=settled["unsettled"],
    )


def _handle(services: ResolutionServices, delivery: Received, *, final_attempt: bool) -> Outcome:
    body = delivery.body
    if not isinstance(body, dict):
        return Outcome.dead_letter(SCHEMA_INVALID, "the message body is not a JSON object", None)
    if body.get("job_id") != delivery.message_id:
        # The inbox dedupes by the job id in the body (intake sends it as the message id too).
        log.warning("message %s carries job %s", delivery.message_id, body.get("job_id"))
    return handle_resolution_job(services, body, final_attempt=final_attempt)


def _settle(queue: Queue, services: ResolutionServices, delivery: Received, outcome: Outcome) -> str:
    """Apply the outcome to this delivery; the disposition, or ``unsettled`` when the queue did not take it."""
    disposition = outcome.disposition
    try:
        if disposition == "ack":
            done = queue.ack(delivery.handle)
        elif disposition == "retry":
            done = queue.retry_later(delivery.handle, services.retry.delay(delivery.receive_count))
        else:
            reason = outcome.reason or SCHEMA_INVALID
            done = queue.dead_letter(delivery, reason, detail=(outcome.detail or "")[:_MAX_DETAIL] or None)
    except QueueError as error:
        log.warning("could not %s message %s: %s", disposition, delivery.message_id, error)
        return "unsettled"
    if not done:
        log.warning("message %s: the delivery was superseded before %s", delivery.message_id, disposition)
        return "unsettled"
    return disposition


class ResolutionConsumer:
    """One resolution stage as the stage runtime drives it: that stage's queue and the consumer's dependencies
    (``ResolutionServices``), both from the composition root (``Platform.resolution_stage``)."""

    def __init__(self, queue: Queue, services: ResolutionServices) -> None:
        self.queue = queue
        self.services = services

    def run_batch(self, max_messages: int = MAX_MESSAGES_PER_RECEIVE) -> BatchReport:
        """One receive of at most ``max_messages`` jobs, each handled and settled (module docstring)."""
        return process_resolution_jobs(self.queue, self.services, max_messages=max_messages)

    def has_work(self) -> bool:
        """Visible messages on this stage's queue (one indexed count on PostgreSQL, one attribute read on
        SQS)."""
        return self.queue.depth().visible > 0

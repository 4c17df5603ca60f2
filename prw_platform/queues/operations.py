"""What an operator does with the dead-letter queues: a summary per queue, the entries of one, one entry, and the re-drive of some or all of them.

Each queue is opened with the role of its consumer (the one that dead-letters its messages, ADR-009), so the
operations act exactly as that consumer may. A re-driven entry goes back to its queue as a new message with the
same body; its consumer dedupes by its inbox (a resolution job by its job id), so re-driving something that was
in fact processed changes nothing. Accepted changes are never re-driven: the relay alone sends them
(if_accepted_change), and gap closure re-fetches a dead-lettered position from the export stream; an operator
discards such an entry once it has been looked at.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from prw_platform.queues.port import DeadLetter, Queue

#: Entries read per queue for a summary's reasons and oldest entry (and the most ``redrive_all`` moves at once).
MAX_ENTRIES = 1000


class UnknownQueue(LookupError):
    """Not one of the platform's queues with a dead-letter queue an operator may act on."""


class UnknownDeadLetter(LookupError):
    """No such entry in the queue's dead-letter queue (already re-driven, or never there)."""


class RedriveRefused(ValueError):
    """This queue's entries are not re-driven (its consumer may not send to it): discard them instead."""


@dataclass(frozen=True, slots=True)
class DeadLetterSummary:
    queue: str
    #: Entries in its dead-letter queue (exact on PostgreSQL, approximate on SQS).
    dead: int
    visible: int
    in_flight: int
    #: Entries per reason code (MAX_RECEIVES_EXCEEDED, SCHEMA_INVALID, ...), of the first MAX_ENTRIES.
    reasons: Mapping[str, int]
    oldest_dead_lettered_at: datetime | None


class DeadLetterOperations:
    """Over the platform's queues by name (``Platform.dead_letters``)."""

    def __init__(self, queues: Mapping[str, Queue], *, not_redriven: Mapping[str, str] | None = None) -> None:
        """``not_redriven``: queue name -> why its entries are discarded, never re-driven."""
        self._queues = dict(queues)
        self._not_redriven = dict(not_redriven or {})

    @property
    def queue_names(self) -> tuple[str, ...]:
        return tuple(sorted(self._queues))

    def summaries(self) -> list[DeadLetterSummary]:
        return [self.summary(name) for name in self.queue_names]

    def summary(self, queue: str) -> DeadLetterSummary:
        depth = self._queue(queue).depth()
        entries = self.entries(queue, MAX_ENTRIES) if depth.dead else []
        stamped = [e.dead_lettered_at for e in entries if e.dead_lettered_at is not None]
        return DeadLetterSummary(
            queue=queue,
            dead=depth.dead,
            visible=depth.visible,
            in_flight=depth.not_visible,
            reasons=dict(Counter(e.reason for e in entries).most_common()),
            oldest_dead_lettered_at=min(stamped, default=None),
        )

    def entries(self, queue: str, limit: int = 100) -> list[DeadLetter]:
        return self._queue(queue).dead_letters(limit)

    def entry(self, queue: str, dead_letter_id: str) -> DeadLetter:
        for entry in self.entries(queue, MAX_ENTRIES):
            if entry.dead_letter_id == dead_letter_id:
                return entry
        raise UnknownDeadLetter(f"no dead letter {dead_letter_id!r} in {queue}")

    def redrive(self, queue: str, dead_letter_ids: Sequence[str]) -> int:
        """Move these entries back to ``queue`` as new messages; how many moved (an id already gone moves
        nothing)."""
        found = self._queue(queue)
        if queue in self._not_redriven:
            raise RedriveRefused(f"{queue} entries are not re-driven: {self._not_redriven[queue]}")
        return found.redrive(list(dead_letter_ids)) if dead_letter_ids else 0

    def redrive_all(self, queue: str) -> int:
        return self.redrive(queue, self._all_ids(queue))

    def discard(self, queue: str, dead_letter_ids: Sequence[str]) -> int:
        """Delete these entries; how many went (an id already gone deletes nothing)."""
        return self._queue(queue).discard(list(dead_letter_ids)) if dead_letter_ids else 0

    def discard_all(self, queue: str) -> int:
        return self.discard(queue, self._all_ids(queue))

    def _all_ids(self, queue: str) -> list[str]:
        return [e.dead_letter_id for e in self.entries(queue, MAX_ENTRIES)]

    def _queue(self, name: str) -> Queue:
        try:
            return self._queues[name]
        except KeyError:
            known = ", ".join(self.queue_names)
            raise UnknownQueue(f"no queue {name!r} with a dead-letter queue (queues: {known})") from None

"""How one delivery was settled (if_accepted_change "Errors": ignored, parked, applied)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    APPLIED = "applied"
    IGNORED_DUPLICATE = "ignored_duplicate"
    IGNORED_STALE_REVISION = "ignored_stale_revision"
    PARKED = "parked"
    IGNORED_OLD_EPOCH = "ignored_old_epoch"


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    """Returned after the product transaction committed: the caller acknowledges the message now (AW-04)."""

    event_id: str
    outcome: Outcome
    #: Parked events this delivery released, in the order they were settled (applied or stale).
    released: tuple[str, ...] = ()
    #: The stream's greatest contiguous processed position after the commit (None for an old-epoch delivery,
    #: which never touches the current epoch's progress).
    contiguous_position: int | None = None

"""STATE-COM-CAT-004 as data: the eight states of a managed catalog file and every transition of seed 004.

The same table is a migration's reference data (``resolver.catalog_file_transition``, 0016_catalog_files), where a
trigger refuses every state change that is not one of its rows; ``tests/integration/files`` checks that the two
agree. Code asks ``check_transition`` first, so a refused change is a clear ``InvalidFileTransition`` before it is
the database's check violation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

from prw_platform.resolver.files.errors import InvalidFileTransition

FileState = Literal[
    "preparing", "ready", "attached", "detached", "abandoned", "discarding", "discarded", "failed"
]
STATES: Final[tuple[FileState, ...]] = get_args(FileState)

#: Seed 004 "states": what each state means.
MEANINGS: Final[dict[FileState, str]] = {
    "preparing": "The save has started copying an asset before opening its record transaction.",
    "ready": "The copied file is available for attachment by the pending save.",
    "attached": "A saved record retains the permanent asset reference.",
    "detached": "A committed change or deletion has released the asset reference.",
    "abandoned": "Preparation produced a file but the parent save did not commit.",
    "discarding": "Cleanup has claimed the asset and submitted work to its queue.",
    "discarded": "An unreferenced asset has been deleted or retired with thirty-day retention.",
    "failed": "Cleanup exhausted its delivery attempts and retains a failure reason for operator review.",
}


@dataclass(frozen=True, slots=True)
class Transition:
    from_state: FileState
    to_state: FileState
    trigger: str
    guard: str
    side_effects: str
    actor: str


@dataclass(frozen=True, slots=True)
class InvalidTransition:
    from_state: FileState
    to_state: FileState
    why: str


#: Seed 004 "transitions", word for word, plus the operator's retry of a failed cleanup.
TRANSITIONS: Final[tuple[Transition, ...]] = (
    Transition(
        "preparing",
        "ready",
        "Asset copying finishes successfully.",
        "The asset source must be readable by the pipeline.",
        "The pending record receives the prepared permanent asset reference.",
        "The saving request",
    ),
    Transition(
        "ready",
        "attached",
        "The parent save commits the prepared reference.",
        "The save must have prepared the reference it commits.",
        "",
        "The saving request",
    ),
    Transition(
        "ready",
        "abandoned",
        "The parent save fails after copying.",
        "No additional condition applies.",
        "",
        "The saving request",
    ),
    Transition(
        "attached",
        "detached",
        "A saved change or removal releases the reference.",
        "A retained unchanged picture bypasses detachment and keeps its existing reference.",
        "",
        "The saving or deleting request",
    ),
    Transition(
        "detached",
        "discarding",
        "The scheduled sweep claims a due released file.",
        "The cleanup due instant must have arrived.",
        "Cleanup publishes an individual work message for the file.",
        "Scheduled asset sweep",
    ),
    Transition(
        "abandoned",
        "discarding",
        "The scheduled sweep claims a due abandoned copy.",
        "The cleanup due instant must have arrived.",
        "Cleanup publishes an individual work message for the file.",
        "Scheduled asset sweep",
    ),
    Transition(
        "discarding",
        "discarded",
        "Queue processing finishes cleanup.",
        "The workspace-scoped owner check must find no retained reference.",
        "Released assets receive thirty-day retirement; uncommitted copies are deleted.",
        "Cleanup queue consumer",
    ),
    Transition(
        "discarding",
        "attached",
        "Settlement finds that a saved record still retains the reference.",
        "A saved owner record must still name the asset.",
        "The referenced asset is retained.",
        "Cleanup queue consumer",
    ),
    Transition(
        "discarding",
        "failed",
        "The final queue delivery cannot complete cleanup.",
        "The receipt must be the final permitted retry after earlier failures.",
        "The failed row records the reason and the queue sends exhausted work for operator review.",
        "Cleanup queue consumer",
    ),
    Transition(
        "failed",
        "discarding",
        "An operator retries a failed cleanup.",
        "The file must be failed.",
        "Cleanup publishes an individual work message for the file.",
        "Operator (operator_admin)",
    ),
)

#: Seed 004 "invalid": the pairs the seed names as impossible, with its reason.
INVALID: Final[tuple[InvalidTransition, ...]] = (
    InvalidTransition(
        "discarded",
        "attached",
        "A retired or deleted asset requires fresh preparation before another attachment.",
    ),
    InvalidTransition(
        "preparing",
        "attached",
        "The parent transaction can attach only a successfully prepared reference.",
    ),
)

_ALLOWED: Final = {(t.from_state, t.to_state): t for t in TRANSITIONS}
_WHY: Final = {(t.from_state, t.to_state): t.why for t in INVALID}


def transition(from_state: FileState, to_state: FileState) -> Transition:
    """The seed's transition from ``from_state`` to ``to_state``, or ``InvalidFileTransition`` saying why not."""
    found = _ALLOWED.get((from_state, to_state))
    if found is None:
        why = _WHY.get((from_state, to_state))
        raise InvalidFileTransition(from_state, to_state, why)
    return found


def check_transition(from_state: FileState, to_state: FileState) -> None:
    transition(from_state, to_state)


#: The cleanup due instant: how long a released or abandoned file waits before the sweep may claim it.
CLEANUP_DELAY_SECONDS: Final = 3600
#: "Released assets receive thirty-day retirement".
RETIREMENT_DAYS: Final = 30
#: "individual failed messages retry up to five receives".
MAX_RECEIVES: Final = 5

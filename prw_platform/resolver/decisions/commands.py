"""Decision commands (AW-01) and their result, as small frozen values.

Automatic rules (``rule:<name>@<version>`` actors) issue ``CreateItemAndMap``, ``MapListing`` and
``OpenReviewCase``; they must carry an idempotency key derived from the resolution job, so a redelivered job does
not decide twice. A reviewer issues ``DecideCase`` against the case revision they saw (INV-04).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from prw_platform.contracts import StreamKey
from prw_platform.plugins.types import Availability, NormalizedAttribute
from prw_platform.resolver.decisions.identifiers import identifier_keys
from prw_platform.resolver.decisions.offer_choices import OfferChoice

_ACTOR = re.compile(r"^(rule|reviewer|operator):\S+$")


@dataclass(frozen=True, slots=True)
class ListingObservation:
    """What one capture says about a merchant listing. The natural key is (source, native record id), or
    (source, URL) when the source has no record ids."""

    source_id: str
    observed_at: datetime
    capture_id: str
    url: str | None = None
    native_record_id: str | None = None
    title: str | None = None
    price: Decimal | None = None
    currency: str | None = None
    availability: Availability | None = None

    def __post_init__(self) -> None:
        if not (self.native_record_id or self.url):
            raise ValueError("a listing observation needs a native record id or a URL (its natural key)")
        if self.observed_at.tzinfo is None:
            raise ValueError("observed_at must be timezone-aware")

    @property
    def natural_key(self) -> str:
        return f"rec:{self.native_record_id}" if self.native_record_id else f"url:{self.url}"


@dataclass(frozen=True, slots=True)
class ItemFacts:
    """A new catalog item. ``attributes`` are already normalized by ``profile`` and name the definition version
    each value conforms to (INV-02)."""

    profile: str
    title: str | None = None
    brand: str | None = None
    gtin: str | None = None
    mpn: str | None = None
    attributes: tuple[NormalizedAttribute, ...] = ()
    #: A reviewer may name the new item (if_review_decision ``create_item.id``); rules let the resolver choose.
    item_id: str | None = None


def _check_actor(actor: str, *, automatic: bool) -> None:
    if not _ACTOR.match(actor):
        raise ValueError(f"actor {actor!r} is not rule:<name>@<version>, reviewer:<id> or operator:<id>")
    if automatic and not actor.startswith("rule:"):
        raise ValueError(f"an automatic decision is made by a rule, not {actor!r}")


def _check_automatic(actor: str, idempotency_key: str) -> None:
    _check_actor(actor, automatic=True)
    if not idempotency_key:
        raise ValueError("an automatic decision carries a deterministic idempotency key")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A ranked candidate item for a review case."""

    item_id: str
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class CreateItemAndMap:
    """No item matched the listing's strong identifiers and the profile's required identifiers are present."""

    item: ItemFacts
    listing: ListingObservation
    actor: str
    rationale: str
    idempotency_key: str
    evidence: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_automatic(self.actor, self.idempotency_key)
        if not identifier_keys(self.item.gtin, self.item.brand, self.item.mpn):
            raise ValueError("a rule creates an item only with a strong identifier (GTIN, or brand + MPN)")


@dataclass(frozen=True, slots=True)
class MapListing:
    """A strong identifier of the listing matched ``item_id``."""

    listing: ListingObservation
    item_id: str
    actor: str
    rationale: str
    idempotency_key: str
    evidence: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_automatic(self.actor, self.idempotency_key)


@dataclass(frozen=True, slots=True)
class OpenReviewCase:
    """The listing cannot be resolved automatically: record it and ask a human (status awaiting_human)."""

    listing: ListingObservation
    kind: str
    actor: str
    rationale: str
    idempotency_key: str
    candidates: tuple[Candidate, ...] = ()
    #: What a reviewer needs to see (claims, normalization problems, why no rule applied); JSON values.
    case_evidence: Mapping[str, Any] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_automatic(self.actor, self.idempotency_key)


@dataclass(frozen=True, slots=True)
class DecideCase:
    """A reviewer's decision on a review case, made against ``expected_revision`` (INV-04, if_review_decision).

    ``map``: map the case's listing to ``item_id``; ``create_item``: create ``item`` and map the listing to it;
    ``dismiss``: close the case without a mapping. ``offer``: the listing's offer values the reviewer chose on an
    ``offer_uncertain`` case (written on the case's listing, recorded with the decision)."""

    case_id: str
    expected_revision: int
    action: Literal["map", "create_item", "dismiss"]
    actor: str
    rationale: str
    item_id: str | None = None
    item: ItemFacts | None = None
    idempotency_key: str | None = None
    evidence: tuple[str, ...] = ()
    #: if_review_decision's own action (accept, correct, create_item, map_to, reject), recorded with the decision.
    review_action: str | None = None
    #: ``create_item.family``: recorded with the decision (items have no family column yet).
    family: str | None = None
    #: ``corrections`` as the reviewer gave them, recorded with the decision.
    corrections: Mapping[str, Any] | None = None
    offer: OfferChoice | None = None

    def __post_init__(self) -> None:
        _check_actor(self.actor, automatic=False)
        if self.action == "map" and not self.item_id:
            raise ValueError("a map decision names the target item")
        if self.action == "create_item" and self.item is None:
            raise ValueError("a create_item decision carries the new item's facts")


Command = CreateItemAndMap | MapListing | OpenReviewCase | DecideCase


@dataclass(frozen=True, slots=True)
class EventRef:
    """One outbox event a decision committed."""

    event_id: str
    position: int
    type: str
    aggregate_type: str
    aggregate_id: str
    revision: int


@dataclass(frozen=True, slots=True)
class DecisionResult:
    decision_id: str
    action: str
    stream: StreamKey
    events: tuple[EventRef, ...]
    item_id: str | None = None
    listing_id: str | None = None
    case_id: str | None = None
    case_revision: int | None = None
    #: True when the idempotency key had already decided: this is the existing result, nothing was written.
    replayed: bool = False
    created_at: datetime | None = field(default=None, compare=False)

    @property
    def positions(self) -> tuple[int, ...]:
        return tuple(e.position for e in self.events)

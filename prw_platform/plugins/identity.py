"""Identity rules: what a rule plugin sees and what it may answer.

A rule decides whether a listing that the platform could not settle on its own belongs to one of the catalog's
items. It sees the listing's identifiers and title and the items the platform found for it: those its strong
identifiers name (``matched_on`` set) and the ranked review-case candidates (score and reason). It answers with
an ``IdentityVerdict`` naming one of those items, or None to leave the listing to a reviewer. A rule reads no
database and never creates an item; the decision it leads to is recorded with the actor ``rule:<name>@<version>``.

Rules are pinned like profiles: ``<name>@N`` (``strong_identifier_match@1``); the platform runs the newest
installed version of each rule, in name order, and the first verdict wins.

A rule may also *score* (``ScoringIdentityRule``): give every offered candidate a match probability with the
evidence behind it. The platform then orders the review-case candidates by that probability (what a reviewer
sees first) and records the probability and evidence with the decision; ``decide`` still answers alone whether
one candidate is sure enough to map automatically. When several scoring rules are installed, the first in rule
order scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class IdentityCandidate:
    """An item the platform found for the listing."""

    item_id: str
    score: float
    reason: str
    title: str | None = None
    brand: str | None = None
    #: The listing's identifiers that name this item ("gtin", "brand_mpn"); empty for a ranked candidate.
    matched_on: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IdentityEvidence:
    """The listing as identity sees it, and the items found for it (best first)."""

    title: str | None
    brand: str | None
    gtin: str | None
    mpn: str | None
    candidates: tuple[IdentityCandidate, ...]
    #: The catalog's generation of the rule being asked (its fitted parameters, as the rule wrote them when it
    #: calibrated); None: the rule's own default. The platform passes each rule its own.
    generation: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class IdentityVerdict:
    """Map the listing to ``item_id`` (one of the evidence's candidates), for the reason given."""

    item_id: str
    rationale: str
    #: A scoring rule's match probability for this candidate (None: the rule does not score).
    probability: float | None = None
    #: What the probability rests on, one finding per entry ("model number sx110is in both titles").
    evidence: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class CandidateScore:
    """A scoring rule's view of one candidate: the probability that it is the listing's product."""

    item_id: str
    probability: float
    evidence: tuple[str, ...] = ()


@runtime_checkable
class IdentityRule(Protocol):
    """An automatic identity rule, pinned as ``name@N``."""

    name: str
    version: str

    def decide(self, evidence: IdentityEvidence) -> IdentityVerdict | None:
        """A verdict on one of ``evidence.candidates``, or None (a reviewer decides)."""
        ...


@runtime_checkable
class ScoringIdentityRule(IdentityRule, Protocol):
    """An identity rule that also gives every candidate a match probability."""

    def score(self, evidence: IdentityEvidence) -> tuple[CandidateScore, ...]:
        """One score per candidate of ``evidence.candidates`` (any order; a candidate left out scores 0)."""
        ...


@dataclass(frozen=True, slots=True)
class LabelledListing:
    """A listing reviewers decided: the candidates the platform offers for it now, and which of them the
    reviewer chose (``matches``) and passed over (``non_matches``, shown and not chosen)."""

    evidence: IdentityEvidence
    matches: frozenset[str]
    non_matches: frozenset[str]


@dataclass(frozen=True, slots=True)
class BandEstimate:
    """What an auto-map band would do on the labels, measured on held-out folds."""

    probability: float
    margin: float
    mapped: int
    right: int
    wrong: int
    precision: float
    #: One-sided 95% lower confidence bound of the precision.
    precision_lower_bound: float
    #: Labelled matches mapped right / labelled matches.
    coverage: float


@dataclass(frozen=True, slots=True)
class Calibration:
    """A generation fitted on a catalog's labels: the document the rule reads back through
    ``IdentityEvidence.generation``, the curve of bands, and the band chosen for the promise (None: none meets it)."""

    document: Mapping[str, Any]
    listings: int
    matches: int
    pairs: int
    curve: tuple[BandEstimate, ...]
    chosen: BandEstimate | None


class NotEnoughLabels(ValueError):
    """Too few labelled listings to fit and check a generation."""

    def __init__(self, message: str, *, have: int, need: int) -> None:
        super().__init__(message)
        self.have = have
        self.need = need


@runtime_checkable
class CalibratingIdentityRule(ScoringIdentityRule, Protocol):
    """A scoring rule that can fit a generation of itself on reviewers' labels."""

    def calibrate(self, labelled: Sequence[LabelledListing], *, promise: float, number: int) -> Calibration:
        """Fit on ``labelled``, estimate each band on held-out folds, choose the band of most coverage whose
        measured precision meets ``promise``. Raises ``NotEnoughLabels`` naming how many it needs."""
        ...

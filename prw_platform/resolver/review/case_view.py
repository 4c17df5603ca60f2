"""One review case as a reviewer reads it (if_review_read ``GET /v1/review/{case_id}``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prw_platform.resolver.assist.store import Advice, Proposal
from prw_platform.resolver.decisions.cases import CaseRow
from prw_platform.resolver.decisions.facts import ItemCard
from prw_platform.resolver.decisions.records import DecisionRecord
from prw_platform.resolver.intake.artifacts import StoredArtifact
from prw_platform.resolver.review.evidence import EvidenceLink, EvidenceLinks
from prw_platform.resolver.review.excerpt import Excerpt


@dataclass(frozen=True, slots=True)
class Candidate:
    rank: int
    item_id: str
    score: float
    reason: str | None
    #: What the catalog says of the item now (None: the item is gone, which a decision would refuse, INV-07).
    item: ItemCard | None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    decision_id: str
    action: str
    review_action: str | None
    actor: str
    rationale: str
    case_revision: int | None
    item_id: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class CaseView:
    case: CaseRow
    #: The adapter pin (``name@version``) that extracted the claims; None when none ran.
    adapter: str | None
    profile: str | None
    reason: str | None
    stage_outcome: str | None
    identifiers: dict[str, Any]
    claims: list[dict[str, Any]]
    attributes: list[dict[str, Any]]
    problems: list[dict[str, Any]]
    error: dict[str, Any] | None
    candidates: tuple[Candidate, ...]
    history: tuple[HistoryEntry, ...]
    artifacts: tuple[StoredArtifact, ...]
    excerpt: Excerpt | None = None
    evidence: tuple[EvidenceLink, ...] = ()
    #: What a model proposed for the capture and advised on the case (if_llm_extract, if_llm_review): advisory
    #: annotations beside the evidence, never part of it (DEC-02).
    proposals: tuple[Proposal, ...] = ()
    advice: tuple[Advice, ...] = ()

    def with_evidence(self, tenant_id: str, links: EvidenceLinks) -> CaseView:
        """Read after the transaction: the object store is not the database."""
        return dataclasses.replace(
            self,
            excerpt=links.excerpt(tenant_id, self.artifacts),
            evidence=tuple(links.issue(tenant_id, artifact) for artifact in self.artifacts),
        )


def case_view(
    row: CaseRow,
    items: dict[str, ItemCard],
    decisions: list[DecisionRecord],
    artifacts: tuple[StoredArtifact, ...],
    proposals: tuple[Proposal, ...] = (),
    advice: tuple[Advice, ...] = (),
) -> CaseView:
    evidence = row.evidence
    return CaseView(
        case=row,
        adapter=_text(evidence.get("adapter")),
        profile=_text(evidence.get("profile")),
        reason=_text(evidence.get("reason")),
        stage_outcome=_text(evidence.get("stage_outcome")),
        identifiers=_mapping(evidence.get("identifiers")),
        claims=_documents(evidence.get("claims")),
        attributes=_documents(evidence.get("attributes")),
        problems=_documents(evidence.get("problems")),
        error=evidence.get("error") if isinstance(evidence.get("error"), dict) else None,
        candidates=_ranked(row.candidates, items),
        history=tuple(_entry(decision) for decision in decisions),
        artifacts=artifacts,
        proposals=proposals,
        advice=advice,
    )


def _ranked(candidates: list[dict[str, Any]], items: dict[str, ItemCard]) -> tuple[Candidate, ...]:
    ordered = sorted(candidates, key=lambda c: (-float(c.get("score") or 0), str(c.get("item_id"))))
    return tuple(
        Candidate(
            rank=rank,
            item_id=str(c.get("item_id")),
            score=float(c.get("score") or 0),
            reason=_text(c.get("reason")),
            item=items.get(str(c.get("item_id"))),
        )
        for rank, c in enumerate(ordered, start=1)
    )


def _entry(decision: DecisionRecord) -> HistoryEntry:
    return HistoryEntry(
        decision_id=decision.decision_id,
        action=decision.action,
        review_action=_text(decision.details.get("review_action")),
        actor=decision.actor,
        rationale=decision.rationale,
        case_revision=decision.case_revision,
        item_id=decision.item_id,
        created_at=decision.created_at,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _documents(value: Any) -> list[dict[str, Any]]:
    return [dict(v) for v in value] if isinstance(value, list) else []

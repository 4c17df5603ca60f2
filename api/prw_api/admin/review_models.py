"""Response bodies of the review read (if_review_read): the queue page and one case."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from prw_platform.services import (
    Candidate,
    CaseSummary,
    CaseView,
    EvidenceLink,
    HistoryEntry,
    LlmAdvice,
    LlmProposal,
    ReviewPage,
)

CaseStatus = Literal["awaiting_human", "decided", "dismissed"]


class ReviewCaseSummary(BaseModel):
    case_id: str
    catalog_id: str
    kind: str
    status: str
    #: The revision a decision must name as ``expected_revision``.
    revision: int
    source_id: str
    capture_id: str
    listing_id: str
    title: str | None
    candidates: int
    top_score: float | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, case: CaseSummary) -> ReviewCaseSummary:
        return cls(**{name: getattr(case, name) for name in cls.model_fields})


class ReviewCountsBody(BaseModel):
    """Over every case matching the filters, not only this page."""

    total: int
    status: dict[str, int]
    kind: dict[str, int]


class ReviewPageBody(BaseModel):
    cases: list[ReviewCaseSummary]
    #: Pass as ``cursor`` with the same filters for the next page; null on the last page.
    next_cursor: str | None
    counts: ReviewCountsBody

    @classmethod
    def of(cls, page: ReviewPage) -> ReviewPageBody:
        counts = page.counts
        return cls(
            cases=[ReviewCaseSummary.of(case) for case in page.cases],
            next_cursor=page.next_cursor,
            counts=ReviewCountsBody(total=counts.total, status=counts.status, kind=counts.kind),
        )


class ClaimBody(BaseModel):
    attribute: str
    value: Any
    evidence_locator: str | None
    #: The adapter pin that extracted the claim.
    adapter: str | None


class AttributeBody(BaseModel):
    key: str
    value: Any
    unit: str | None = None
    definition_version: int | None = None
    evidence_locators: list[str] = []


class ProblemBody(BaseModel):
    attribute: str | None = None
    code: str | None = None
    message: str | None = None
    raw_value: Any = None


class CandidateItemBody(BaseModel):
    status: str
    title: str | None
    brand: str | None
    identifiers: dict[str, Any]


class CandidateBody(BaseModel):
    rank: int
    item_id: str
    score: float
    reason: str | None
    #: The item as the catalog has it now; null when it no longer exists.
    item: CandidateItemBody | None

    @classmethod
    def of(cls, candidate: Candidate) -> CandidateBody:
        card = candidate.item
        item = (
            CandidateItemBody(
                status=card.status, title=card.title, brand=card.brand, identifiers=card.identifiers
            )
            if card
            else None
        )
        return cls(
            rank=candidate.rank,
            item_id=candidate.item_id,
            score=candidate.score,
            reason=candidate.reason,
            item=item,
        )


class ExcerptBody(BaseModel):
    text: str
    truncated: bool


class EvidenceLinkBody(BaseModel):
    artifact_id: str
    media_type: str
    size: int
    sha256: str
    #: A short-lived signed read of the stored bytes (``GET /v1/evidence/{token}``).
    url: str
    expires_at: datetime

    @classmethod
    def of(cls, link: EvidenceLink) -> EvidenceLinkBody:
        return cls(
            artifact_id=link.artifact_id,
            media_type=link.media_type,
            size=link.size,
            sha256=link.sha256,
            url=f"/v1/evidence/{link.token}",
            expires_at=link.expires_at,
        )


class HistoryEntryBody(BaseModel):
    decision_id: str
    action: str
    review_action: str | None
    actor: str
    rationale: str
    case_revision: int | None
    item_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, entry: HistoryEntry) -> HistoryEntryBody:
        return cls(**{name: getattr(entry, name) for name in cls.model_fields})


class ProposedClaimBody(BaseModel):
    attribute: str
    value: str
    evidence_locator: str


class LlmProposalBody(BaseModel):
    """Claims a model proposed for a capture no adapter could read (if_llm_extract): a proposal for the
    reviewer, never a fact (DEC-02)."""

    advisory: Literal[True] = True
    status: str
    prompt_version: str
    model_id: str
    artifact_sha256: str
    claims: list[ProposedClaimBody]
    diagnostics: list[str]
    error: str | None
    created_at: datetime

    @classmethod
    def of(cls, proposal: LlmProposal) -> LlmProposalBody:
        return cls(
            status=proposal.status,
            prompt_version=proposal.prompt_version,
            model_id=proposal.model_id,
            artifact_sha256=proposal.artifact_sha256,
            claims=[ProposedClaimBody(**claim) for claim in proposal.claims],
            diagnostics=proposal.diagnostics,
            error=proposal.error,
            created_at=proposal.created_at,
        )


class LlmAdviceBody(BaseModel):
    """A model's recommendation on the case at one revision (if_llm_review); ``advisory`` is always true."""

    advisory: Literal[True] = True
    status: str
    case_revision: int
    prompt_version: str
    model_id: str
    recommendation: dict[str, Any] | None
    error: str | None
    created_at: datetime

    @classmethod
    def of(cls, advice: LlmAdvice) -> LlmAdviceBody:
        return cls(
            status=advice.status,
            case_revision=advice.case_revision,
            prompt_version=advice.prompt_version,
            model_id=advice.model_id,
            recommendation=advice.recommendation,
            error=advice.error,
            created_at=advice.created_at,
        )


class ReviewCaseBody(BaseModel):
    case_id: str
    catalog_id: str
    kind: str
    status: str
    revision: int
    source_id: str
    capture_id: str
    listing_id: str
    opened_by: str
    created_at: datetime
    updated_at: datetime
    reason: str | None
    stage_outcome: str | None
    adapter: str | None
    profile: str | None
    identifiers: dict[str, Any]
    claims: list[ClaimBody]
    attributes: list[AttributeBody]
    problems: list[ProblemBody]
    error: dict[str, Any] | None
    candidates: list[CandidateBody]
    excerpt: ExcerptBody | None
    evidence: list[EvidenceLinkBody]
    history: list[HistoryEntryBody]
    llm_proposals: list[LlmProposalBody]
    llm_advice: list[LlmAdviceBody]

    @classmethod
    def of(cls, view: CaseView) -> ReviewCaseBody:
        case = view.case
        return cls(
            case_id=case.case_id,
            catalog_id=case.catalog_id,
            kind=case.kind,
            status=case.status,
            revision=case.revision,
            source_id=case.source_id,
            capture_id=case.capture_id,
            listing_id=case.listing_id,
            opened_by=case.opened_by,
            created_at=case.created_at,
            updated_at=case.updated_at,
            reason=view.reason,
            stage_outcome=view.stage_outcome,
            adapter=view.adapter,
            profile=view.profile,
            identifiers=view.identifiers,
            claims=[ClaimBody(**claim, adapter=view.adapter) for claim in view.claims],
            attributes=[AttributeBody(**attribute) for attribute in view.attributes],
            problems=[ProblemBody(**problem) for problem in view.problems],
            error=view.error,
            candidates=[CandidateBody.of(candidate) for candidate in view.candidates],
            excerpt=ExcerptBody(text=view.excerpt.text, truncated=view.excerpt.truncated)
            if view.excerpt
            else None,
            evidence=[EvidenceLinkBody.of(link) for link in view.evidence],
            history=[HistoryEntryBody.of(entry) for entry in view.history],
            llm_proposals=[LlmProposalBody.of(p) for p in view.proposals],
            llm_advice=[LlmAdviceBody.of(a) for a in view.advice],
        )

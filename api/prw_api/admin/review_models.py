"""Response bodies of the review read (if_review_read): the queue page and one case."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from prw_platform.services import CaseView, EvidenceLink

CaseStatus = Literal["awaiting_human", "decided", "dismissed"]


class ReviewCaseSummary(BaseModel):
    model_config = ConfigDict(from_attributes=True)

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


class ReviewCountsBody(BaseModel):
    """Over every case matching the filters, not only this page."""

    model_config = ConfigDict(from_attributes=True)

    total: int
    status: dict[str, int]
    kind: dict[str, int]


class ReviewPageBody(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    cases: list[ReviewCaseSummary]
    #: Pass as ``cursor`` with the same filters for the next page; null on the last page.
    next_cursor: str | None
    counts: ReviewCountsBody


class ClaimBody(BaseModel):
    attribute: str
    value: Any
    evidence_locator: str | None
    #: The adapter pin that extracted the claim.
    adapter: str | None
    #: Where the value was read (structured, meta, buy_box, url, text) and the adapter's confidence in it; None
    #: when the adapter does not rate its claims.
    source: str | None = None
    confidence: float | None = None


class AttributeBody(BaseModel):
    key: str
    value: Any
    unit: str | None = None
    definition_version: int | None = None
    evidence_locators: list[str] = []
    #: The profile's weighed confidence in the value (None: the profile does not say).
    confidence: float | None = None


class ProblemBody(BaseModel):
    attribute: str | None = None
    code: str | None = None
    message: str | None = None
    raw_value: Any = None


class CandidateItemBody(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    status: str
    title: str | None
    brand: str | None
    identifiers: dict[str, Any]


class CandidateBody(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    rank: int
    item_id: str
    score: float
    reason: str | None
    #: The item as the catalog has it now; null when it no longer exists.
    item: CandidateItemBody | None


class ExcerptBody(BaseModel):
    model_config = ConfigDict(from_attributes=True)

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
    model_config = ConfigDict(from_attributes=True)

    decision_id: str
    action: str
    review_action: str | None
    actor: str
    rationale: str
    case_revision: int | None
    item_id: str | None
    created_at: datetime


class ProposedClaimBody(BaseModel):
    attribute: str
    value: str
    evidence_locator: str


class LlmProposalBody(BaseModel):
    """Claims a model proposed for a capture no adapter could read (if_llm_extract): a proposal for the
    reviewer, never a fact (DEC-02)."""

    model_config = ConfigDict(from_attributes=True)

    advisory: Literal[True] = True
    status: str
    prompt_version: str
    model_id: str
    artifact_sha256: str
    claims: list[ProposedClaimBody]
    diagnostics: list[str]
    error: str | None
    created_at: datetime


class LlmAdviceBody(BaseModel):
    """A model's recommendation on the case at one revision (if_llm_review); ``advisory`` is always true."""

    model_config = ConfigDict(from_attributes=True)

    advisory: Literal[True] = True
    status: str
    case_revision: int
    prompt_version: str
    model_id: str
    recommendation: dict[str, Any] | None
    error: str | None
    created_at: datetime


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
            candidates=[CandidateBody.model_validate(candidate) for candidate in view.candidates],
            excerpt=ExcerptBody.model_validate(view.excerpt) if view.excerpt else None,
            evidence=[EvidenceLinkBody.of(link) for link in view.evidence],
            history=[HistoryEntryBody.model_validate(entry) for entry in view.history],
            llm_proposals=[LlmProposalBody.model_validate(p) for p in view.proposals],
            llm_advice=[LlmAdviceBody.model_validate(a) for a in view.advice],
        )

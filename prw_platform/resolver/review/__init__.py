"""The review read (if_review_read): the queue, a case as a reviewer reads it, and signed evidence links."""

from prw_platform.resolver.review.case_view import Candidate, CaseView, HistoryEntry
from prw_platform.resolver.review.errors import (
    EvidenceLinkExpired,
    EvidenceLinkInvalid,
    EvidenceMissing,
    InvalidCursor,
    ReviewReadError,
)
from prw_platform.resolver.review.evidence import LINK_TTL, EvidenceLink, EvidenceLinks, EvidenceObject
from prw_platform.resolver.review.excerpt import MAX_EXCERPT_CHARS, Excerpt
from prw_platform.resolver.review.queue import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    CaseSummary,
    ReviewCounts,
    ReviewFilters,
    ReviewPage,
    ReviewQueue,
)

__all__ = [
    "DEFAULT_LIMIT",
    "LINK_TTL",
    "MAX_EXCERPT_CHARS",
    "MAX_LIMIT",
    "Candidate",
    "CaseSummary",
    "CaseView",
    "EvidenceLink",
    "EvidenceLinkExpired",
    "EvidenceLinkInvalid",
    "EvidenceLinks",
    "EvidenceMissing",
    "EvidenceObject",
    "Excerpt",
    "HistoryEntry",
    "InvalidCursor",
    "ReviewCounts",
    "ReviewFilters",
    "ReviewPage",
    "ReviewQueue",
    "ReviewReadError",
]

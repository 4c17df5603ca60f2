"""Improvements (issue 12): a proposed re-resolution of a catalog's stored captures with pinned adapter, profile
and definition versions, and its review status (draft -> reviewer_approved -> applied, or abandoned).

Today the platform lists them (if_admin_read ``GET /v1/improvements``); issue 12 creates and replays them.
"""

from prw_platform.resolver.improvements.store import (
    IMPROVEMENT_STATUSES,
    Improvement,
    ImprovementPage,
    InvalidPageCursor,
    insert_improvement,
    list_improvements,
)

__all__ = [
    "IMPROVEMENT_STATUSES",
    "Improvement",
    "ImprovementPage",
    "InvalidPageCursor",
    "insert_improvement",
    "list_improvements",
]

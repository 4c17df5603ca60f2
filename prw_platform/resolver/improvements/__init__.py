"""Improvements: a proposed re-resolution of a catalog's stored captures with pinned adapter, profile
and definition versions, and its review status (draft -> reviewer_approved -> applied, or abandoned).

Operators create, approve and abandon them (``service``) and replay them (``replays``); the admin origin lists
them (if_admin_read ``GET /v1/improvements``).
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

"""The admin origin: operator login (if_operator_session) and the operator APIs behind it (if_review_decision)."""

from prw_api.admin.app import create_app

__all__ = ["create_app"]

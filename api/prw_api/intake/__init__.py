"""The intake origin (AW-02): ``create_app(settings, intake, auth, collectors)``."""

from prw_api.intake.app import create_app

__all__ = ["create_app"]

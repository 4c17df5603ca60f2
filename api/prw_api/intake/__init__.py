"""The intake origin (AW-02): ``create_app(settings, services)``."""

from prw_api.intake.app import create_app
from prw_api.intake.services import IntakeApiServices, build_intake_services

__all__ = ["IntakeApiServices", "build_intake_services", "create_app"]

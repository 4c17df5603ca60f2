"""The intake origin: collector-facing routes of the resolver (seed 003: "Resolver intake Worker")."""

from __future__ import annotations

from fastapi import FastAPI

from prw_api.errors import install_error_handlers
from prw_api.intake.routes import captures, oauth, receipts, uploads
from prw_api.intake.services import IntakeApiServices
from prw_platform.config import Settings


def create_app(settings: Settings, services: IntakeApiServices) -> FastAPI:
    app = FastAPI(
        title="PRW intake",
        summary="Collector intake: tokens, artifact uploads, captures and receipts (AW-02)",
        version="1",
    )
    app.state.settings = settings
    app.state.services = services
    install_error_handlers(app)
    for router in (oauth.router, uploads.router, captures.router, receipts.router):
        app.include_router(router)
    return app

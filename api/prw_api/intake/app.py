"""The intake origin: collector-facing routes of the resolver (seed 003: "Resolver intake Worker")."""

from __future__ import annotations

from fastapi import FastAPI

from prw_api.errors import install_error_handlers
from prw_api.intake.routes import captures, oauth, receipts, uploads
from prw_platform.config import Settings
from prw_platform.services import CollectorAuthService, IntakeService


def create_app(settings: Settings, intake: IntakeService, auth: CollectorAuthService) -> FastAPI:
    """The services come from the composition root (``Platform.intake``, ``Platform.collector_auth``)."""
    app = FastAPI(
        title="PRW intake",
        summary="Collector intake: tokens, artifact uploads, captures and receipts (AW-02)",
        version="1",
    )
    app.state.settings = settings
    app.state.intake = intake
    app.state.auth = auth
    install_error_handlers(app)
    for router in (oauth.router, uploads.router, captures.router, receipts.router):
        app.include_router(router)
    return app

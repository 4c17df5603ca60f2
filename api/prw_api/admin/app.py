"""The admin origin (seed 003: "Resolver admin API"): operator login and sessions (if_operator_session) and the
human decision route (if_review_decision). A server-rendered console on the same origin uses the same session
cookie and CSRF token."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import Lifespan

from prw_api import health
from prw_api.admin.console import install_console
from prw_api.admin.oidc import OidcRelyingParty
from prw_api.admin.routes import auth
from prw_api.admin.routes import catalog as catalog_routes
from prw_api.admin.routes import decisions as decision_routes
from prw_api.admin.routes import evidence as evidence_routes
from prw_api.admin.routes import files as file_routes
from prw_api.admin.routes import improvements as improvement_routes
from prw_api.admin.routes import items as item_routes
from prw_api.admin.routes import reads as read_routes
from prw_api.admin.routes import releases as release_routes
from prw_api.admin.routes import review as review_routes
from prw_api.errors import ApiError, install_error_handlers
from prw_api.middleware import install_input_hardening
from prw_platform.config import Settings
from prw_platform.services import (
    AdminReads,
    CatalogFiles,
    DecisionService,
    ImprovementService,
    MerchantService,
    OperatorSessions,
    ReplayService,
    ReviewQueue,
)

#: The admin origin's code of a request the platform refuses before the route runs.
VALIDATION_FAILED = "VALIDATION_FAILED"
#: if_review_decision: "503 UNAVAILABLE — retry. Same Idempotency-Key".
DATABASE_UNAVAILABLE = ApiError(503, "UNAVAILABLE", "the database is unavailable; retry", retryable=True)


def create_app(
    settings: Settings,
    sessions: OperatorSessions,
    decisions: DecisionService,
    oidc: OidcRelyingParty,
    *,
    reads: AdminReads,
    review: ReviewQueue,
    improvements: ImprovementService,
    replays: ReplayService,
    files: CatalogFiles | None = None,
    merchants: MerchantService | None = None,
    lifespan: Lifespan[FastAPI] | None = None,
) -> FastAPI:
    """The services come from the composition root (``Platform.operator_sessions``, ``Platform.decisions``,
    ``Platform.admin_reads``); ``oidc`` is the relying party of ``settings.operator_oidc``'s issuer."""
    app = FastAPI(
        title="PRW admin",
        summary="Operator login, review decisions (if_operator_session, if_review_decision, AW-01)",
        version="1",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.sessions = sessions
    app.state.decisions = decisions
    app.state.oidc = oidc
    app.state.reads = reads
    app.state.review = review
    app.state.improvements = improvements
    app.state.replays = replays
    app.state.files = files
    app.state.merchants = merchants
    app.state.ready = lambda: sessions.ready()
    install_error_handlers(app, validation_code=VALIDATION_FAILED, database_unavailable=DATABASE_UNAVAILABLE)
    install_input_hardening(app, settings, validation_code=VALIDATION_FAILED)
    for router in (
        health.router,
        auth.router,
        decision_routes.router,
        release_routes.router,
        read_routes.router,
        improvement_routes.router,
        item_routes.router,  # merges, splits and the likely duplicates
    ):
        app.include_router(router)
    # if_review_read: the queue, a case and its signed evidence links.
    for router in (review_routes.router, evidence_routes.router):
        app.include_router(router)
    if files is not None:
        app.include_router(file_routes.router)  # seed 004: item pictures and product classes
    if merchants is not None:
        app.include_router(catalog_routes.router)  # retirement, merchants, bindings, shipping policies
    install_console(app)  # the review console's pages under /console (outside the OpenAPI contract)
    return app

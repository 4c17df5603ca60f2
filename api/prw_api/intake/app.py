"""The intake origin: collector-facing routes of the resolver (seed 003: "Resolver intake Worker")."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import Lifespan

from prw_api import health
from prw_api.errors import ApiError, from_core_error, install_error_handlers, render, validation_summary
from prw_api.intake.deps import TOKEN_PATH, bearer_token
from prw_api.intake.routes import captures, oauth, receipts, uploads, workers
from prw_api.intake.routes import exports as exports_routes
from prw_api.intake.routes import snapshots as snapshots_routes
from prw_api.middleware import BodyLimit, RouteBodyLimit, install_input_hardening
from prw_platform.config import Settings
from prw_platform.errors import ArtifactTooLarge, AuthError, ValidationFailed
from prw_platform.services import (
    CollectorAuthService,
    CollectorService,
    ExportService,
    IntakeService,
    SnapshotExports,
)


def create_app(
    settings: Settings,
    intake: IntakeService,
    auth: CollectorAuthService,
    collectors: CollectorService,
    exports: ExportService | None = None,
    snapshots: SnapshotExports | None = None,
    *,
    lifespan: Lifespan[FastAPI] | None = None,
) -> FastAPI:
    """The services come from the composition root (``Platform.intake``, ``Platform.collector_auth``,
    ``Platform.collectors``); ``lifespan`` is the server's (``prw_api.factory`` closes the platform with it)."""
    app = FastAPI(
        title="PRW intake",
        summary="Collector intake: tokens, registration and heartbeats, artifact uploads, captures and receipts"
        " (AW-02)",
        version="1",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.intake = intake
    app.state.auth = auth
    # Looked up per probe (the service is the readiness check: IntakeService.ready).
    app.state.ready = lambda: intake.ready()
    app.state.collectors = collectors
    #: The product principal's export stream (gap closure); absent, its route answers 404.
    app.state.exports = exports
    #: Snapshot exports (if_projection_bootstrap); absent, their routes answer 404.
    app.state.snapshots = snapshots
    install_error_handlers(app)
    _authenticate_before_validating(app, auth)
    install_input_hardening(
        app,
        settings,
        validation_code=ValidationFailed.code,
        route_limits=(
            # if_artifact_upload: the bytes stream through the route up to the artifact limit, and above it the
            # seed's 413 ARTIFACT_TOO_LARGE, now before the token is even looked at.
            RouteBodyLimit(
                "PUT",
                uploads.UPLOAD_BYTES_PATH,
                BodyLimit(intake.max_artifact_bytes, ArtifactTooLarge.code),
            ),
            RouteBodyLimit("POST", TOKEN_PATH, BodyLimit(oauth.MAX_FORM_BYTES)),
        ),
    )
    for router in (
        health.router,
        oauth.router,
        workers.router,
        uploads.router,
        captures.router,
        receipts.router,
    ):
        app.include_router(router)
    if exports is not None:
        app.include_router(exports_routes.router)
    if snapshots is not None:
        app.include_router(snapshots_routes.router)
    return app


def _authenticate_before_validating(app: FastAPI, auth: CollectorAuthService) -> None:
    """A refused credential answers before anything about the request (if_capture_submit: "Token valid in form
    but client revoked" is 401 CREDENTIAL_REVOKED): a route that checks the client inside its own transaction
    (POST /v1/captures) has not checked it yet when FastAPI refuses the body, so a 422 with a bearer token first
    checks the token and its client. This costs a transaction only on a refused request."""

    async def validation_failed(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        authorization = request.headers.get("authorization")
        if request.url.path != TOKEN_PATH and authorization is not None:
            try:
                await run_in_threadpool(auth.authenticate, bearer_token(authorization))
            except (ApiError, AuthError) as refused:
                error = refused if isinstance(refused, ApiError) else from_core_error(refused)
                return render(request, error)
        return render(request, ApiError(422, ValidationFailed.code, validation_summary(exc)))

    app.add_exception_handler(RequestValidationError, validation_failed)

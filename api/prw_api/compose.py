"""The API apps over a ``Platform`` (the composition root): what ``prw demo`` and ``prw dev`` serve. The apps use
the platform's services; nothing here builds one.

Each app's readiness (``GET /readyz``) is the platform's, ``Platform.ready``: every pool the process opened, the
control database's included, answers; not only the pool of the service the app was built around."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import Lifespan

from prw_api.admin.app import create_app as create_admin_app
from prw_api.admin.oidc import OidcRelyingParty
from prw_api.intake.app import create_app as create_intake_app
from prw_api.product.app import create_app as create_product_app
from prw_platform.bootstrap import Platform


def intake_app(platform: Platform, *, lifespan: Lifespan[FastAPI] | None = None) -> FastAPI:
    """The intake origin: ``Platform.intake``, ``Platform.collector_auth``, ``Platform.collectors`` and the
    product principal's export stream ``Platform.exports``."""
    return _ready_as_platform(
        create_intake_app(
            platform.settings,
            platform.intake,
            platform.collector_auth,
            platform.collectors,
            platform.exports,
            platform.snapshot_exports,
            lifespan=lifespan,
        ),
        platform,
    )


def product_app(
    platform: Platform,
    tenant_id: str | None = None,
    catalog_id: str | None = None,
    *,
    lifespan: Lifespan[FastAPI] | None = None,
) -> FastAPI:
    """The product origin for one released catalog (if_product_query: the deployment binds the pair; default
    ``PRW_PRODUCT_TENANT_ID`` / ``PRW_PRODUCT_CATALOG_ID``)."""
    return _ready_as_platform(
        create_product_app(
            platform.settings,
            platform.public_catalog(tenant_id, catalog_id),
            limiter=platform.public_rate_limiter,
            lifespan=lifespan,
        ),
        platform,
    )


def admin_app(
    platform: Platform, *, issuer: str | None = None, lifespan: Lifespan[FastAPI] | None = None
) -> FastAPI:
    """The admin origin: ``Platform.operator_sessions`` and ``Platform.decisions``, logging operators in at
    ``PRW_OPERATOR_OIDC__ISSUER``, or at ``issuer`` when given (``prw demo``: the development identity provider
    it serves)."""
    settings = platform.settings
    if issuer is not None:
        oidc = settings.operator_oidc.model_copy(update={"issuer": issuer})
        settings = settings.model_copy(update={"operator_oidc": oidc})
    return _ready_as_platform(
        create_admin_app(
            settings,
            platform.operator_sessions,
            platform.decisions,
            OidcRelyingParty(settings.operator_oidc),
            reads=platform.admin_reads,
            review=platform.review_queue,
            improvements=platform.improvements,
            replays=platform.replays,
            files=platform.catalog_files,
            merchants=platform.merchants,
            lifespan=lifespan,
        ),
        platform,
    )


def _ready_as_platform(app: FastAPI, platform: Platform) -> FastAPI:
    """The services above opened their pools when they were built: a database the origin's requests need (the
    control database of the history epochs) is one its readiness asks."""
    app.state.ready = platform.ready
    return app

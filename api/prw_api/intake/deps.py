"""Dependencies of the intake routes: the platform's intake and auth services, and the authenticated collector."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.openapi.models import OAuthFlowClientCredentials, OAuthFlows
from fastapi.security import OAuth2

from prw_api.errors import ApiError
from prw_platform.services import (
    COLLECTOR_SCOPES,
    CollectorAuthService,
    CollectorPrincipal,
    CollectorService,
    IntakeService,
)

TOKEN_PATH = "/v1/oauth/token"

# if_collector_bootstrap: securitySchemes.collectorOAuth2 (OAuth2 client credentials).
collector_oauth2 = OAuth2(
    flows=OAuthFlows(
        clientCredentials=OAuthFlowClientCredentials(
            tokenUrl=TOKEN_PATH, scopes=dict.fromkeys(COLLECTOR_SCOPES, "collector scope")
        )
    ),
    scheme_name="collectorOAuth2",
    auto_error=False,
)


# The services are read from the app's state: no I/O, so ``async`` (FastAPI runs a plain ``def`` dependency in
# its thread pool, one hand-off per dependency per request).


async def get_intake(request: Request) -> IntakeService:
    intake: IntakeService = request.app.state.intake
    return intake


async def get_auth(request: Request) -> CollectorAuthService:
    auth: CollectorAuthService = request.app.state.auth
    return auth


async def get_collectors(request: Request) -> CollectorService:
    collectors: CollectorService = request.app.state.collectors
    return collectors


IntakeDep = Annotated[IntakeService, Depends(get_intake)]
CollectorsDep = Annotated[CollectorService, Depends(get_collectors)]
AuthDep = Annotated[CollectorAuthService, Depends(get_auth)]


def bearer_token(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401,
            "INVALID_TOKEN",
            "an OAuth2 bearer token is required (Authorization: Bearer <token>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return token.strip()


def authenticated_collector(
    auth: AuthDep, authorization: Annotated[str | None, Depends(collector_oauth2)]
) -> CollectorPrincipal:
    return auth.authenticate(bearer_token(authorization))


async def verified_token(
    auth: AuthDep, authorization: Annotated[str | None, Depends(collector_oauth2)]
) -> CollectorPrincipal:
    """The token checked without the database (a signature check: no I/O, so it runs on the event loop rather
    than costing a thread hand-off): the route must pass ``auth.send_credential_check`` to the service, which
    checks the client inside its own transaction (POST /v1/captures)."""
    return auth.verify_token(bearer_token(authorization))


CollectorDep = Annotated[CollectorPrincipal, Depends(authenticated_collector)]
#: Only for a route that hands ``AuthDep.send_credential_check`` to its service call.
VerifiedTokenDep = Annotated[CollectorPrincipal, Depends(verified_token)]

"""Dependencies of the intake routes: the services and the authenticated collector."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.openapi.models import OAuthFlowClientCredentials, OAuthFlows
from fastapi.security import OAuth2

from prw_api.errors import ApiError
from prw_api.intake.services import IntakeApiServices
from prw_platform.auth import CollectorPrincipal
from prw_platform.auth.scopes import COLLECTOR_SCOPES

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


def get_services(request: Request) -> IntakeApiServices:
    services: IntakeApiServices = request.app.state.services
    return services


ServicesDep = Annotated[IntakeApiServices, Depends(get_services)]


def authenticated_collector(
    services: ServicesDep, authorization: Annotated[str | None, Depends(collector_oauth2)]
) -> CollectorPrincipal:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401,
            "INVALID_TOKEN",
            "an OAuth2 bearer token is required (Authorization: Bearer <token>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return services.auth.authenticate(token.strip())


CollectorDep = Annotated[CollectorPrincipal, Depends(authenticated_collector)]

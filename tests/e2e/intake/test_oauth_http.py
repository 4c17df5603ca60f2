"""POST /v1/oauth/token over HTTP: the client-credentials grant with RFC 6749 errors."""

from __future__ import annotations

import base64

import httpx
import jwt

from prw_platform.auth import ProvisionedClient
from prw_platform.auth.scopes import RECEIPTS_READ
from tests.integration.intake.helpers import INSTANCE, SOURCE, World


def form(client: ProvisionedClient, **extra: str) -> dict[str, str]:
    return {
        "grant_type": "client_credentials",
        "client_id": client.client_id,
        "client_secret": client.client_secret,
        **extra,
    }


def test_client_credentials_in_the_form_get_a_bearer_jwt(
    world: World, http: httpx.Client, client: ProvisionedClient
) -> None:
    response = http.post("/v1/oauth/token", data=form(client))

    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] > 0
    claims = jwt.decode(body["access_token"], options={"verify_signature": False})
    assert (claims["sub"], claims["tenant"], claims["sources"]) == (INSTANCE, world.tenant, [SOURCE])


def test_client_credentials_by_http_basic_get_a_token_for_the_asked_scope(
    http: httpx.Client, client: ProvisionedClient
) -> None:
    basic = base64.b64encode(f"{client.client_id}:{client.client_secret}".encode()).decode()

    response = http.post(
        "/v1/oauth/token",
        data={"grant_type": "client_credentials", "scope": RECEIPTS_READ},
        headers={"Authorization": f"Basic {basic}"},
    )

    assert response.status_code == 200
    assert response.json()["scope"] == RECEIPTS_READ


def test_a_wrong_secret_is_401_invalid_client_with_a_basic_challenge(
    http: httpx.Client, client: ProvisionedClient
) -> None:
    basic = base64.b64encode(f"{client.client_id}:wrong".encode()).decode()

    response = http.post(
        "/v1/oauth/token",
        data={"grant_type": "client_credentials"},
        headers={"Authorization": f"Basic {basic}"},
    )

    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert response.headers["www-authenticate"].startswith("Basic")


def test_another_grant_type_is_400_unsupported_grant_type(
    http: httpx.Client, client: ProvisionedClient
) -> None:
    response = http.post("/v1/oauth/token", data=form(client, grant_type="password"))

    assert (response.status_code, response.json()["error"]) == (400, "unsupported_grant_type")


def test_a_scope_beyond_the_grant_is_400_invalid_scope(http: httpx.Client, client: ProvisionedClient) -> None:
    response = http.post("/v1/oauth/token", data=form(client, scope="admin:everything"))

    assert (response.status_code, response.json()["error"]) == (400, "invalid_scope")


def test_a_json_token_request_is_400_invalid_request(http: httpx.Client, client: ProvisionedClient) -> None:
    response = http.post("/v1/oauth/token", json=form(client))

    assert (response.status_code, response.json()["error"]) == (400, "invalid_request")


def test_credentials_in_both_basic_and_form_are_400_invalid_request(
    http: httpx.Client, client: ProvisionedClient
) -> None:
    basic = base64.b64encode(f"{client.client_id}:{client.client_secret}".encode()).decode()

    response = http.post("/v1/oauth/token", data=form(client), headers={"Authorization": f"Basic {basic}"})

    assert (response.status_code, response.json()["error"]) == (400, "invalid_request")


def test_a_repeated_parameter_is_400_invalid_request(http: httpx.Client, client: ProvisionedClient) -> None:
    body = (
        f"grant_type=client_credentials&client_id={client.client_id}"
        f"&client_secret={client.client_secret}&scope=a&scope=b"
    )
    response = http.post(
        "/v1/oauth/token", content=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )

    assert (response.status_code, response.json()["error"]) == (400, "invalid_request")

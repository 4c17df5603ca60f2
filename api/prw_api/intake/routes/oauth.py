"""POST /v1/oauth/token: the OAuth2 client-credentials grant (RFC 6749 4.4) of the built-in token service.

RFC 6749 fixes this endpoint's wire format, so its errors are RFC 6749 5.2 bodies (``{"error":
"invalid_client"}``), not the platform's error body. The form is parsed here (bounded), because the request is
tiny and the multipart parser FastAPI's ``Form`` needs is not a dependency of the platform.

A form that is not UTF-8 once percent-decoded, or whose values hold a NUL (PostgreSQL text cannot, and the client
id is looked up in the database), is ``400 invalid_request`` (RFC 6749 5.2: "includes an unsupported parameter
value ... or is otherwise malformed"). Refusals before the route runs keep the platform's body: a form above
``MAX_FORM_BYTES`` is 413 PAYLOAD_TOO_LARGE (``prw_api.middleware``, the route's own check below is the backstop),
a NUL in the path or query string is 422 VALIDATION_FAILED, an unexpected failure 500 INTERNAL.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated
from urllib.parse import parse_qsl, unquote_plus

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from prw_api.intake.deps import TOKEN_PATH, AuthDep
from prw_api.intake.models import OAuthErrorBody, TokenBody
from prw_api.routing import PlatformRoute
from prw_platform.errors import OAuthError
from prw_platform.inputs import unstorable_character

router = APIRouter(tags=["oauth"], route_class=PlatformRoute)

#: A token request is a few short parameters; anything longer is refused before it is read (413).
MAX_FORM_BYTES = 8 * 1024
# RFC 6749 5.1: "Cache-Control: no-store" and "Pragma: no-cache" on every token response.
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


@router.post(
    TOKEN_PATH,
    operation_id="issueToken",
    name="issueToken",
    response_model=TokenBody,
    responses={400: {"model": OAuthErrorBody}, 401: {"model": OAuthErrorBody}},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/x-www-form-urlencoded": {
                    "schema": {
                        "type": "object",
                        "required": ["grant_type"],
                        "properties": {
                            "grant_type": {"const": "client_credentials"},
                            "client_id": {"type": "string"},
                            "client_secret": {"type": "string"},
                            "scope": {"type": "string"},
                        },
                    }
                }
            },
        }
    },
)
async def issue_token(
    request: Request,
    auth: AuthDep,
    authorization: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> JSONResponse:
    basic = authorization is not None and authorization[:6].lower() == "basic "
    try:
        form = await _form(request)
        client_id, client_secret = _client_credentials(form, authorization if basic else None)
        grant_type = form.get("grant_type")
        if grant_type is None:
            raise OAuthError("invalid_request", "grant_type is required")
        if grant_type != "client_credentials":
            raise OAuthError("unsupported_grant_type", "only the client_credentials grant is supported")
        issued = await run_in_threadpool(
            auth.client_credentials_grant, client_id, client_secret, form.get("scope")
        )
    except OAuthError as error:
        headers = dict(_NO_STORE)
        if error.status == 401 and basic:
            # RFC 6749 5.2: a 401 after HTTP Basic client authentication carries the Basic challenge.
            headers["WWW-Authenticate"] = 'Basic realm="prw-intake"'
        failure = OAuthErrorBody(error=error.code, error_description=error.description)
        return JSONResponse(failure.model_dump(), status_code=error.status, headers=headers)
    body = TokenBody(
        access_token=issued.access_token,
        token_type="Bearer",
        expires_in=issued.expires_in,
        scope=issued.scope,
    )
    return JSONResponse(body.model_dump(), headers=_NO_STORE)


async def _form(request: Request) -> dict[str, str]:
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/x-www-form-urlencoded":
        raise OAuthError("invalid_request", "the token request must be application/x-www-form-urlencoded")
    raw = bytearray()
    async for chunk in request.stream():
        raw.extend(chunk)
        if len(raw) > MAX_FORM_BYTES:
            raise OAuthError("invalid_request", "the token request is too large")
    try:
        pairs = parse_qsl(
            raw.decode("ascii"),
            keep_blank_values=True,
            strict_parsing=bool(raw),
            encoding="utf-8",
            errors="strict",
        )
    except (UnicodeDecodeError, ValueError) as error:
        raise OAuthError("invalid_request", "the token request body is not a valid UTF-8 form") from error
    for name, value in pairs:
        problem = unstorable_character(name) or unstorable_character(value)
        if problem is not None:
            raise OAuthError("invalid_request", f"a form parameter {problem}")
    names = [name for name, _ in pairs]
    if len(names) != len(set(names)):
        # RFC 6749 3.2: "Request and response parameters MUST NOT be included more than once."
        raise OAuthError("invalid_request", "a parameter is repeated")
    return {name: value for name, value in pairs if value != ""}


def _client_credentials(form: dict[str, str], basic: str | None) -> tuple[str, str]:
    in_body = "client_id" in form or "client_secret" in form
    if basic is not None:
        if in_body:
            # RFC 6749 2.3: "The client MUST NOT use more than one authentication method in each request."
            raise OAuthError("invalid_request", "use HTTP Basic or form credentials, not both")
        malformed = OAuthError("invalid_client", "malformed HTTP Basic credentials", status=401)
        try:
            decoded = base64.b64decode(basic[6:].strip(), validate=True).decode()
            encoded_id, separator, encoded_secret = decoded.partition(":")
            # RFC 6749 2.3.1: id and secret are form-urlencoded before Basic encoding.
            client_id = unquote_plus(encoded_id, errors="strict")
            client_secret = unquote_plus(encoded_secret, errors="strict")
        except (binascii.Error, UnicodeDecodeError) as error:
            raise malformed from error
        if not separator or unstorable_character(client_id) or unstorable_character(client_secret):
            raise malformed
        return client_id, client_secret
    if "client_id" not in form or "client_secret" not in form:
        raise OAuthError("invalid_client", "client authentication is required", status=401)
    return form["client_id"], form["client_secret"]

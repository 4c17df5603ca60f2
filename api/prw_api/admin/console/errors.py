"""How the console answers what the JSON API answers with an error body: no session is a redirect to the login
(if_operator_session Retries: "On 401 SESSION_EXPIRED the UI re-runs login"), anything else a page saying what
happened and what to do, with the seed's code and status."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlencode

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse

from prw_api.admin.console.form_body import FormRefused, checked_form_request
from prw_api.admin.console.rendering import page
from prw_api.errors import from_core_error, validation_summary
from prw_api.routing import PlatformRoute
from prw_platform.errors import (
    AuthError,
    DecisionError,
    ImprovementError,
    ReviewReadError,
    SessionExpired,
    StreamUnavailable,
)

_ADVICE = {
    "TENANT_SCOPE_DENIED": "Your session has no membership in this tenant. Choose one of your tenants.",
    "FORBIDDEN": "Your role in this tenant does not allow this.",
    "CSRF_REJECTED": "The form was stale or not sent by this console. Reload the page and try again.",
    "NOT_FOUND": "There is no such case, decision, improvement or catalog in your active tenant.",
    "IDEMPOTENCY_CONFLICT": "This form was already used for another request. Reload the page and try again.",
    "INVALID_CURSOR": "That page link is not one this console issued. Start again from the queue.",
    "VALIDATION_FAILED": "The form held a value the console cannot accept. Go back, correct it and send it again.",
}


def login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if request.method != "GET":
        target = "/console/review"  # a form post is never replayed after a login
    return RedirectResponse(f"/auth/login?{urlencode({'return_to': target})}", status_code=303)


def error_page(request: Request, status: int, code: str, message: str) -> Response:
    context = {"status": status, "code": code, "message": message, "advice": _ADVICE.get(code)}
    return page(request, "error.html", context, status_code=status)


class ConsoleRoute(PlatformRoute):
    """Console routes (the platform's request parsing, and form bodies held to the same input rules:
    ``form_body``): a missing or expired session goes to the login, a refused form or any other refusal is an
    error page."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                if request.method == "POST":
                    request = await checked_form_request(request)
                return await handler(request)
            except FormRefused as refusal:
                code = "VALIDATION_FAILED" if refusal.status == 422 else "UNSUPPORTED_MEDIA_TYPE"
                return error_page(request, refusal.status, code, str(refusal))
            except RequestValidationError as invalid:
                return error_page(request, 422, "VALIDATION_FAILED", validation_summary(invalid))
            except SessionExpired:
                return login_redirect(request)
            except (AuthError, DecisionError, StreamUnavailable, ReviewReadError, ImprovementError) as error:
                refused = from_core_error(error)  # what the JSON API answers, as a page
                return error_page(request, refused.status, refused.code, refused.message)

        return handle

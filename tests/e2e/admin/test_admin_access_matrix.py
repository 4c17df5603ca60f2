"""Role x tenant over every admin route (if_operator_session "Roles per tenant"): each route is called by a
logged-out client, by each role of the case's tenant and by a reviewer of another tenant (with and without
naming the tenant). Every route of the app is in the table (checked against its OpenAPI), so a new route
without an access rule fails here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from prw_api.server import BackgroundServer
from tests.e2e.admin.conftest import TENANT, Cases, Operator

ANONYMOUS = "anonymous"
#: who -> (subject or None, X-PRW-Tenant header or None)
CALLERS: dict[str, tuple[str | None, str | None]] = {
    ANONYMOUS: (None, None),
    "viewer": ("vic", None),
    "reviewer": ("rita", None),
    "operator_admin": ("ada", None),
    "other_tenant_reviewer": ("otto", None),
    "other_tenant_reviewer_naming_the_tenant": ("otto", TENANT),
}

#: (method, path) -> the least role of the case's tenant it needs; None: any logged-in operator.
ROUTES: dict[tuple[str, str], str | None] = {
    ("get", "/v1/session"): None,
    ("put", "/v1/session/tenant"): None,
    ("post", "/auth/logout"): None,
    ("post", "/v1/decisions"): "reviewer",
    # if_review_read: role viewer or higher. (GET /v1/evidence/{token} takes no session: its signed link is the
    # authorization, tested in test_review_read_http.py.)
    ("get", "/v1/review"): "viewer",
    ("get", "/v1/review/{case_id}"): "viewer",
}
#: Routes that list the active tenant's rows: another tenant's member reads its own (empty) list.
TENANT_LISTS = frozenset({("get", "/v1/review")})
_RANK = {"viewer": 0, "reviewer": 1, "operator_admin": 2}


def test_the_matrix_covers_every_operator_route_of_the_app(admin: BackgroundServer) -> None:
    document = httpx.get(f"{admin.url}/openapi.json").json()
    served = {
        (method, path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if {"operatorOidc": []} in operation.get("security", [])
    }
    assert served == set(ROUTES)


def _expected(who: str, route: tuple[str, str]) -> tuple[int, str | None]:
    needed = ROUTES[route]
    if who == ANONYMOUS:
        return 401, "SESSION_EXPIRED"
    if route == ("put", "/v1/session/tenant"):
        # Choosing the case's tenant: allowed to its members only.
        return (200, None) if not who.startswith("other") else (403, "TENANT_SCOPE_DENIED")
    if needed is None:
        return (204, None) if route[0] == "post" else (200, None)
    if who == "other_tenant_reviewer_naming_the_tenant":
        return 403, "TENANT_SCOPE_DENIED"
    if who == "other_tenant_reviewer":
        # Its own tenant has no such case (a list of that tenant is empty).
        return (200, None) if route in TENANT_LISTS else (404, "NOT_FOUND")
    if _RANK[who] < _RANK[needed]:
        return 403, "FORBIDDEN"
    return (201, None) if route[0] == "post" else (200, None)


def test_role_x_tenant_over_every_operator_route(
    admin: BackgroundServer, login: Callable[[str], Operator], cases: Cases
) -> None:
    """One deployment for the whole matrix (each cell gets its own login and, for a decision, its own case)."""
    mismatches = []
    for route in ROUTES:
        for who, (subject, tenant) in CALLERS.items():
            response = _call(admin, login, cases, route, subject, tenant)
            status, code = _expected(who, route)
            got = (
                response.status_code,
                response.json()["error"]["code"] if response.status_code >= 400 else None,
            )
            if got != (status, code):
                mismatches.append(
                    f"{who} {route}: expected {(status, code)}, got {got}: {response.text[:200]}"
                )
    assert mismatches == []


def _call(
    admin: BackgroundServer,
    login: Callable[[str], Operator],
    cases: Cases,
    route: tuple[str, str],
    subject: str | None,
    tenant: str | None,
) -> httpx.Response:
    body: dict[str, Any] = {}
    method, path = route
    if "{case_id}" in path:
        path = path.replace("{case_id}", cases.open()["case_id"])
    if route == ("post", "/v1/decisions"):
        case = cases.open()
        body = {
            "case_id": case["case_id"],
            "expected_revision": case["revision"],
            "action": "reject",
            "rationale": "not a product of this catalog",
        }
    elif route == ("put", "/v1/session/tenant"):
        body = {"tenant_id": TENANT}
    headers: dict[str, str] = {}
    if subject is None:
        http = httpx.Client(base_url=admin.url)
    else:
        operator = login(subject)
        http = operator.http
        headers["X-CSRF-Token"] = operator.csrf
    if tenant is not None:
        headers["X-PRW-Tenant"] = tenant
    try:
        return http.request(method.upper(), path, headers=headers, json=body if method != "get" else None)
    finally:
        if subject is None:
            http.close()

"""Role x tenant over every admin route (if_operator_session "Roles per tenant"): each route is called by a
logged-out client, by each role of the case's tenant and by a reviewer of another tenant (with and without
naming the tenant). Every route of the app is in the table (checked against its OpenAPI), so a new route
without an access rule fails here."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform
from prw_platform.resolver.improvements import Improvement, insert_improvement
from prw_platform.storage import ObjectStore
from tests.e2e.admin.conftest import TENANT, Cases, Operator
from tests.integration.resolution.pipeline import CATALOG, SOURCE


@pytest.fixture
def store(admin_platform: Platform) -> ObjectStore:
    """The captures' bytes in the admin platform's store, which the dry run reads."""
    return admin_platform.store


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
    ("post", "/v1/releases"): "operator_admin",
    ("put", "/v1/catalogs/{catalog_id}/release-policy"): "operator_admin",
    ("get", "/v1/decisions/{decision_id}"): "viewer",
    ("get", "/v1/workers"): "viewer",
    ("get", "/v1/receipts/{receipt_id}"): "viewer",
    ("get", "/v1/improvements"): "viewer",
    ("post", "/v1/improvements"): "operator_admin",
    ("get", "/v1/improvements/{improvement_id}"): "viewer",
    ("post", "/v1/improvements/{improvement_id}/approve"): "reviewer",
    ("post", "/v1/improvements/{improvement_id}/abandon"): "operator_admin",
    ("post", "/v1/improvements/{improvement_id}/replays"): "operator_admin",
    ("get", "/v1/replays/{replay_id}"): "viewer",
    ("post", "/v1/resolve"): "operator_admin",
    # Seed 004: item pictures and product classes.
    ("get", "/v1/items/{item_id}/pictures"): "viewer",
    ("put", "/v1/items/{item_id}/pictures"): "operator_admin",
    ("get", "/v1/catalogs/{catalog_id}/classes"): "viewer",
    ("post", "/v1/catalogs/{catalog_id}/classes"): "operator_admin",
    ("get", "/v1/classes/{class_id}"): "viewer",
    ("patch", "/v1/classes/{class_id}"): "operator_admin",
    ("delete", "/v1/classes/{class_id}"): "operator_admin",
    ("get", "/v1/files/failed"): "viewer",
    ("post", "/v1/files/{file_id}/retry"): "operator_admin",
    # Catalog administration. The merchant first: the binding and the policy name it.
    ("put", "/v1/merchants/{merchant_id}"): "operator_admin",
    ("put", "/v1/sources/{source_id}/merchant"): "operator_admin",
    ("put", "/v1/merchants/{merchant_id}/shipping-policy"): "operator_admin",
    # Item merges and splits (reviewer decisions, refused here before the retirement makes the item final) and
    # the likely duplicates (a read).
    ("post", "/v1/items/{item_id}/merge"): "reviewer",
    ("post", "/v1/items/{item_id}/split"): "reviewer",
    ("get", "/v1/catalogs/{catalog_id}/duplicates"): "viewer",
    ("post", "/v1/items/{item_id}/retirement"): "operator_admin",
}
#: What a caller with the role gets when it is not the default (201 for a POST, 200 otherwise). The catalog
#: releases automatically, so a release that passed authorization finds nothing left to release.
ALLOWED: dict[tuple[str, str], tuple[int, str | None]] = {
    ("post", "/v1/releases"): (409, "NOTHING_TO_RELEASE"),
    ("post", "/v1/resolve"): (200, None),
    ("post", "/v1/improvements/{improvement_id}/approve"): (200, None),
    ("post", "/v1/improvements/{improvement_id}/abandon"): (200, None),
    ("post", "/v1/improvements/{improvement_id}/replays"): (202, None),
    ("delete", "/v1/classes/{class_id}"): (204, None),
    # Authorized, and the tenant has no such file.
    ("post", "/v1/files/{file_id}/retry"): (404, "NOT_FOUND"),
    # Authorized, then refused by the decision (a merge or split is final: every allowed caller gets the refusal).
    ("post", "/v1/items/{item_id}/merge"): (422, "MERGE_INTO_SELF"),
    ("post", "/v1/items/{item_id}/split"): (409, "LISTING_NOT_ON_ITEM"),
}
#: What a reviewer of another tenant gets in its own tenant when its role suffices: the case's tenant's rows are
#: not there (INV-06), default 404 NOT_FOUND; a list of its tenant is empty; a receipt names its tenant
#: (if_receipt_get).
OWN_TENANT: dict[tuple[str, str], tuple[int, str | None]] = {
    ("get", "/v1/review"): (200, None),
    ("get", "/v1/workers"): (200, None),
    ("get", "/v1/improvements"): (200, None),
    ("get", "/v1/receipts/{receipt_id}"): (403, "TENANT_SCOPE_DENIED"),
    ("get", "/v1/catalogs/{catalog_id}/classes"): (200, None),
    ("get", "/v1/files/failed"): (200, None),
    ("get", "/v1/catalogs/{catalog_id}/duplicates"): (200, None),
}
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
    role = "reviewer" if who == "other_tenant_reviewer" else who
    if _RANK[role] < _RANK[needed]:
        return 403, "FORBIDDEN"
    if who == "other_tenant_reviewer":
        return OWN_TENANT.get(route, (404, "NOT_FOUND"))
    return ALLOWED.get(route, (201, None) if route[0] == "post" else (200, None))


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
    elif route == ("post", "/v1/releases"):
        cases.item()
        body = {"catalog_id": CATALOG}
    elif route == ("put", "/v1/catalogs/{catalog_id}/release-policy"):
        body = {"release_policy": "automatic", "rationale": "keep publishing every decision"}
    elif route == ("post", "/v1/improvements"):
        cases.item()
        body = {
            "catalog_id": CATALOG,
            "adapter_version": "pa_schemaorg@1.1.0",
            "selection": {"source_id": SOURCE},
            "rationale": "re-read the source with 1.1.0",
        }
    elif route == ("post", "/v1/improvements/{improvement_id}/replays"):
        body = {"mode": "dry_run"}
    elif route[1].startswith("/v1/improvements/{improvement_id}/"):
        body = {"rationale": "checked the diff"}
    elif route == ("post", "/v1/resolve"):
        body = {"capture_id": cases.open()["capture_id"], "adapter": "auto", "dry_run": True}
    elif route == ("put", "/v1/items/{item_id}/pictures"):
        body = {"gallery": []}
    elif route == ("post", "/v1/catalogs/{catalog_id}/classes"):
        body = {"class_id": "cls_matrix_new", "name": "New"}
    elif route == ("patch", "/v1/classes/{class_id}"):
        body = {"name": "Renamed"}
    elif route == ("put", "/v1/merchants/{merchant_id}"):
        body = {"catalog_id": CATALOG, "name": "Matrix Store"}
    elif route == ("put", "/v1/sources/{source_id}/merchant"):
        body = {"catalog_id": CATALOG, "merchant_id": "mer_matrix"}
    elif route == ("put", "/v1/merchants/{merchant_id}/shipping-policy"):
        body = {"catalog_id": CATALOG, "currency": "EUR", "rates": {"DE": "4.90"}}
    elif route == ("post", "/v1/items/{item_id}/merge"):
        body = {"catalog_id": CATALOG, "into": cases.item(), "rationale": "the same product"}
    elif route == ("post", "/v1/items/{item_id}/split"):
        body = {"catalog_id": CATALOG, "listing_ids": ["lst_matrix"], "title": "Other", "rationale": "two"}
    elif route == ("post", "/v1/items/{item_id}/retirement"):
        # Final: the one caller allowed (operator_admin) retires the case's item once.
        body = {"catalog_id": CATALOG, "rationale": "withdrawn by the maker"}
    if "{class_id}" in path:
        _ensure_class(login, cases)
    path = _concrete(cases, path)
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


def _ensure_class(login: Callable[[str], Operator], cases: Cases) -> None:
    """The case's tenant has the class ``cls_matrix`` (created again after a delete of the matrix)."""
    found = cases.resolution.one(
        "SELECT count(*) AS n FROM resolver.product_class WHERE class_id = 'cls_matrix'"
    )
    if found["n"] == 0:
        ada = login("ada")
        created = ada.http.post(
            f"/v1/catalogs/{CATALOG}/classes",
            json={"class_id": "cls_matrix", "name": "Matrix"},
            headers={"X-CSRF-Token": ada.csrf},
        )
        assert created.status_code == 201, created.text


def _concrete(cases: Cases, path: str) -> str:
    """The route's path with ids of the case's tenant."""
    if "{case_id}" in path:
        return path.format(case_id=cases.open()["case_id"])
    if "{decision_id}" in path:
        return path.format(decision_id=cases.open()["opened_by"])
    if "{replay_id}" in path:
        # A replay row of the case's tenant (the route reads it; no message is needed).
        improvement_path = _concrete(cases, "/{improvement_id}")
        replay_id = f"rpl_matrix_{uuid.uuid4().hex[:12]}"
        cases.resolution.owner_db.run(
            lambda conn: conn.execute(
                """INSERT INTO resolver.replay (tenant_id, catalog_id, replay_id, improvement_id, mode, pins, pins_key,
                       status, captures, requested_by, history_epoch, created_at)
                   VALUES (%s, %s, %s, %s, 'dry_run', '{}', '{}', 'queued', 1, 'operator:zed', 'h', now())""",
                (TENANT, CATALOG, replay_id, improvement_path.removeprefix("/")),
            )
        )
        return path.format(replay_id=replay_id)
    if "{improvement_id}" in path:
        # A fresh draft by an operator who is none of the callers (an author cannot approve their own).
        cases.item()
        improvement_id = f"imp_matrix_{uuid.uuid4().hex[:12]}"
        draft = Improvement(
            tenant_id=TENANT,
            catalog_id=CATALOG,
            improvement_id=improvement_id,
            adapter_version="pa_schemaorg@1.1.0",
            profile_version=None,
            definition_version=None,
            selection={"source_id": SOURCE},
            status="draft",
            created_by="operator:zed",
            created_at=datetime.now(UTC),
            rationale="re-read the source with 1.1.0",
        )
        cases.resolution.owner_db.run(lambda conn: insert_improvement(conn, draft))
        return path.format(improvement_id=improvement_id)
    if "{receipt_id}" in path:
        capture_id = cases.open()["capture_id"]
        receipt = cases.resolution.one(
            "SELECT receipt_id FROM resolver.receipt WHERE capture_id = %s", capture_id
        )
        return path.format(receipt_id=receipt["receipt_id"])
    if "{item_id}" in path:
        return path.format(item_id=cases.item())
    return path.format(
        catalog_id=CATALOG,
        class_id="cls_matrix",
        file_id="fil_000000000000000000000000",
        merchant_id="mer_matrix",
        source_id=SOURCE,
    )

"""The review console's pages over real HTTP: the login redirect, the decision form's CSRF
token, role and Idempotency-Key, a stale form, the tenant switch, and the pages' security headers. The keyboard
path in a real browser is test_review_console_browser.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from prw_api.server import BackgroundServer
from prw_platform.db.database import Database
from prw_platform.resolver.assist.store import AdviceKey, record_advice
from tests.e2e.admin.conftest import OTHER_TENANT, TENANT, Cases, Operator

Login = Callable[[str], Operator]


def _field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} field"
    return found.group(1)


def _form(operator: Operator, case_id: str) -> dict[str, str]:
    page = operator.http.get(f"/console/review/{case_id}")
    assert page.status_code == 200, page.text
    return {
        name: _field(page.text, name)
        for name in ("csrf_token", "idempotency_key", "expected_revision", "status", "kind", "source")
    }


def _post(operator: Operator, case_id: str, form: dict[str, str], **fields: Any) -> httpx.Response:
    return operator.http.post(f"/console/review/{case_id}/decision", data={**form, **fields})


def test_without_a_session_a_console_page_redirects_to_the_login_and_back(
    admin: BackgroundServer, cases: Cases
) -> None:
    case = cases.open()
    with httpx.Client(base_url=admin.url) as anonymous:
        response = anonymous.get(f"/console/review/{case['case_id']}", params={"status": "awaiting_human"})

    assert response.status_code == 303
    location = urlsplit(response.headers["location"])
    assert location.path == "/auth/login"
    assert parse_qs(location.query)["return_to"] == [
        f"/console/review/{case['case_id']}?status=awaiting_human"
    ]


def test_a_decision_maps_the_case_and_moves_on_to_the_next_case(login: Login, cases: Cases) -> None:
    first, second = cases.open(), cases.open()
    rita = login("rita")

    response = _post(rita, first["case_id"], _form(rita, first["case_id"]), decision=f"map_to:{cases.item()}")

    assert response.url.path == f"/console/review/{second['case_id']}"
    assert f"Decided <code>{first['case_id']}</code>" in response.text
    decision = cases.resolution.one(
        "SELECT actor, rationale, idempotency_key FROM resolver.decision WHERE case_id = %s AND action = 'map_listing'",
        first["case_id"],
    )
    assert decision["actor"] == "reviewer:rita"
    # A blank rationale records what the reviewer did and on which candidate.
    assert decision["rationale"].startswith(f"Mapped to candidate 1 {cases.item()} (score ")
    # The form's Idempotency-Key (the decision core scopes it by actor).
    assert decision["idempotency_key"].startswith(f"reviewer:rita:console:{first['case_id']}:")


def test_the_same_form_posted_twice_makes_one_decision(login: Login, cases: Cases) -> None:
    case = cases.open()
    rita = login("rita")
    form = _form(rita, case["case_id"])

    first = _post(rita, case["case_id"], form, decision="accept", rationale="same anvil")
    again = _post(rita, case["case_id"], form, decision="accept", rationale="same anvil")

    assert first.status_code == again.status_code == 200
    decisions = cases.resolution.one(
        "SELECT count(*) AS n FROM resolver.decision WHERE case_id = %s AND action = 'map_listing'",
        case["case_id"],
    )
    assert decisions["n"] == 1


def test_a_form_without_the_sessions_csrf_token_is_403_csrf_rejected_and_writes_nothing(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    rita = login("rita")
    before = cases.written()

    response = _post(
        rita, case["case_id"], {**_form(rita, case["case_id"]), "csrf_token": "forged"}, decision="reject"
    )

    assert response.status_code == 403
    assert "CSRF_REJECTED" in response.text
    assert cases.written() == before


def test_a_viewer_reads_a_case_without_a_form_and_a_posted_decision_is_403_forbidden(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    vic = login("vic")
    page = vic.http.get(f"/console/review/{case['case_id']}")
    assert page.status_code == 200
    assert 'id="decision"' not in page.text
    before = cases.written()

    form = {"csrf_token": vic.csrf, "idempotency_key": "k1", "expected_revision": "1"}
    response = _post(vic, case["case_id"], form, decision="reject")

    assert response.status_code == 403
    assert "FORBIDDEN" in response.text
    assert cases.written() == before


def test_a_stale_form_is_409_and_shows_the_case_at_its_new_revision(login: Login, cases: Cases) -> None:
    case = cases.open()
    rita, rob = login("rita"), login("rob")
    stale = _form(rita, case["case_id"])
    assert _post(rob, case["case_id"], _form(rob, case["case_id"]), decision="reject").status_code == 200

    response = _post(rita, case["case_id"], stale, decision="accept")

    assert response.status_code == 409
    assert "STALE_CASE_REVISION" in response.text
    assert "revision <strong>2</strong>" in response.text
    assert 'id="decision"' not in response.text  # dismissed now: nothing left to decide


def test_another_tenants_case_is_404_and_the_tenant_switch_needs_a_membership(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    mia = login("mia")  # operator_admin in ten_other (active), viewer in ten_primary
    assert mia.session().json()["active_tenant"] == OTHER_TENANT

    assert mia.http.get(f"/console/review/{case['case_id']}").status_code == 404
    denied = mia.http.post("/console/tenant", data={"csrf_token": mia.csrf, "tenant_id": "ten_nobody"})
    assert denied.status_code == 403
    assert "TENANT_SCOPE_DENIED" in denied.text
    switched = mia.http.post("/console/tenant", data={"csrf_token": mia.csrf, "tenant_id": TENANT})
    assert switched.status_code == 200
    assert case["case_id"] in switched.text  # the queue of ten_primary


def test_console_pages_forbid_foreign_scripts_and_stay_outside_the_contract(
    admin: BackgroundServer, login: Login, cases: Cases
) -> None:
    cases.open()
    page = login("vic").http.get("/console/review")

    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert page.headers["cache-control"] == "no-store"
    assert login("vic").http.get("/console/static/console.js").status_code == 200
    paths = httpx.get(f"{admin.url}/openapi.json").json()["paths"]
    assert [path for path in paths if path.startswith("/console")] == []


def test_a_models_advice_shows_beside_the_case_as_advisory_and_the_form_is_unchanged(
    login: Login, cases: Cases, resolver_db: Database
) -> None:
    case = cases.open()
    key = AdviceKey(TENANT, case["case_id"], case["revision"], "review-case@3", "fake-model-1")
    recommendation = {
        "action": "map_to",
        "item_id": cases.item(),
        "rationale": "<script>alert(1)</script> same brand",
        "cited_evidence": [case["capture_id"]],
    }
    resolver_db.run(
        lambda conn: record_advice(
            conn,
            key,
            case["catalog_id"],
            status="advised",
            recommendation=recommendation,
            answered_by="fake-model-1",
            repaired=False,
            error=None,
            now=datetime.now(UTC),
        ),
        tenant_id=TENANT,
    )
    rita = login("rita")

    page = rita.http.get(f"/console/review/{case['case_id']}")
    body = rita.http.get(f"/v1/review/{case['case_id']}").json()

    assert page.status_code == 200
    assert "Model advice" in page.text
    assert "advisory: you decide" in page.text
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt; same brand" in page.text
    )  # model text is escaped like page text
    assert _field(page.text, "expected_revision") == str(case["revision"])
    assert [(a["advisory"], a["status"], a["recommendation"]["item_id"]) for a in body["llm_advice"]] == [
        (True, "advised", cases.item())
    ]
    assert body["llm_proposals"] == []

"""if_review_read over real HTTP: ``GET /v1/review`` and ``GET /v1/review/{case_id}`` on review cases that real
resolution opened, and the signed evidence links of a case (``GET /v1/evidence/{token}``). One test per error row
of the seed's table (401 SESSION_EXPIRED, 403 TENANT_SCOPE_DENIED, 404 NOT_FOUND) plus the cursor's 422 and the
evidence link's 403/404."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx

from tests.e2e.admin.conftest import OTHER_TENANT, TENANT, Cases, MovableClock, Operator

Login = Callable[[str], Operator]


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


def _queue(operator: Operator, **params: Any) -> dict[str, Any]:
    response = operator.http.get("/v1/review", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_queue_lists_awaiting_cases_oldest_first_with_counts_of_the_filtered_set(
    login: Login, cases: Cases
) -> None:
    first, second = cases.open(), cases.open()
    vic = login("vic")  # if_review_read: role viewer or higher

    body = _queue(vic, status="awaiting_human")

    assert [c["case_id"] for c in body["cases"]] == [first["case_id"], second["case_id"]]
    listed = body["cases"][0]
    assert listed["revision"] == first["revision"]
    assert listed["source_id"] == first["source_id"]
    assert listed["candidates"] >= 1
    assert listed["top_score"] > 0
    assert body["counts"] == {
        "total": 2,
        "status": {"awaiting_human": 2},
        "kind": {first["kind"]: 2},
    }
    assert body["next_cursor"] is None


def test_cursor_paging_is_stable_and_complete(login: Login, cases: Cases) -> None:
    opened = [cases.open()["case_id"] for _ in range(3)]
    rita = login("rita")

    seen: list[str] = []
    cursor: str | None = None
    for _ in range(4):
        body = _queue(rita, limit=1, **({"cursor": cursor} if cursor else {}))
        seen += [c["case_id"] for c in body["cases"]]
        assert body["counts"]["total"] == 3  # the filtered set, not the page
        cursor = body["next_cursor"]
        if cursor is None:
            break

    assert seen == opened


def test_a_cursor_the_server_did_not_issue_is_422_invalid_cursor(login: Login, cases: Cases) -> None:
    cases.open(), cases.open()
    rita = login("rita")
    cursor = _queue(rita, limit=1)["next_cursor"]
    assert cursor

    payload, _, mac = cursor.partition(".")
    _error(rita.http.get("/v1/review", params={"cursor": "bm90LW91cnM.AAAA"}), 422, "INVALID_CURSOR")
    _error(rita.http.get("/v1/review", params={"cursor": f"{payload}x.{mac}"}), 422, "INVALID_CURSOR")
    _error(rita.http.get("/v1/review", params={"cursor": cursor, "status": "decided"}), 422, "INVALID_CURSOR")


def test_filters_by_status_kind_and_source(login: Login, cases: Cases) -> None:
    case = cases.open()
    rita = login("rita")

    assert _queue(rita, kind=case["kind"], source=case["source_id"])["counts"]["total"] == 1
    assert _queue(rita, kind="conflicting_identifiers")["cases"] == []
    assert _queue(rita, source="src_elsewhere")["counts"] == {"total": 0, "status": {}, "kind": {}}
    assert _queue(rita, status="decided")["cases"] == []
    _error(rita.http.get("/v1/review", params={"status": "pending"}), 422, "VALIDATION_FAILED")


def test_a_decided_case_leaves_the_awaiting_queue_and_its_history_shows_the_decision(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    rita = login("rita")
    decided = rita.decide(
        {
            "case_id": case["case_id"],
            "expected_revision": case["revision"],
            "action": "accept",
            "rationale": "same anvil",
        }
    )
    assert decided.status_code == 201, decided.text

    assert _queue(rita, status="awaiting_human")["cases"] == []
    assert [c["case_id"] for c in _queue(rita, status="decided")["cases"]] == [case["case_id"]]
    detail = rita.http.get(f"/v1/review/{case['case_id']}").json()
    assert detail["status"] == "decided"
    assert detail["revision"] == case["revision"] + 1
    assert [(h["action"], h["actor"]) for h in detail["history"]] == [
        ("open_review_case", "rule:review_required@1"),
        ("map_listing", "reviewer:rita"),
    ]
    assert detail["history"][1]["review_action"] == "accept"
    assert detail["history"][1]["decision_id"] == decided.json()["decision_id"]


def test_a_case_reads_with_claims_candidates_excerpt_evidence_links_and_revision(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    vic = login("vic")

    response = vic.http.get(f"/v1/review/{case['case_id']}")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["revision"] == case["revision"]
    assert body["status"] == "awaiting_human"
    assert body["adapter"]
    assert "@" in body["adapter"]
    assert body["claims"], "the adapter's claims"
    assert all(c["adapter"] == body["adapter"] and c["evidence_locator"] for c in body["claims"])
    assert body["attributes"]
    assert body["profile"]
    assert isinstance(body["problems"], list)
    candidate = body["candidates"][0]
    assert candidate["rank"] == 1
    assert candidate["item_id"] == cases.item()
    assert candidate["score"] > 0
    assert candidate["item"]["status"] == "active"
    assert body["excerpt"]["text"]
    assert "<" not in body["excerpt"]["text"]
    assert len(body["excerpt"]["text"]) <= 4000
    [link] = body["evidence"]
    assert link["url"].startswith("/v1/evidence/")
    assert [h["action"] for h in body["history"]] == ["open_review_case"]


def test_an_evidence_link_reads_the_stored_bytes_as_a_sandboxed_document(login: Login, cases: Cases) -> None:
    case = cases.open()
    vic = login("vic")
    [link] = vic.http.get(f"/v1/review/{case['case_id']}").json()["evidence"]

    anonymous = httpx.get(str(vic.http.base_url.join(link["url"])))

    assert anonymous.status_code == 200
    assert len(anonymous.content) == link["size"]
    assert anonymous.headers["content-type"].startswith(link["media_type"])
    assert anonymous.headers["content-security-policy"].startswith("sandbox")
    assert anonymous.headers["x-content-type-options"] == "nosniff"


def test_a_forged_evidence_link_is_404_not_found(login: Login, cases: Cases) -> None:
    case = cases.open()
    vic = login("vic")
    [link] = vic.http.get(f"/v1/review/{case['case_id']}").json()["evidence"]
    token = link["url"].removeprefix("/v1/evidence/")
    payload, _, mac = token.partition(".")

    _error(vic.http.get(f"/v1/evidence/{payload}A.{mac}"), 404, "NOT_FOUND")
    _error(vic.http.get("/v1/evidence/not-a-token"), 404, "NOT_FOUND")


def test_an_expired_evidence_link_is_403_link_expired(
    login: Login, cases: Cases, clock: MovableClock
) -> None:
    case = cases.open()
    vic = login("vic")
    [link] = vic.http.get(f"/v1/review/{case['case_id']}").json()["evidence"]

    clock.advance(timedelta(minutes=6))

    _error(vic.http.get(link["url"]), 403, "LINK_EXPIRED")


def test_without_a_session_the_queue_and_a_case_are_401_session_expired(login: Login, cases: Cases) -> None:
    case = cases.open()
    rita = login("rita")
    anonymous = httpx.Client(base_url=str(rita.http.base_url))
    with anonymous:
        _error(anonymous.get("/v1/review"), 401, "SESSION_EXPIRED")
        _error(anonymous.get(f"/v1/review/{case['case_id']}"), 401, "SESSION_EXPIRED")


def test_another_tenant_is_403_tenant_scope_denied(login: Login, cases: Cases) -> None:
    case = cases.open()
    otto = login("otto")  # reviewer in ten_other only

    _error(otto.http.get("/v1/review", headers={"X-PRW-Tenant": TENANT}), 403, "TENANT_SCOPE_DENIED")
    _error(
        otto.http.get(f"/v1/review/{case['case_id']}", headers={"X-PRW-Tenant": TENANT}),
        403,
        "TENANT_SCOPE_DENIED",
    )


def test_only_the_active_tenants_cases_are_read_and_others_are_404_not_found(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    otto = login("otto")
    assert otto.session().json()["active_tenant"] == OTHER_TENANT

    assert _queue(otto)["cases"] == []
    _error(otto.http.get(f"/v1/review/{case['case_id']}"), 404, "NOT_FOUND")
    _error(login("rita").http.get("/v1/review/rc_doesnotexist"), 404, "NOT_FOUND")

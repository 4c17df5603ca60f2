"""if_review_decision over real HTTP (AW-01 for humans): POST /v1/decisions on review cases that real resolution
opened, with an operator session from the development identity provider. One test per error row of the seed's
table (409 STALE_CASE_REVISION, 403 FORBIDDEN, 403 TENANT_SCOPE_DENIED, 503 UNAVAILABLE) plus the invariants
(INV-02, INV-07: 409 naming the invariant): a refused decision writes nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from prw_platform.db.database import Database
from tests.e2e.admin.conftest import OTHER_TENANT, TENANT, Cases, Operator

Login = Callable[[str], Operator]


def _body(case: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "case_id": case["case_id"],
        "expected_revision": case["revision"],
        "rationale": "title and spec grid name the same product",
        **fields,
    }


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    return str(error["message"])


def test_a_reviewer_maps_a_case_201_with_the_decision_revision_and_outbox_events(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    item_id = cases.item()
    assert cases.receipt_status(case["capture_id"]) == "in_review"
    rita = login("rita")

    response = rita.decide(_body(case, action="map_to", map_to=item_id))

    assert response.status_code == 201, response.text
    body = response.json()
    assert body["case_id"] == case["case_id"]
    assert body["case_revision"] == case["revision"] + 1
    assert body["item_id"] == item_id
    decision = cases.resolution.one(
        "SELECT * FROM resolver.decision WHERE decision_id = %s", body["decision_id"]
    )
    assert decision["actor"] == "reviewer:rita"
    assert decision["rationale"] == "title and spec grid name the same product"
    assert decision["case_revision"] == case["revision"] + 1
    assert decision["prior_decisions"] == [case["opened_by"]]  # the rule's decision that opened the case
    assert case["capture_id"] in decision["evidence"]
    assert decision["details"]["review_action"] == "map_to"
    events = cases.resolution.rows(
        "SELECT event_id, aggregate_type, position FROM resolver.outbox WHERE decision_id = %s ORDER BY position",
        body["decision_id"],
    )
    assert [e["event_id"] for e in events] == body["outbox"]
    assert "listing_mapping" in {e["aggregate_type"] for e in events}
    mapping = cases.resolution.one(
        "SELECT item_id, decision_id FROM resolver.listing_mapping WHERE listing_id = %s", case["listing_id"]
    )
    assert mapping == {"item_id": item_id, "decision_id": body["decision_id"]}
    status = cases.resolution.one(
        "SELECT status FROM resolver.review_case WHERE case_id = %s", case["case_id"]
    )
    assert status["status"] == "decided"
    # if_receipt_get: a committed human decision moves the capture's receipt from in_review to accepted.
    assert cases.receipt_status(case["capture_id"]) == "accepted"


def test_deciding_a_decided_case_again_is_a_correction_linked_to_every_earlier_decision(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    rita = login("rita")
    first = rita.decide(_body(case, action="create_item"))
    assert first.status_code == 201, first.text

    # At the case's new revision (read again), a reviewer corrects the decision: map to the existing item.
    again = {**case, "revision": first.json()["case_revision"]}
    correction = rita.decide(_body(again, action="map_to", map_to=cases.item()))

    assert correction.status_code == 201, correction.text
    decision = cases.resolution.one(
        "SELECT prior_decisions FROM resolver.decision WHERE decision_id = %s",
        correction.json()["decision_id"],
    )
    assert decision["prior_decisions"] == [case["opened_by"], first.json()["decision_id"]]
    mapping = cases.resolution.one(
        "SELECT item_id FROM resolver.listing_mapping WHERE listing_id = %s", case["listing_id"]
    )
    assert mapping == {"item_id": cases.item()}


def test_accept_maps_to_the_top_ranked_candidate(login: Login, cases: Cases) -> None:
    case = cases.open()
    assert case["candidates"], "the racing bike's brand names the anvil's item as a candidate"
    top = max(case["candidates"], key=lambda c: c["score"])["item_id"]

    response = login("rita").decide(_body(case, action="accept"))

    assert response.status_code == 201, response.text
    assert response.json()["item_id"] == top


def test_create_item_with_an_id_and_family_creates_it_and_maps_the_listing(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    before = cases.count("resolver.catalog_item")

    response = login("rita").decide(
        _body(case, action="create_item", create_item={"id": "itm_racing_bike_1", "family": "fam_bikes"})
    )

    assert response.status_code == 201, response.text
    assert response.json()["item_id"] == "itm_racing_bike_1"
    assert cases.count("resolver.catalog_item") == before + 1
    decision = cases.resolution.one(
        "SELECT details, action FROM resolver.decision WHERE decision_id = %s", response.json()["decision_id"]
    )
    assert decision["action"] == "create_item_and_map"
    assert decision["details"]["family"] == "fam_bikes"


def test_reject_closes_the_case_without_a_mapping(login: Login, cases: Cases) -> None:
    case = cases.open()
    response = login("rita").decide(_body(case, action="reject"))
    assert response.status_code == 201, response.text
    row = cases.resolution.one("SELECT status FROM resolver.review_case WHERE case_id = %s", case["case_id"])
    assert row["status"] == "dismissed"
    assert (
        cases.resolution.rows(
            "SELECT 1 FROM resolver.listing_mapping WHERE listing_id = %s", case["listing_id"]
        )
        == []
    )


def test_stale_case_revision_is_409_and_writes_nothing(login: Login, cases: Cases) -> None:
    case = cases.open()
    rita = login("rita")
    assert rita.decide(_body(case, action="reject")).status_code == 201
    before = cases.written()

    response = rita.decide(_body(case, action="map_to", map_to=cases.item()))

    message = _error(response, 409, "STALE_CASE_REVISION")
    assert f"revision {case['revision'] + 1}" in message
    assert cases.written() == before


def test_a_viewer_is_403_forbidden_and_writes_nothing(login: Login, cases: Cases) -> None:
    case = cases.open()
    before = cases.written()
    _error(login("vic").decide(_body(case, action="map_to", map_to=cases.item())), 403, "FORBIDDEN")
    assert cases.written() == before


def test_another_tenants_case_is_403_tenant_scope_denied_and_writes_nothing(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    before = cases.written()
    otto = login("otto")  # a reviewer of ten_other only
    response = otto.decide(_body(case, action="map_to", map_to=cases.item()), **{"X-PRW-Tenant": TENANT})
    _error(response, 403, "TENANT_SCOPE_DENIED")
    # In its own tenant the case does not exist (row-level security): 404, nothing written either.
    _error(otto.decide(_body(case, action="map_to", map_to=cases.item())), 404, "NOT_FOUND")
    assert otto.session().json()["active_tenant"] == OTHER_TENANT
    assert cases.written() == before


def test_without_the_csrf_token_a_decision_is_403_and_writes_nothing(login: Login, cases: Cases) -> None:
    case = cases.open()
    before = cases.written()
    rita = login("rita")
    response = rita.http.post("/v1/decisions", json=_body(case, action="reject"))
    _error(response, 403, "CSRF_REJECTED")
    wrong = rita.http.post(
        "/v1/decisions", json=_body(case, action="reject"), headers={"X-CSRF-Token": "guess"}
    )
    _error(wrong, 403, "CSRF_REJECTED")
    assert cases.written() == before


def test_without_a_session_a_decision_is_401_session_expired(login: Login, cases: Cases) -> None:
    case = cases.open()
    rita = login("rita")
    csrf = rita.csrf
    rita.http.cookies.clear()
    before = cases.written()
    response = rita.http.post(
        "/v1/decisions", json=_body(case, action="reject"), headers={"X-CSRF-Token": csrf}
    )
    _error(response, 401, "SESSION_EXPIRED")
    assert cases.written() == before


def test_mapping_to_an_item_that_does_not_exist_is_409_inv_07_and_writes_nothing(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    before = cases.written()
    message = _error(
        login("rita").decide(_body(case, action="map_to", map_to="itm_no_such_item")),
        409,
        "INVARIANT_VIOLATION",
    )
    assert message.startswith("INV-07")
    assert cases.written() == before


def test_a_correction_outside_the_pinned_profile_is_409_inv_02_and_writes_nothing(
    login: Login, cases: Cases
) -> None:
    """The reviewer path checks INV-02 with the definitions of the profile the case was normalized with."""
    case = cases.open()
    before = cases.written()
    rita = login("rita")
    unknown = rita.decide(_body(case, action="correct", corrections={"storage:warp_drive": True}))
    assert _error(unknown, 409, "INVARIANT_VIOLATION").startswith("INV-02")
    assert cases.written() == before


def test_a_correction_of_the_wrong_type_is_409_inv_02_and_writes_nothing(login: Login, cases: Cases) -> None:
    case = cases.open()
    before = cases.written()
    rita = login("rita")
    for value in ({"not": "an identifier"}, 42, ""):
        wrong = rita.decide(_body(case, action="correct", corrections={"core:mpn": value}))
        assert _error(wrong, 409, "INVARIANT_VIOLATION").startswith("INV-02")
    offer = rita.decide(_body(case, action="correct", corrections={"core:price": "9.99"}))
    _error(offer, 422, "VALIDATION_FAILED")
    assert cases.written() == before


def test_a_correct_decision_creates_the_corrected_item(login: Login, cases: Cases) -> None:
    case = cases.open()
    response = login("rita").decide(
        _body(
            case,
            action="correct",
            corrections={"core:mpn": "ACME-RB-2026"},
            create_item={"id": "itm_acme_racing_bike"},
            map_to="itm_acme_racing_bike",
        )
    )
    assert response.status_code == 201, response.text
    item = cases.resolution.one(
        "SELECT identifiers FROM resolver.catalog_item WHERE item_id = %s", "itm_acme_racing_bike"
    )
    assert "ACME-RB-2026" in str(item["identifiers"])


def test_the_same_idempotency_key_replays_the_first_decision(login: Login, cases: Cases) -> None:
    case = cases.open()
    rita = login("rita")
    body = _body(case, action="map_to", map_to=cases.item())
    first = rita.decide(body, key="decide-1")
    assert first.status_code == 201, first.text
    after_first = cases.written()

    replay = rita.decide(body, key="decide-1")

    assert replay.status_code == 200
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == first.json()
    assert cases.written() == after_first
    conflict = rita.decide(_body(case, action="reject"), key="decide-1")
    _error(conflict, 409, "IDEMPOTENCY_CONFLICT")
    assert cases.written() == after_first


def test_the_body_cannot_name_an_actor(login: Login, cases: Cases) -> None:
    """if_review_decision: "An LLM actor can never call this": the actor is the session's operator."""
    case = cases.open()
    before = cases.written()
    response = login("rita").decide(_body(case, action="reject", actor="llm:gpt@1"))
    _error(response, 422, "VALIDATION_FAILED")
    assert cases.written() == before


def test_a_missing_rationale_is_422(login: Login, cases: Cases) -> None:
    case = cases.open()
    body = _body(case, action="reject")
    del body["rationale"]
    _error(login("rita").decide(body), 422, "VALIDATION_FAILED")
    _error(login("rob").decide({**body, "rationale": ""}), 422, "VALIDATION_FAILED")


def test_two_reviewers_deciding_one_case_at_once_make_one_decision_and_one_409(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    item_id = cases.item()
    reviewers = [login("rita"), login("rob")]
    start = threading.Barrier(2)

    def decide(operator: Operator) -> httpx.Response:
        start.wait(30)
        return operator.decide(_body(case, action="map_to", map_to=item_id))

    with ThreadPoolExecutor(2) as pool:
        responses = list(pool.map(decide, reviewers))

    assert sorted(r.status_code for r in responses) == [201, 409]
    (stale,) = [r for r in responses if r.status_code == 409]
    assert stale.json()["error"]["code"] == "STALE_CASE_REVISION"
    human = cases.resolution.rows(
        "SELECT decision_id FROM resolver.decision WHERE case_id = %s AND actor LIKE 'reviewer:%%'",
        case["case_id"],
    )
    assert len(human) == 1


def test_many_reviewers_on_one_stream_commit_contiguous_positions_in_position_order(
    login: Login, cases: Cases
) -> None:
    """INV-03 for human decisions: writers of one stream serialize on its cursor row, so a tailing reader never
    sees a later position committed before an earlier one (commit order = position order), and the positions
    are contiguous."""
    opened = [cases.open() for _ in range(6)]
    item_id = cases.item()
    reviewers = [login("rita"), login("rob"), login("ada")]
    first_new = int(cases.resolution.one("SELECT max(position) AS p FROM resolver.outbox")["p"]) + 1
    gaps: list[list[int]] = []
    done = threading.Event()

    def tail() -> None:
        while not done.is_set():
            seen = [
                r["position"]
                for r in cases.resolution.rows("SELECT position FROM resolver.outbox ORDER BY position")
            ]
            if seen != list(range(1, len(seen) + 1)):
                gaps.append(seen)

    start = threading.Barrier(len(opened))

    def decide(n: int) -> httpx.Response:
        start.wait(30)
        return reviewers[n % len(reviewers)].decide(_body(opened[n], action="map_to", map_to=item_id))

    reader = threading.Thread(target=tail)
    reader.start()
    try:
        with ThreadPoolExecutor(len(opened)) as pool:
            responses = list(pool.map(decide, range(len(opened))))
    finally:
        done.set()
        reader.join()

    assert [r.status_code for r in responses] == [201] * len(opened)
    assert gaps == []
    positions = sorted(
        p["position"]
        for r in responses
        for p in cases.resolution.rows(
            "SELECT position FROM resolver.outbox WHERE decision_id = %s", r.json()["decision_id"]
        )
    )
    assert positions == list(range(first_new, first_new + len(positions)))


def test_a_stream_held_past_the_api_timeout_is_503_unavailable_then_the_same_key_decides(
    login: Login, cases: Cases, owner: Database
) -> None:
    """503 UNAVAILABLE (retry with the same Idempotency-Key): a delayed writer holds the stream cursor (AW-01: "A
    delayed writer blocks later commits in this stream") longer than the API's statement timeout. The refused
    attempt writes nothing; the retry with the same key, once the stream is free, decides."""
    case = cases.open()
    rita = login("rita")
    body = _body(case, action="map_to", map_to=cases.item())
    before = cases.written()

    with owner.transaction() as conn:
        conn.execute(
            "SELECT committed_position FROM resolver.stream_cursor WHERE tenant_id = %s FOR UPDATE", (TENANT,)
        )
        refused = rita.decide(body, key="held-stream-1")
        _error(refused, 503, "UNAVAILABLE")
        assert refused.json()["error"]["retryable"] is True
        assert refused.headers["retry-after"]
        assert cases.written() == before

    retried = rita.decide(body, key="held-stream-1")
    assert retried.status_code == 201, retried.text
    assert retried.json()["case_revision"] == case["revision"] + 1

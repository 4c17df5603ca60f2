"""Improvements over real HTTP: operators create one for a selection of stored captures, a
reviewer who did not write it approves it, an operator abandons it; every move is recorded and only the moves of
the lifecycle exist (draft → reviewer_approved → applied, draft / reviewer_approved → abandoned). Errors: 403
FORBIDDEN (role; approving one's own), 404 NOT_FOUND (unknown, another tenant's, unknown catalog), 409
INVALID_TRANSITION, 409 IDEMPOTENCY_CONFLICT, 422 UNKNOWN_ADAPTER_VERSION / UNKNOWN_PROFILE_VERSION /
VALIDATION_FAILED; a refused request writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import psycopg
import pytest

from prw_platform.db.database import Database
from tests.e2e.admin.conftest import OTHER_TENANT, TENANT, Cases, Operator
from tests.integration.resolution.pipeline import CATALOG, SOURCE

Login = Callable[[str], Operator]


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


def _post(operator: Operator, path: str, body: dict[str, Any], key: str | None = None) -> httpx.Response:
    headers = {"X-CSRF-Token": operator.csrf}
    if key is not None:
        headers["Idempotency-Key"] = key
    return operator.http.post(path, json=body, headers=headers)


def _body(**overrides: Any) -> dict[str, Any]:
    return {
        "catalog_id": CATALOG,
        "adapter_version": "pa_schemaorg@1.1.0",
        "profile_version": "np_core@1",
        "selection": {"source_id": SOURCE, "adapter": "pa_schemaorg@3.0.0"},
        "rationale": "1.1.0 reads availability from visible text",
        **overrides,
    }


def _rows(owner: Database) -> tuple[int, int]:
    row = owner.run(
        lambda conn: conn.execute(
            "SELECT (SELECT count(*) FROM resolver.improvement) AS i,"
            " (SELECT count(*) FROM resolver.improvement_transition) AS t"
        ).fetchone()
    )
    assert row is not None
    return int(row["i"]), int(row["t"])


def test_create_read_approve_by_another_reviewer_records_every_move(login: Login, cases: Cases) -> None:
    first, second = cases.open(), cases.open()
    ada, rita = login("ada"), login("rita")

    created = _post(ada, "/v1/improvements", _body(), key="imp-key-1")
    assert created.status_code == 201, created.text
    improvement = created.json()
    improvement_id = improvement["improvement_id"]
    assert improvement["status"] == "draft"
    # Three captures of the source were extracted by pa_schemaorg@3.0.0 (the newest): the anvil and the two bikes.
    assert improvement["captures"] == 3
    assert {first["capture_id"], second["capture_id"]} <= set(improvement["sample_capture_ids"])

    again = _post(ada, "/v1/improvements", _body(), key="imp-key-1")
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["improvement_id"] == improvement_id

    approved = _post(rita, f"/v1/improvements/{improvement_id}/approve", {"rationale": "diff looks right"})
    assert approved.status_code == 200, approved.text
    read = login("vic").http.get(f"/v1/improvements/{improvement_id}").json()

    assert read["status"] == "reviewer_approved"
    assert [(t["from_status"], t["to_status"], t["actor"], t["rationale"]) for t in read["transitions"]] == [
        (None, "draft", "operator:ada", "1.1.0 reads availability from visible text"),
        ("draft", "reviewer_approved", "reviewer:rita", "diff looks right"),
    ]
    listed = login("vic").http.get("/v1/improvements").json()["improvements"]
    assert [(i["improvement_id"], i["status"]) for i in listed] == [(improvement_id, "reviewer_approved")]


def test_selection_by_review_case_kind_and_capture_ids(login: Login, cases: Cases) -> None:
    case = cases.open()
    ada = login("ada")

    by_kind = _post(ada, "/v1/improvements", _body(selection={"review_case_kind": "no_strong_identifier"}))
    by_ids = _post(ada, "/v1/improvements", _body(selection={"capture_ids": [case["capture_id"]]}))

    assert (by_kind.json()["captures"], by_kind.json()["sample_capture_ids"]) == (1, [case["capture_id"]])
    assert by_ids.json()["captures"] == 1


def test_the_author_cannot_approve_and_only_lifecycle_moves_exist(
    login: Login, cases: Cases, owner: Database
) -> None:
    cases.open()
    ada, rita = login("ada"), login("rita")
    improvement_id = _post(ada, "/v1/improvements", _body()).json()["improvement_id"]
    before = _rows(owner)

    _error(_post(ada, f"/v1/improvements/{improvement_id}/approve", {"rationale": "mine"}), 403, "FORBIDDEN")
    assert _rows(owner) == before

    assert (
        _post(ada, f"/v1/improvements/{improvement_id}/abandon", {"rationale": "superseded"}).status_code
        == 200
    )
    after_abandon = _rows(owner)
    _error(
        _post(rita, f"/v1/improvements/{improvement_id}/approve", {"rationale": "late"}),
        409,
        "INVALID_TRANSITION",
    )
    _error(
        _post(ada, f"/v1/improvements/{improvement_id}/abandon", {"rationale": "twice"}),
        409,
        "INVALID_TRANSITION",
    )
    assert _rows(owner) == after_abandon

    # The table refuses a move the lifecycle does not have, whatever code path tries it.
    with pytest.raises(psycopg.errors.CheckViolation):
        owner.run(
            lambda conn: conn.execute(
                "UPDATE resolver.improvement SET status = 'draft' WHERE improvement_id = %s",
                (improvement_id,),
            )
        )


def test_roles_and_csrf(login: Login, cases: Cases, owner: Database) -> None:
    cases.open()
    improvement_id = _post(login("ada"), "/v1/improvements", _body()).json()["improvement_id"]
    before = _rows(owner)
    rita, vic = login("rita"), login("vic")

    _error(_post(rita, "/v1/improvements", _body()), 403, "FORBIDDEN")  # reviewers do not create
    _error(_post(vic, f"/v1/improvements/{improvement_id}/approve", {"rationale": "x"}), 403, "FORBIDDEN")
    _error(_post(rita, f"/v1/improvements/{improvement_id}/abandon", {"rationale": "x"}), 403, "FORBIDDEN")
    no_csrf = rita.http.post(f"/v1/improvements/{improvement_id}/approve", json={"rationale": "x"})
    _error(no_csrf, 403, "CSRF_REJECTED")
    assert _rows(owner) == before


def test_refused_creates_write_nothing(login: Login, cases: Cases, owner: Database) -> None:
    cases.open()
    ada = login("ada")
    before = _rows(owner)

    _error(
        _post(ada, "/v1/improvements", _body(adapter_version="pa_schemaorg@9.9.9")),
        422,
        "UNKNOWN_ADAPTER_VERSION",
    )
    _error(
        _post(ada, "/v1/improvements", _body(profile_version="np_core@99")), 422, "UNKNOWN_PROFILE_VERSION"
    )
    _error(
        _post(ada, "/v1/improvements", _body(selection={"source_id": "src_nowhere"})),
        422,
        "VALIDATION_FAILED",
    )
    _error(_post(ada, "/v1/improvements", _body(selection={})), 422, "VALIDATION_FAILED")
    _error(
        _post(ada, "/v1/improvements", _body(adapter_version=None, profile_version=None)),
        422,
        "VALIDATION_FAILED",
    )
    _error(_post(ada, "/v1/improvements", _body(catalog_id="cat_nowhere")), 404, "NOT_FOUND")
    assert _rows(owner) == before

    assert _post(ada, "/v1/improvements", _body(), key="k-1").status_code == 201
    conflict = _post(ada, "/v1/improvements", _body(rationale="another reason"), key="k-1")
    _error(conflict, 409, "IDEMPOTENCY_CONFLICT")


def test_unknown_and_other_tenants_improvements_are_404(login: Login, cases: Cases) -> None:
    cases.open()
    improvement_id = _post(login("ada"), "/v1/improvements", _body()).json()["improvement_id"]
    mia = login("mia")  # operator_admin of the other tenant, viewer here

    _error(
        mia.http.get(f"/v1/improvements/{improvement_id}", headers={"X-PRW-Tenant": OTHER_TENANT}),
        404,
        "NOT_FOUND",
    )
    _error(login("vic").http.get("/v1/improvements/imp_nowhere"), 404, "NOT_FOUND")
    assert (
        mia.http.get(f"/v1/improvements/{improvement_id}", headers={"X-PRW-Tenant": TENANT}).status_code
        == 200
    )


def test_definition_versions_pinned_through_their_profile_reach_the_replay_pins(
    login: Login, cases: Cases
) -> None:
    cases.open()
    ada = login("ada")
    body = _body(profile_version="np_storage@2", definition_version="storage:capacity@1,storage:interface@1")

    created = _post(ada, "/v1/improvements", body)
    assert created.status_code == 201, created.text
    replay = _post(ada, f"/v1/improvements/{created.json()['improvement_id']}/replays", {})

    assert replay.status_code == 202, replay.text
    assert replay.json()["pins"] == {
        "adapter": "pa_schemaorg@1.1.0",
        "profile": "np_storage@2",
        "identity_generation": 1,
        "definition_versions": {"storage:capacity": 1, "storage:interface": 1},
    }

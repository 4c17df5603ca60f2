"""Releases over real HTTP: ``POST /v1/releases`` and ``PUT /v1/catalogs/{id}/release-policy``
with an operator_admin session from the development identity provider, over items that real resolution
accepted. Each is an AW-01 decision (actor, rationale, the stream cursor lock); a refused request writes
nothing. Errors: 401 SESSION_EXPIRED, 403 FORBIDDEN, 403 CSRF_REJECTED, 403 TENANT_SCOPE_DENIED, 404 NOT_FOUND,
409 NOTHING_TO_RELEASE, 409 IDEMPOTENCY_CONFLICT."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from prw_api.server import BackgroundServer
from prw_platform.config import Settings
from prw_platform.db.database import Database
from tests.e2e.admin.conftest import TENANT, Cases, Operator
from tests.integration.resolution.pipeline import CATALOG

Login = Callable[[str], Operator]


@pytest.fixture
def admin_settings(admin_settings: Settings) -> Settings:
    """A short API statement timeout, so the held-stream test waits 1.5 s instead of 5 s per attempt."""
    return admin_settings.model_copy(update={"statement_timeout_api_ms": 1_500})


def _release(operator: Operator, body: dict[str, Any] | None = None, **headers: str) -> httpx.Response:
    sent = {"X-CSRF-Token": operator.csrf, **headers}
    return operator.http.post("/v1/releases", json=body or {"catalog_id": CATALOG}, headers=sent)


def _policy(operator: Operator, policy: str, *, catalog: str = CATALOG, **headers: str) -> httpx.Response:
    sent = {"X-CSRF-Token": operator.csrf, **headers}
    return operator.http.put(
        f"/v1/catalogs/{catalog}/release-policy",
        json={"release_policy": policy, "rationale": "the catalog owner reviews every publication"},
        headers=sent,
    )


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


def _accepted_on_a_manual_catalog(login: Login, cases: Cases) -> Operator:
    """ada switches the catalog to manual; then resolution accepts an item that nothing has released yet."""
    ada = login("ada")
    assert _policy(ada, "manual").status_code == 200
    cases.item()
    assert cases.count("resolver.released_item") == 0
    return ada


def test_switching_the_release_policy_is_an_immutable_decision_with_actor_and_rationale(
    login: Login, cases: Cases
) -> None:
    ada = login("ada")

    response = _policy(ada, "manual")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body == {
        "catalog_id": CATALOG,
        "release_policy": "manual",
        "previous": "automatic",
        "changed": True,
        "decision_id": body["decision_id"],
    }
    decision = cases.resolution.one(
        "SELECT * FROM resolver.decision WHERE decision_id = %s", body["decision_id"]
    )
    assert decision["action"] == "set_release_policy"
    assert decision["actor"] == "operator:ada"
    assert decision["rationale"] == "the catalog owner reviews every publication"
    assert decision["details"] == {"release_policy": "manual", "previous": "automatic"}
    policy = cases.resolution.one(
        "SELECT release_policy FROM resolver.catalog WHERE tenant_id = %s AND catalog_id = %s",
        TENANT,
        CATALOG,
    )
    assert policy["release_policy"] == "manual"
    # Once more: the catalog is manual already, nothing is recorded.
    again = _policy(ada, "manual")
    assert again.json()["changed"] is False
    assert again.json()["decision_id"] is None
    assert cases.count("resolver.decision") == 1


def test_a_manual_catalog_publishes_nothing_until_an_operator_releases_it_201(
    login: Login, cases: Cases
) -> None:
    ada = _accepted_on_a_manual_catalog(login, cases)
    position = cases.written()["cursor"]

    response = _release(ada)

    assert response.status_code == 201, response.text
    body = response.json()
    assert body["catalog_id"] == CATALOG
    assert body["release_id"] == f"rel_{CATALOG}"
    assert body["publication_revision"] == 1
    assert (body["items"], body["listings"]) == (1, 1)
    events = cases.resolution.rows(
        "SELECT event_id, event_type, position FROM resolver.outbox WHERE decision_id = %s",
        body["decision_id"],
    )
    # AW-01: one release.authorized at the next position of the stream.
    assert events == [
        {"event_id": body["outbox"][0], "event_type": "release.authorized", "position": position + 1}
    ]
    decision = cases.resolution.one(
        "SELECT * FROM resolver.decision WHERE decision_id = %s", body["decision_id"]
    )
    assert (decision["action"], decision["actor"]) == ("authorize_release", "operator:ada")
    # Provenance: the rule decision whose mapping this release makes public.
    mapping = cases.resolution.one("SELECT decision_id FROM resolver.listing_mapping")
    assert decision["prior_decisions"] == [mapping["decision_id"]]
    assert cases.count("resolver.released_item") == 1
    assert cases.count("resolver.released_listing") == 1


def test_nothing_left_to_release_is_409_nothing_to_release_and_writes_nothing(
    login: Login, cases: Cases
) -> None:
    ada = _accepted_on_a_manual_catalog(login, cases)
    assert _release(ada).status_code == 201
    before = cases.written()

    _error(_release(ada), 409, "NOTHING_TO_RELEASE")

    assert cases.written() == before


def test_the_same_idempotency_key_returns_the_first_release_and_another_body_is_409(
    login: Login, cases: Cases
) -> None:
    ada = _accepted_on_a_manual_catalog(login, cases)
    first = _release(ada, **{"Idempotency-Key": "release-1"})
    assert first.status_code == 201, first.text

    replay = _release(ada, **{"Idempotency-Key": "release-1"})

    assert replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    before = cases.written()
    other = {"catalog_id": CATALOG, "rationale": "another reason"}
    _error(_release(ada, other, **{"Idempotency-Key": "release-1"}), 409, "IDEMPOTENCY_CONFLICT")
    assert cases.written() == before


def test_a_release_after_a_new_acceptance_publishes_only_what_changed(login: Login, cases: Cases) -> None:
    ada = _accepted_on_a_manual_catalog(login, cases)
    assert _release(ada).json()["publication_revision"] == 1
    case = cases.open()
    rita = login("rita")
    decided = rita.decide(
        {
            "case_id": case["case_id"],
            "expected_revision": case["revision"],
            "action": "map_to",
            "map_to": cases.item(),
            "rationale": "the same anvil",
        }
    )
    assert decided.status_code == 201, decided.text

    second = _release(ada)

    assert second.status_code == 201, second.text
    assert second.json()["publication_revision"] == 2
    # The item is released already at its revision; only the new listing assignment is published.
    assert (second.json()["items"], second.json()["listings"]) == (0, 1)


def test_back_to_automatic_a_decision_publishes_in_its_own_transaction(login: Login, cases: Cases) -> None:
    ada = _accepted_on_a_manual_catalog(login, cases)
    assert _release(ada).status_code == 201
    assert _policy(ada, "automatic").json()["changed"] is True
    case = cases.open()

    decided = login("rita").decide(
        {
            "case_id": case["case_id"],
            "expected_revision": case["revision"],
            "action": "map_to",
            "map_to": cases.item(),
            "rationale": "the same anvil",
        }
    )

    assert decided.status_code == 201, decided.text
    types = cases.resolution.rows(
        "SELECT event_type FROM resolver.outbox WHERE decision_id = %s", decided.json()["decision_id"]
    )
    assert {"event_type": "release.authorized"} in types


def test_a_reviewer_is_403_forbidden_and_writes_nothing(login: Login, cases: Cases) -> None:
    cases.item()
    before = cases.written()
    rita = login("rita")

    _error(_release(rita), 403, "FORBIDDEN")
    _error(_policy(rita, "manual"), 403, "FORBIDDEN")

    assert cases.written() == before


def test_without_the_csrf_token_a_release_is_403_csrf_rejected(login: Login, cases: Cases) -> None:
    ada = login("ada")

    response = ada.http.post("/v1/releases", json={"catalog_id": CATALOG})
    policy = ada.http.put(
        f"/v1/catalogs/{CATALOG}/release-policy", json={"release_policy": "manual", "rationale": "r"}
    )

    _error(response, 403, "CSRF_REJECTED")
    _error(policy, 403, "CSRF_REJECTED")


def test_without_a_session_a_release_is_401_session_expired(admin: BackgroundServer) -> None:
    response = httpx.post(f"{admin.url}/v1/releases", json={"catalog_id": CATALOG})
    policy = httpx.put(
        f"{admin.url}/v1/catalogs/{CATALOG}/release-policy",
        json={"release_policy": "manual", "rationale": "r"},
    )

    _error(response, 401, "SESSION_EXPIRED")
    _error(policy, 401, "SESSION_EXPIRED")


def test_another_tenants_catalog_is_403_tenant_scope_denied(login: Login, cases: Cases) -> None:
    mia = login("mia")  # operator_admin of ten_other, viewer of ten_primary

    _error(_release(mia, **{"X-PRW-Tenant": TENANT}), 403, "FORBIDDEN")
    otto = login("otto")
    _error(_release(otto, **{"X-PRW-Tenant": TENANT}), 403, "TENANT_SCOPE_DENIED")


def test_an_unknown_catalog_is_404_not_found(login: Login, cases: Cases) -> None:
    ada = login("ada")

    _error(_release(ada, {"catalog_id": "cat_nowhere"}), 404, "NOT_FOUND")
    _error(_policy(ada, "manual", catalog="cat_nowhere"), 404, "NOT_FOUND")
    assert cases.count("resolver.decision") == 0


def test_two_releases_at_once_make_one_release_and_one_409(login: Login, cases: Cases) -> None:
    """AW-01: both wait for the stream cursor lock; the second then finds nothing left to release."""
    ada = _accepted_on_a_manual_catalog(login, cases)
    second = login("ada")
    start = threading.Barrier(2)

    def release(operator: Operator) -> int:
        start.wait()
        return _release(operator).status_code

    with ThreadPoolExecutor(2) as pool:
        statuses = sorted(pool.map(release, (ada, second)))

    assert statuses == [201, 409]
    assert cases.count("resolver.release") == 1


def test_a_stream_held_past_the_api_timeout_is_503_unavailable_then_the_same_key_releases(
    login: Login, cases: Cases, owner: Database
) -> None:
    """503 UNAVAILABLE (retry with the same Idempotency-Key): a delayed writer holds the stream cursor longer than
    the API's statement timeout; the refused release writes nothing, the retry releases."""
    ada = _accepted_on_a_manual_catalog(login, cases)
    before = cases.written()

    with owner.transaction() as conn:
        conn.execute(
            "SELECT committed_position FROM resolver.stream_cursor WHERE tenant_id = %s FOR UPDATE", (TENANT,)
        )
        refused = _release(ada, **{"Idempotency-Key": "held-stream-release"})
        _error(refused, 503, "UNAVAILABLE")
        assert refused.json()["error"]["retryable"] is True
        assert cases.written() == before

    retried = _release(ada, **{"Idempotency-Key": "held-stream-release"})
    assert retried.status_code == 201, retried.text

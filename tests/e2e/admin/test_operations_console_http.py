"""The console's operations pages over real HTTP: the collector fleet (the service of
``GET /v1/workers``), a decision's page (``GET /v1/decisions/{id}``) linked from the case's history, and "Release
now" on a manual catalog (``POST /v1/releases``: operator_admin, CSRF, the Idempotency-Key made when the page was
drawn). Per role: a viewer reads the fleet and the releases but a release is a 403 FORBIDDEN page; errors are
pages with the seed's status and code (403 CSRF_REJECTED, 404 NOT_FOUND, 409 NOTHING_TO_RELEASE)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import httpx
import pytest

from prw_api.server import BackgroundServer
from prw_platform.auth import ClientSpec, create_client
from prw_platform.bootstrap import Platform
from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.resolver.intake.requests import Heartbeat, Registration, RunReport
from prw_platform.resolver.intake.workers import CollectorService
from prw_platform.services import RetireItem
from tests.e2e.admin.conftest import TENANT, Cases, Operator
from tests.integration.resolution.pipeline import CATALOG, SOURCE, Collector

Login = Callable[[str], Operator]


@pytest.fixture
def admin_settings(admin_settings: Settings) -> Settings:
    """One failed run marks a collector failing, so the fleet page has one to highlight."""
    return admin_settings.model_copy(update={"collector_failing_after": 0})


def _field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} field"
    return found.group(1)


def _release_form(operator: Operator) -> dict[str, str]:
    page = operator.http.get("/console/releases")
    assert page.status_code == 200, page.text
    return {name: _field(page.text, name) for name in ("csrf_token", "idempotency_key")}


def _release_now(operator: Operator, form: dict[str, str], catalog: str = CATALOG) -> httpx.Response:
    return operator.http.post(f"/console/releases/{catalog}", data=form)


def _manual_catalog_with_an_accepted_item(login: Login, cases: Cases) -> Operator:
    ada = login("ada")
    switched = ada.http.put(
        f"/v1/catalogs/{CATALOG}/release-policy",
        json={"release_policy": "manual", "rationale": "the owner reviews every publication"},
        headers={"X-CSRF-Token": ada.csrf},
    )
    assert switched.status_code == 200, switched.text
    cases.item()
    return ada


def _failing_collector(collector: Collector, resolver_db: Database) -> str:
    principal = collector.principal
    create_client(
        resolver_db, ClientSpec(TENANT, CATALOG, principal.worker_id, principal.instance_id, (SOURCE,))
    )
    at = datetime.now(UTC)
    workers = CollectorService(resolver_db, clock=lambda: at)
    registration = Registration(
        worker_id=principal.worker_id, instance_id=principal.instance_id, targets=(SOURCE,), version="0.4.2"
    )
    workers.register(principal, registration)
    run = RunReport(outcome="failed", pages_fetched=4, captures_submitted=0, failures={"UPSTREAM_503": 4})
    workers.heartbeat(principal, principal.instance_id, Heartbeat(at=at + timedelta(seconds=1), run=run))
    return principal.instance_id


# -- The fleet --------------------------------------------------------------------------------------------------
def test_a_viewer_sees_the_fleet_with_a_failing_collector_highlighted(
    login: Login, collector: Collector, resolver_db: Database
) -> None:
    instance_id = _failing_collector(collector, resolver_db)

    response = login("vic").http.get("/console/fleet")

    assert response.status_code == 200, response.text
    row = re.search(r'<tr class="lease-failing">(.*?)</tr>', response.text, re.S)
    assert row, response.text
    assert instance_id in row.group(1)
    assert SOURCE in row.group(1)
    assert "UPSTREAM_503 4" in row.group(1)
    assert "1 silent or failing" in response.text
    assert response.headers["content-security-policy"].startswith("default-src 'self'")


def test_without_a_session_the_fleet_redirects_to_the_login(admin: BackgroundServer) -> None:
    with httpx.Client(base_url=admin.url) as anonymous:
        response = anonymous.get("/console/fleet")

    assert response.status_code == 303
    assert urlsplit(response.headers["location"]).path == "/auth/login"


# -- A decision -------------------------------------------------------------------------------------------------
def test_the_case_history_links_to_the_decision_page_with_provenance_facts_and_events(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    decided = login("rita").map_to(case, cases.item(), "the spec grid names the same anvil")
    assert decided.status_code == 201, decided.text
    decision_id = decided.json()["decision_id"]
    vic = login("vic")

    history = vic.http.get(f"/console/review/{case['case_id']}")
    response = vic.http.get(f"/console/decisions/{decision_id}")

    assert f'href="/console/decisions/{decision_id}"' in history.text
    assert response.status_code == 200, response.text
    page = response.text
    assert "reviewer:rita" in page
    assert "the spec grid names the same anvil" in page
    assert case["capture_id"] in page  # evidence
    assert f'href="/console/decisions/{case["opened_by"]}"' in page  # the decision it builds on
    assert case["listing_id"] in page
    assert all(event_id_position in page for event_id_position in ("not published yet", "listing mapping"))


def test_an_unknown_decision_is_a_404_page(login: Login, cases: Cases) -> None:
    response = login("vic").http.get("/console/decisions/dec_nowhere")

    assert response.status_code == 404
    assert "<code>NOT_FOUND</code>" in response.text


# -- Release now ------------------------------------------------------------------------------------------------
def test_release_now_publishes_a_manual_catalog_once_per_form(login: Login, cases: Cases) -> None:
    ada = _manual_catalog_with_an_accepted_item(login, cases)
    form = _release_form(ada)
    before = ada.http.get("/console/releases").text
    assert re.search(rf"<code>{CATALOG}</code>.*?policy-manual.*?<td class=\"num\">1</td>", before, re.S)

    response = _release_now(ada, form)
    again = _release_now(ada, form)

    assert response.status_code == 200, response.text
    assert '<strong class="publication-revision">1</strong>' in response.text
    assert again.status_code == 200, again.text
    assert "this form's first release" in again.text
    release = cases.resolution.one("SELECT count(*) AS n, max(authorized_by) AS actor FROM resolver.release")
    assert release == {"n": 1, "actor": "operator:ada"}
    decision = cases.resolution.one(
        "SELECT rationale, idempotency_key FROM resolver.decision WHERE action = 'authorize_release'"
    )
    assert decision["rationale"] == "released now from the console"
    assert decision["idempotency_key"] == f"operator:ada:{form['idempotency_key']}"


def test_release_now_with_nothing_accepted_since_is_a_409_page_that_writes_nothing(
    login: Login, cases: Cases
) -> None:
    ada = _manual_catalog_with_an_accepted_item(login, cases)
    assert _release_now(ada, _release_form(ada)).status_code == 200
    written = cases.written()

    response = _release_now(ada, _release_form(ada))

    assert response.status_code == 409
    assert "<strong>NOTHING_TO_RELEASE</strong>" in response.text
    assert cases.written() == written


def test_a_viewer_sees_the_releases_without_the_button_and_a_release_is_a_403_page(
    login: Login, cases: Cases
) -> None:
    _manual_catalog_with_an_accepted_item(login, cases)
    vic = login("vic")
    page = vic.http.get("/console/releases")

    response = vic.http.post(
        f"/console/releases/{CATALOG}",
        data={"csrf_token": _field(page.text, "csrf_token"), "idempotency_key": "console:release:vic"},
    )

    assert page.status_code == 200
    assert "Release now" not in page.text
    assert "releasing needs operator admin" in page.text
    assert response.status_code == 403
    assert "<code>FORBIDDEN</code>" in response.text
    assert cases.count("resolver.release") == 0


def test_release_now_without_the_sessions_csrf_token_is_a_403_page(login: Login, cases: Cases) -> None:
    ada = _manual_catalog_with_an_accepted_item(login, cases)

    response = _release_now(ada, {**_release_form(ada), "csrf_token": "forged"})

    assert response.status_code == 403
    assert "<code>CSRF_REJECTED</code>" in response.text
    assert cases.count("resolver.release") == 0


def test_release_now_on_an_unknown_catalog_is_a_404_page(login: Login, cases: Cases) -> None:
    ada = _manual_catalog_with_an_accepted_item(login, cases)

    response = _release_now(ada, _release_form(ada), catalog="cat_nowhere")

    assert response.status_code == 404
    assert "<code>NOT_FOUND</code>" in response.text


def test_the_release_preview_counts_retirements_and_offers_to_release_them(
    login: Login, cases: Cases, admin_platform: Platform
) -> None:
    ada = _manual_catalog_with_an_accepted_item(login, cases)
    assert _release_now(ada, _release_form(ada)).status_code == 200
    admin_platform.decisions.retire_item(
        RetireItem(CATALOG, cases.item(), "operator:ada", "withdrawn by the maker", "retire-1"), TENANT
    )

    page = ada.http.get("/console/releases").text

    # Nothing new to publish but one published item to take out: the preview says so and offers the release.
    row = re.search(rf"<code>{CATALOG}</code>.*?</tr>", page, re.S)
    assert row is not None
    assert [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row.group(0))] == [0, 0, 0, 1, 0]
    assert 'class="release-form"' in row.group(0)
    released = _release_now(ada, _release_form(ada))
    assert released.status_code == 200, released.text

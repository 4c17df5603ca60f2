"""The console's improvement pages over real HTTP: an operator proposes one from the form, a
reviewer who did not write it approves it, the author is told someone else approves, refusals show on the page
with nothing written."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from prw_platform.bootstrap import Platform
from prw_platform.db.database import Database
from prw_platform.runtime import Budget, run_stage
from prw_platform.storage import ObjectStore
from tests.e2e.admin.conftest import Cases, Operator
from tests.integration.resolution.pipeline import SOURCE, page

Login = Callable[[str], Operator]


@pytest.fixture
def store(admin_platform: Platform) -> ObjectStore:
    """The captures' bytes in the admin platform's own store, which a replay reads."""
    return admin_platform.store


def _field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} field"
    return found.group(1)


def _count(owner: Database) -> int:
    row = owner.run(lambda conn: conn.execute("SELECT count(*) AS n FROM resolver.improvement").fetchone())
    assert row is not None
    return int(row["n"])


def _proposal(page: str) -> dict[str, str]:
    """The improvements page's form, filled in: re-read the source with pa_schemaorg@1.1.0."""
    return {
        "csrf_token": _field(page, "csrf_token"),
        "idempotency_key": _field(page, "idempotency_key"),
        "catalog_id": "cat_primary",
        "adapter_version": "pa_schemaorg@1.1.0",
        "source_id": SOURCE,
        "rationale": "re-read availability",
    }


def test_propose_from_the_form_then_another_reviewer_approves(login: Login, cases: Cases) -> None:
    cases.open()
    ada, rita = login("ada"), login("rita")
    listing = ada.http.get("/console/improvements")
    assert listing.status_code == 200
    assert "pa_schemaorg@1.1.0" in listing.text  # the installed pins are offered

    form = {**_proposal(listing.text), "observed_from": "2026-01-01"}
    created = ada.http.post("/console/improvements", data=form)
    assert created.status_code == 200
    assert created.url.path.startswith("/console/improvements/imp_")
    assert "You wrote this improvement" in created.text
    # A second submit of the same form is the same improvement (its Idempotency-Key).
    again = ada.http.post("/console/improvements", data=form)
    assert again.url.path == created.url.path

    page = rita.http.get(created.url.path)
    approved = rita.http.post(
        f"{created.url.path}/approve",
        data={"csrf_token": _field(page.text, "csrf_token"), "rationale": "the diff is right"},
    )

    assert approved.status_code == 200
    assert '<span class="status status-reviewer_approved">reviewer approved</span>' in approved.text
    assert "the diff is right" in approved.text
    assert 'action="' + created.url.path + '/approve"' not in approved.text


def test_the_author_approving_their_own_improvement_is_refused_on_the_page(
    login: Login, cases: Cases
) -> None:
    """A refused move (here: the author approves) renders the improvement with the refusal, not a server error."""
    cases.open()
    ada = login("ada")
    listing = ada.http.get("/console/improvements")
    created = ada.http.post("/console/improvements", data=_proposal(listing.text))

    refused = ada.http.post(
        f"{created.url.path}/approve",
        data={"csrf_token": _field(created.text, "csrf_token"), "rationale": "my own"},
    )

    assert refused.status_code == 403
    assert "You wrote this improvement" in refused.text
    assert "<strong>FORBIDDEN</strong>" in refused.text
    assert "nothing was written" in refused.text


def test_refusals_show_on_the_page_and_write_nothing(login: Login, cases: Cases, owner: Database) -> None:
    cases.open()
    ada = login("ada")
    listing = ada.http.get("/console/improvements")
    base = {
        "csrf_token": _field(listing.text, "csrf_token"),
        "idempotency_key": _field(listing.text, "idempotency_key"),
        "catalog_id": "cat_primary",
        "rationale": "nothing selected",
    }

    no_selection = ada.http.post(
        "/console/improvements", data={**base, "adapter_version": "pa_schemaorg@1.1.0"}
    )
    no_match = ada.http.post(
        "/console/improvements",
        data={**base, "adapter_version": "pa_schemaorg@1.1.0", "source_id": "src_nowhere"},
    )
    no_csrf = ada.http.post(
        "/console/improvements", data={**base, "csrf_token": "forged", "source_id": SOURCE}
    )

    assert no_selection.status_code == 422
    assert "at least one criterion" in no_selection.text
    assert no_match.status_code == 422
    assert "matches no stored capture" in no_match.text
    assert no_csrf.status_code == 403
    unknown_generation = ada.http.post(
        "/console/improvements", data={**base, "identity_generation": "7", "source_id": SOURCE}
    )
    assert unknown_generation.status_code == 422
    assert "UNKNOWN_IDENTITY_GENERATION" in unknown_generation.text
    assert 'name="identity_generation"' in unknown_generation.text  # the form offers the field
    not_a_number = ada.http.post(
        "/console/improvements", data={**base, "identity_generation": "two", "source_id": SOURCE}
    )
    assert not_a_number.status_code == 422
    assert _count(owner) == 0
    assert login("vic").http.get("/console/improvements/imp_nowhere").status_code == 404


def test_a_dry_run_from_the_console_shows_its_diff(
    login: Login, cases: Cases, admin_platform: Platform
) -> None:
    cases.item()
    offer_page = page("schemaorg_examples/eg-0011.jsonld.html")
    capture_id = cases.collector.submit(offer_page, record="eg-0011")
    cases.resolution.run()
    ada = login("ada")
    listing = ada.http.get("/console/improvements")
    created = ada.http.post(
        "/console/improvements",
        data={
            "csrf_token": _field(listing.text, "csrf_token"),
            "idempotency_key": _field(listing.text, "idempotency_key"),
            "catalog_id": "cat_primary",
            "adapter_version": "pa_schemaorg@1.0.0",
            "source_id": SOURCE,
            "rationale": "does 1.0.0 lose availability?",
        },
    )

    started = ada.http.post(
        f"{created.url.path}/replays",
        data={"csrf_token": _field(created.text, "csrf_token"), "mode": "dry_run"},
    )
    assert started.url.path.startswith("/console/replays/rpl_")
    assert "re-run so far" in started.text
    run_stage(admin_platform, "replay", Budget(seconds=60))
    finished = ada.http.get(started.url.path)

    assert '<span class="status status-completed">completed</span>' in finished.text
    assert capture_id in finished.text
    assert "core:availability" in finished.text
    assert ada.http.get(created.url.path).text.count("/console/replays/rpl_") == 1

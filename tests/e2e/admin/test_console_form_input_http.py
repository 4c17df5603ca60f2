"""The console's forms follow the JSON API's input rules (prw_platform.inputs) and answer with the console's own
page, over real HTTP with a logged-in operator and the session's CSRF token: a NUL or bytes that are not UTF-8 in
a field are a 422 page (never the API's JSON error, never a U+FFFD stored), a moment outside years 1 to 9999 in
UTC is a 422 page as intake refuses it, and nothing is written."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlencode

import httpx
import pytest

from tests.e2e.admin.conftest import Cases, Operator
from tests.integration.resolution.pipeline import SOURCE

Login = Callable[[str], Operator]

_URLENCODED = {"Content-Type": "application/x-www-form-urlencoded"}


def _field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} field"
    return found.group(1)


def _refused_on_a_page(response: httpx.Response, status: int = 422, code: str = "VALIDATION_FAILED") -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html"), response.text
    assert code in response.text


def _decision_form(rita: Operator, case_id: str) -> bytes:
    page = rita.http.get(f"/console/review/{case_id}").text
    form = {n: _field(page, n) for n in ("csrf_token", "idempotency_key", "expected_revision")}
    return urlencode({**form, "decision": "reject"}).encode()


def _improvement_form(ada: Operator) -> bytes:
    page = ada.http.get("/console/improvements").text
    form = {
        "csrf_token": _field(page, "csrf_token"),
        "idempotency_key": _field(page, "idempotency_key"),
        "catalog_id": "cat_primary",
        "adapter_version": "pa_schemaorg@1.1.0",
        "source_id": SOURCE,
    }
    return urlencode(form).encode()


#: What a field carries, as sent on the wire.
HOSTILE = {
    "a NUL": b"rationale=before%00after",
    "percent-encoded bytes that are not UTF-8": b"rationale=caf%E9",
    "raw bytes that are not UTF-8": b"rationale=caf\xe9",
    "a NUL in a field name": b"ration%00ale=x",
}


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_decision_form_with_a_field_the_api_refuses_is_a_422_page_and_decides_nothing(
    value: bytes, login: Login, cases: Cases
) -> None:
    case_id = cases.open()["case_id"]
    rita = login("rita")
    form = _decision_form(rita, case_id)
    before = cases.written()

    response = rita.http.post(
        f"/console/review/{case_id}/decision", content=form + b"&" + value, headers=_URLENCODED
    )

    _refused_on_a_page(response)
    assert cases.written() == before
    # The same form without the hostile field decides.
    decided = rita.http.post(f"/console/review/{case_id}/decision", content=form, headers=_URLENCODED)
    assert decided.status_code == 200, decided.text
    assert cases.written() != before


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_improvement_form_with_a_field_the_api_refuses_is_a_422_page_and_creates_nothing(
    value: bytes, login: Login, cases: Cases
) -> None:
    cases.open()
    ada = login("ada")

    response = ada.http.post(
        "/console/improvements", content=_improvement_form(ada) + b"&" + value, headers=_URLENCODED
    )

    _refused_on_a_page(response)
    assert cases.count("resolver.improvement") == 0


@pytest.mark.parametrize("field", ["observed_from", "observed_to"])
def test_an_improvement_observed_before_year_1_in_utc_is_refused_by_the_console_and_the_api(
    field: str, login: Login, cases: Cases
) -> None:
    cases.open()
    ada = login("ada")
    moment = "0001-01-01T00:00:00+01:00"  # 0000-12-31T23:00:00Z: before the first representable moment

    page = ada.http.post(
        "/console/improvements",
        content=_improvement_form(ada) + b"&" + urlencode({field: moment, "rationale": "old"}).encode(),
        headers=_URLENCODED,
    )
    api = ada.http.post(
        "/v1/improvements",
        json={
            "catalog_id": "cat_primary",
            "adapter_version": "pa_schemaorg@1.1.0",
            "selection": {field: moment},
            "rationale": "old",
        },
        headers={"X-CSRF-Token": ada.csrf, "Idempotency-Key": f"old-{field}"},
    )

    assert page.status_code == 422, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert "outside years 1 to 9999" in page.text
    assert (api.status_code, api.json()["error"]["code"]) == (422, "VALIDATION_FAILED")
    assert cases.count("resolver.improvement") == 0


def test_a_multipart_form_is_a_415_page(login: Login, cases: Cases) -> None:
    case_id = cases.open()["case_id"]
    rita = login("rita")
    page = rita.http.get(f"/console/review/{case_id}").text
    fields = {n: _field(page, n) for n in ("csrf_token", "idempotency_key", "expected_revision")}
    before = cases.written()

    response = rita.http.post(
        f"/console/review/{case_id}/decision",
        data={**fields, "decision": "reject"},
        files={"rationale": ("r.txt", b"caf\xe9", "text/plain")},
    )

    _refused_on_a_page(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert cases.written() == before


def test_a_form_missing_a_field_is_a_422_page_not_the_apis_json(login: Login, cases: Cases) -> None:
    case_id = cases.open()["case_id"]
    rita = login("rita")

    response = rita.http.post(f"/console/review/{case_id}/decision", data={"csrf_token": rita.csrf})

    _refused_on_a_page(response)

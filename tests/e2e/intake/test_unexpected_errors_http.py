"""What is left after validation, over real HTTP on the intake origin (hardened inputs):

- a value the database refuses anyway (psycopg DataError: numeric overflow, invalid text representation) is
  if_capture_submit's 422 VALIDATION_FAILED, a statement timeout past its retry 503 STORAGE_UNAVAILABLE: never
  a bare 500;
- an unexpected exception is a 500 INTERNAL in the platform's body, carrying the request id that the
  ``X-Request-Id`` header and the server log carry too; the keep-alive connection stays usable.

The failures are injected by replacing one method of the running server's intake service (``monkeypatch``), so
the request goes through the real app, middleware and uvicorn.
"""

from __future__ import annotations

import logging
from typing import NoReturn

import pytest

from prw_platform.auth import CollectorPrincipal
from prw_platform.db.database import Connection, Database
from tests.e2e.intake.conftest import Collector, IntakeApiServices
from tests.e2e.intake.flows import error_of


def _failing_receipt_lookup(resolver_db: Database, statement: str, parameters: tuple[object, ...]) -> object:
    def get_receipt(principal: CollectorPrincipal, receipt_id: str) -> NoReturn:
        def work(conn: Connection) -> NoReturn:
            conn.execute(statement, parameters)
            raise AssertionError("the statement should have failed")

        resolver_db.run(work, tenant_id=principal.tenant_id)
        raise AssertionError("unreachable")

    return get_receipt


@pytest.mark.parametrize(
    ("statement", "parameters"),
    [
        ("SELECT %s::int", (2**40,)),  # 22003 numeric_value_out_of_range
        ("SELECT %s::text::numeric", ("12,5",)),  # 22P02 invalid_text_representation
        ("SELECT %s::text::timestamptz", ("2026-13-01",)),  # 22008 datetime_field_overflow
        ("SELECT %s::text", ("a\x00b",)),  # refused by psycopg before it is sent
    ],
)
def test_a_database_data_error_is_422_validation_failed_not_500(
    monkeypatch: pytest.MonkeyPatch,
    services: IntakeApiServices,
    resolver_db: Database,
    collector: Collector,
    statement: str,
    parameters: tuple[object, ...],
) -> None:
    monkeypatch.setattr(
        services.intake, "get_receipt", _failing_receipt_lookup(resolver_db, statement, parameters)
    )

    response = collector.http.get("/v1/receipts/rcpt_1", headers=collector.headers)

    assert error_of(response) == (422, "VALIDATION_FAILED", False)


def test_a_statement_timeout_past_its_retry_is_503_storage_unavailable(
    monkeypatch: pytest.MonkeyPatch, services: IntakeApiServices, resolver_db: Database, collector: Collector
) -> None:
    lookup = _failing_receipt_lookup(resolver_db, "SET LOCAL statement_timeout = 20; SELECT pg_sleep(1)", ())
    monkeypatch.setattr(services.intake, "get_receipt", lookup)

    response = collector.http.get("/v1/receipts/rcpt_1", headers=collector.headers)

    assert error_of(response) == (503, "STORAGE_UNAVAILABLE", True)
    assert response.headers["retry-after"]


def test_an_unexpected_exception_is_500_internal_with_the_request_id_in_body_header_and_log(
    monkeypatch: pytest.MonkeyPatch,
    services: IntakeApiServices,
    collector: Collector,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(principal: CollectorPrincipal, receipt_id: str) -> NoReturn:
        raise RuntimeError("a bug, with internal detail sk_live_42")

    monkeypatch.setattr(services.intake, "get_receipt", broken)

    with caplog.at_level(logging.ERROR, logger="prw_api"):
        response = collector.http.get("/v1/receipts/rcpt_1", headers=collector.headers)

    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert set(error) == {"code", "message", "retryable", "request_id"}
    assert (error["code"], error["retryable"]) == ("INTERNAL", False)
    request_id = response.headers["x-request-id"]
    assert error["request_id"] == request_id
    assert request_id in error["message"]
    assert "sk_live_42" not in response.text
    [record] = [r for r in caplog.records if request_id in r.getMessage()]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert "sk_live_42" in caplog.text  # the traceback is in the log, not in the response
    # The keep-alive connection survived (uvicorn's own 500 path closes it).
    assert collector.http.get("/openapi.json").status_code == 200


def test_every_response_has_its_own_request_id(collector: Collector) -> None:
    responses = [
        collector.http.get("/openapi.json"),
        collector.http.get("/v1/receipts/rcpt_unknown", headers=collector.headers),
        collector.http.post("/v1/captures", json={}, headers=collector.headers),
        collector.http.get("/v1/nowhere"),
    ]

    ids = [response.headers["x-request-id"] for response in responses]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 32 for i in ids)
    # Only a 500 repeats it in the body; a 4xx keeps the seed's three fields.
    assert all("request_id" not in r.json().get("error", {}) for r in responses)

"""Hostile values on every intake route that takes them, over real HTTP (hardened inputs): each is
if_capture_submit's 422 VALIDATION_FAILED, "Nothing persisted" (the token endpoint answers its RFC 6749 body).

- text PostgreSQL cannot store (a NUL, a lone surrogate) in any string of a body, a path or a query string,
  which answered a plain-text 500 before (the token endpoint too, unauthenticated);
- an ``observed_at`` outside years 1..9999 in UTC (a 500 before), or in the future beyond the clock-skew
  tolerance (accepted before, freezing its listing);
- a ``url`` that is not an absolute http(s) URL as RFC 3986 parses it (published verbatim before);
- a ``media_type`` that is not RFC 9110 syntax.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from prw_platform.auth import ProvisionedClient
from prw_platform.db.database import Database
from tests.e2e.intake.conftest import Collector
from tests.e2e.intake.flows import KEY, capture, declare, error_of, submit, upload
from tests.integration.intake.helpers import World

JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _raw(body: dict[str, Any], old: str, new: str) -> bytes:
    """``body`` as JSON with ``old`` (a JSON string literal) replaced by ``new`` (any JSON text, e.g. an escape
    json.dumps would never write, like a lone surrogate)."""
    text = json.dumps(body)
    assert old in text
    return text.replace(old, new).encode()


UNSTORABLE_CAPTURES = {
    "NUL in native_record_id": lambda ref: json.dumps(capture(ref, native_record_id="p5\x00")).encode(),
    "NUL escape in source_id": lambda ref: _raw(capture(ref), '"src_lumen_web"', '"src_lumen_web\\u0000"'),
    "NUL in url": lambda ref: json.dumps(capture(ref, url="https://lumen.example/\x00")).encode(),
    "NUL in a nested ref": lambda ref: json.dumps(capture(ref, artifacts=[{"ref": ref + "\x00"}])).encode(),
    "NUL in a field name": lambda ref: json.dumps({**capture(ref), "x\x00": 1}).encode(),
    "NUL in an unknown field": lambda ref: json.dumps({**capture(ref), "note": "\x00"}).encode(),
    "lone surrogate": lambda ref: _raw(capture(ref), '"p5-1t-hs"', '"\\ud800"'),
    "lone low surrogate in url": lambda ref: _raw(
        capture(ref), '"https://lumen.example/p/p5-1t-hs"', '"https://lumen.example/\\udfff"'
    ),
    "lone surrogate in tenant_id": lambda ref: _raw({**capture(ref), "tenant_id": "t"}, '"t"', '"\\ud83d"'),
}


@pytest.mark.parametrize("make", UNSTORABLE_CAPTURES.values(), ids=UNSTORABLE_CAPTURES.keys())
def test_unstorable_text_anywhere_in_a_capture_is_422_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database, make: Any
) -> None:
    ref = upload(collector)
    before = world.counts(owner_db)

    response = collector.http.post(
        "/v1/captures", content=make(ref), headers={**collector.headers, **JSON, "Idempotency-Key": KEY}
    )

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == before


@pytest.mark.parametrize(
    "field",
    ["source_id", "capture_hint", "media_type", "worker_id", "tenant_id", "catalog_id", "instance_id"],
)
@pytest.mark.parametrize("bad", ["\x00", "\\ud800"], ids=["nul", "surrogate"])
def test_unstorable_text_in_an_upload_declaration_is_422_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database, field: str, bad: str
) -> None:
    body = {"sha256": "a" * 64, "bytes": 10, "media_type": "text/html", "source_id": "src_lumen_web"}
    body[field] = "PLACEHOLDER"
    raw = json.dumps(body).replace("PLACEHOLDER", bad.replace("\x00", "\\u0000")).encode()

    response = collector.http.post(
        "/v1/artifacts/uploads", content=raw, headers={**collector.headers, **JSON}
    )

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == dict.fromkeys(world.counts(owner_db), 0)


def test_unstorable_text_is_refused_before_authentication(
    world: World, http: httpx.Client, owner_db: Database
) -> None:
    for route in ("/v1/captures", "/v1/artifacts/uploads"):
        response = http.post(route, content=b'{"source_id": "\\u0000"}', headers=JSON)
        assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == dict.fromkeys(world.counts(owner_db), 0)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/receipts/rcpt_%00"),
        ("GET", "/v1/receipts/rcpt_%ED%A0%80"),  # a surrogate's code units: not UTF-8
        ("GET", "/v1/receipts/rcpt_%FF"),
        ("PUT", "/v1/artifacts/uploads/upl_%00"),
        ("POST", "/v1/captures?x=%00"),
        ("POST", "/v1/artifacts/uploads?%00=1"),
        ("GET", "/v1/receipts/rcpt_1?q=%C3%28"),
        ("POST", "/v1/oauth/token?scope=%00"),
    ],
)
def test_unstorable_text_in_a_path_or_query_string_is_422_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database, method: str, path: str
) -> None:
    before = world.counts(owner_db)

    response = collector.http.request(method, path, headers=collector.headers, content=b"")

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == before


@pytest.mark.parametrize(
    "form",
    [
        b"grant_type=client_credentials&client_id=cc_%00&client_secret=s",
        b"grant_type=client_credentials&client_id=cc_1&client_secret=%00",
        b"grant_type=client_credentials%00",
        b"grant_type=client_credentials&client_id=cc_%ED%A0%80&client_secret=s",
        b"grant_type=client_credentials&client_id=cc_%FF&client_secret=s",
    ],
)
def test_unstorable_text_in_the_token_form_is_400_invalid_request(http: httpx.Client, form: bytes) -> None:
    # RFC 6749 5.2 fixes this endpoint's error body: invalid_request, "otherwise malformed".
    response = http.post("/v1/oauth/token", content=form, headers=FORM)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert response.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("credentials", [b"cc_1\x00:secret", b"cc_1:se%00cret", b"cc_%FF:secret"])
def test_unstorable_text_in_basic_credentials_is_401_invalid_client(
    http: httpx.Client, credentials: bytes
) -> None:
    response = http.post(
        "/v1/oauth/token",
        content=b"grant_type=client_credentials",
        headers={**FORM, "Authorization": "Basic " + base64.b64encode(credentials).decode()},
    )

    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


def test_the_token_endpoint_still_issues_tokens(http: httpx.Client, client: ProvisionedClient) -> None:
    response = http.post(
        "/v1/oauth/token",
        auth=(client.client_id, client.client_secret),
        data={"grant_type": "client_credentials"},
    )

    assert response.status_code == 200, response.text


def _now() -> datetime:
    return datetime.now(UTC)


@pytest.mark.parametrize(
    "observed_at",
    [
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
        "9999-12-31T23:59:59-01:00",  # after year 9999 in UTC
        "9999-12-31T23:59:59Z",  # representable, but from the future
        "2200-01-01T00:00:00Z",
        "in ten minutes",
    ],
)
def test_an_observed_at_the_platform_cannot_represent_or_from_the_future_is_422_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database, observed_at: str
) -> None:
    if observed_at == "in ten minutes":
        observed_at = (_now() + timedelta(minutes=10)).isoformat()
    ref = upload(collector)
    before = world.counts(owner_db)

    response = submit(collector, capture(ref, observed_at=observed_at))

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert "observed_at" in response.json()["error"]["message"]
    assert world.counts(owner_db) == before


def test_an_observed_at_within_the_clock_skew_tolerance_is_stored(
    world: World, collector: Collector, owner_db: Database
) -> None:
    ref = upload(collector)
    # A collector whose clock runs a minute ahead (the default tolerance is 300 s); and the oldest moment.
    for key, observed_at in (
        ("k-skew", _now() + timedelta(minutes=1)),
        ("k-old", datetime(1, 1, 1, tzinfo=UTC)),
    ):
        response = submit(collector, capture(ref, observed_at=observed_at.isoformat()), key=key)
        assert response.status_code == 202, response.text
    assert world.counts(owner_db)["capture"] == 2


@pytest.mark.parametrize(
    "url",
    [
        "https://lumen.example/p 5",
        "https://lumen.example/p\r\nSet-Cookie: a=1",
        "https://lumen.example/p\n",
        "https://lumen.example/p\t5",
        "https://lumen.example/p\x7f",
        'https://lumen.example/"p5"',
        "https://lumen.example/<p5>",
        "https://lumen.example/größe",
        "https://lumen.example/%G0",
        "https://user:secret@lumen.example/p",
        "javascript:alert(1)//https://lumen.example",
        "file:///etc/passwd",
        "https:///p5",
        "//lumen.example/p5",
    ],
)
def test_a_url_that_is_not_an_absolute_http_url_is_422_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database, url: str
) -> None:
    ref = upload(collector)
    before = world.counts(owner_db)

    response = submit(collector, capture(ref, url=url))

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == before


def test_an_rfc_3986_url_is_stored_verbatim(world: World, collector: Collector, owner_db: Database) -> None:
    url = "HTTPS://Lumen.Example:8443/p/gr%C3%B6%C3%9Fe;v=1/(it's)?q=a%20b&r=/x?#specs"
    response = submit(collector, capture(upload(collector), url=url))

    assert response.status_code == 202, response.text
    with owner_db.transaction() as conn:
        row = conn.execute(
            "SELECT url FROM resolver.capture WHERE capture_id = %s", (response.json()["capture_id"],)
        ).fetchone()
    assert row == {"url": url}


@pytest.mark.parametrize(
    "media_type",
    [
        "text/htmlé",
        "text/html; charset=\x01",
        "text/html\r\nX-Evil: 1",
        "text/html;\tcharset=utf-8",
        "text/html; charset=utf 8",
        'text/html; title="ünïcode"',
        "text/html; charset",
        "text html",
        "text/(html)",
    ],
)
def test_a_media_type_that_is_not_rfc_9110_syntax_is_422_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database, media_type: str
) -> None:
    response = declare(collector, media_type=media_type)

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == dict.fromkeys(world.counts(owner_db), 0)


def test_an_rfc_9110_media_type_with_parameters_is_accepted(collector: Collector) -> None:
    response = declare(collector, media_type='text/html; charset=utf-8; profile="a b"')

    assert response.status_code == 201, response.text

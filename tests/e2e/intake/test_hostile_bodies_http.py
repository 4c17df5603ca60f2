"""Hostile request bodies on every intake route that takes one, over real HTTP (hardened inputs).

- Above the limit: 413 before the body is read and before the token is looked at, announced by Content-Length or
  streamed without one. JSON and form routes answer PAYLOAD_TOO_LARGE (no seed code; docs/collectors.md); the
  artifact PUT keeps streaming up to the artifact limit and its seed code, if_artifact_upload's 413
  ARTIFACT_TOO_LARGE.
- JSON the platform does not parse (not UTF-8, 10,000 nested arrays, NaN, a 5,000-digit integer): if_capture_submit's
  422 VALIDATION_FAILED where FastAPI answered an undocumented 400, authenticated or not.

Every refusal stores nothing: no upload, artifact, capture, receipt or job row (``World.counts``), and leaves the
keep-alive connection usable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from prw_platform.config import Settings
from prw_platform.db.database import Database
from tests.e2e.intake.conftest import MAX_ARTIFACT_BYTES, Collector
from tests.e2e.intake.flows import KEY, capture, declare, error_of, put_bytes, upload
from tests.integration.intake.helpers import SOURCE, World

#: The JSON (and default) body limit of this module's server: small, so that "above it" is cheap to send.
MAX_BODY_BYTES = 56 * 1024
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """The intake server of tests/e2e/intake/conftest.py, with a small request body limit."""
    return Settings(data_dir=tmp_path / "prw", max_request_body_bytes=MAX_BODY_BYTES)


def _chunked(data: bytes, size: int = 4096) -> Iterator[bytes]:
    """A body without Content-Length: httpx sends an iterator with Transfer-Encoding: chunked."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _oversized_json(size: int = 4 * MAX_BODY_BYTES) -> bytes:
    return b'{"schema_version": "capture/1", "native_record_id": "' + b"x" * size + b'"}'


@pytest.mark.parametrize("route", ["/v1/captures", "/v1/artifacts/uploads"])
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("authenticated", [False, True], ids=["anonymous", "bearer"])
def test_a_json_body_above_the_limit_is_413_payload_too_large_and_persists_nothing(
    world: World,
    collector: Collector,
    owner_db: Database,
    route: str,
    chunked: bool,
    authenticated: bool,
) -> None:
    upload(collector)
    before = world.counts(owner_db)
    body = _oversized_json()
    headers = {**JSON, "Idempotency-Key": KEY, **(collector.headers if authenticated else {})}

    response = collector.http.post(route, content=_chunked(body) if chunked else body, headers=headers)

    assert error_of(response) == (413, "PAYLOAD_TOO_LARGE", False)
    assert f"limit of {MAX_BODY_BYTES} bytes" in response.json()["error"]["message"]
    assert world.counts(owner_db) == before
    # The refused body was drained, not left on the connection: the next request on it is answered normally.
    assert collector.http.post(route, json={}, headers=collector.headers).status_code == 422


def test_a_body_of_exactly_the_limit_is_read_and_stored(
    world: World, collector: Collector, owner_db: Database
) -> None:
    compact = httpx.Request("POST", "/", json=capture(upload(collector))).content
    exactly = compact[:-1] + b" " * (MAX_BODY_BYTES - len(compact)) + b"}"
    assert len(exactly) == MAX_BODY_BYTES

    for body in (exactly, _chunked(exactly)):
        response = collector.http.post(
            "/v1/captures", content=body, headers={**collector.headers, **JSON, "Idempotency-Key": KEY}
        )
        assert response.status_code in (200, 202), response.text
    assert world.counts(owner_db)["capture"] == 1


def test_a_body_on_a_get_route_is_held_to_the_same_limit(collector: Collector) -> None:
    response = collector.http.request(
        "GET", "/v1/receipts/rcpt_unknown", content=_oversized_json(), headers=collector.headers
    )

    assert error_of(response) == (413, "PAYLOAD_TOO_LARGE", False)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_token_request_above_its_8_kib_form_limit_is_413_payload_too_large(
    http: httpx.Client, chunked: bool
) -> None:
    form = b"grant_type=client_credentials&client_id=" + b"c" * 10_000 + b"&client_secret=s"

    response = http.post(
        "/v1/oauth/token",
        content=_chunked(form) if chunked else form,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )

    assert error_of(response) == (413, "PAYLOAD_TOO_LARGE", False)
    assert "8192" in response.json()["error"]["message"]


def test_an_artifact_put_announcing_more_than_the_artifact_limit_is_413_artifact_too_large_before_authentication(
    world: World, http: httpx.Client, owner_db: Database
) -> None:
    response = http.put("/v1/artifacts/uploads/upl_anything", content=b"x" * (MAX_ARTIFACT_BYTES + 1))

    assert error_of(response) == (413, "ARTIFACT_TOO_LARGE", False)
    assert world.counts(owner_db) == dict.fromkeys(world.counts(owner_db), 0)


def test_an_unauthenticated_streamed_artifact_put_is_401_without_its_body_being_read(
    http: httpx.Client,
) -> None:
    # Without Content-Length the size is known only as the bytes arrive, and this route reads them only after
    # authentication (if_artifact_upload: streamed through the resolver): the 401 comes first, the bytes are
    # discarded by the server, never held.
    response = http.put(
        "/v1/artifacts/uploads/upl_anything", content=_chunked(b"x" * (4 * MAX_ARTIFACT_BYTES))
    )

    assert error_of(response) == (401, "INVALID_TOKEN", False)


def test_an_artifact_put_above_the_json_limit_still_streams_up_to_the_artifact_limit(
    world: World, collector: Collector, owner_db: Database
) -> None:
    page = b"<html>" + b"p" * (MAX_ARTIFACT_BYTES - 13) + b"</html>"
    assert MAX_BODY_BYTES < len(page) <= MAX_ARTIFACT_BYTES
    declared = declare(collector, page).json()

    for body in (page, _chunked(page)):
        stored = put_bytes(collector, declared["target"]["url"], body, declared["target"]["headers"])
        assert stored.status_code == 200, stored.text
        assert stored.json()["sha256"] == hashlib.sha256(page).hexdigest()
    assert world.counts(owner_db)["artifact"] == 1


def test_a_streamed_artifact_put_passing_the_artifact_limit_is_413_artifact_too_large(
    world: World, collector: Collector, owner_db: Database
) -> None:
    page = b"y" * MAX_ARTIFACT_BYTES
    declared = declare(collector, page).json()
    before = world.counts(owner_db)

    response = put_bytes(collector, declared["target"]["url"], _chunked(page + b"y"))

    assert error_of(response) == (413, "ARTIFACT_TOO_LARGE", False)
    assert world.counts(owner_db) == before


NOT_JSON_THE_PLATFORM_PARSES = {
    "latin-1": '{"schema_version": "capture/1", "native_record_id": "Größe"}'.encode("latin-1"),
    "utf-16": '{"schema_version": "capture/1"}'.encode("utf-16"),
    "10,000 nested arrays": b"[" * 10_000 + b"]" * 10_000,
    "10,000 nested objects": b'{"":' * 10_000 + b"1" + b"}" * 10_000,
    "33 levels": b'{"schema_version": "capture/1", "x": ' + b"[" * 32 + b"]" * 32 + b"}",
    "NaN": b'{"schema_version": "capture/1", "bytes": NaN}',
    "Infinity": b'{"schema_version": "capture/1", "bytes": -Infinity}',
    "5,000 digits": b'{"bytes": ' + b"9" * 5_000 + b"}",
    "truncated": b'{"schema_version": "capture/1", ',
}


@pytest.mark.parametrize("route", ["/v1/captures", "/v1/artifacts/uploads"])
@pytest.mark.parametrize(
    "body", NOT_JSON_THE_PLATFORM_PARSES.values(), ids=NOT_JSON_THE_PLATFORM_PARSES.keys()
)
@pytest.mark.parametrize("authenticated", [False, True], ids=["anonymous", "bearer"])
def test_json_the_platform_does_not_parse_is_422_validation_failed_and_persists_nothing(
    world: World, collector: Collector, owner_db: Database, route: str, body: bytes, authenticated: bool
) -> None:
    upload(collector)
    before = world.counts(owner_db)
    headers = {**JSON, "Idempotency-Key": KEY, **(collector.headers if authenticated else {})}

    response = collector.http.post(route, content=body, headers=headers)

    assert error_of(response) == (422, "VALIDATION_FAILED", False)
    assert world.counts(owner_db) == before


def test_the_reason_is_named(collector: Collector) -> None:
    def message(body: bytes) -> str:
        response = collector.http.post("/v1/captures", content=body, headers={**collector.headers, **JSON})
        text: str = response.json()["error"]["message"]
        return text

    assert "not UTF-8" in message(NOT_JSON_THE_PLATFORM_PARSES["latin-1"])
    assert "nested deeper than 32" in message(NOT_JSON_THE_PLATFORM_PARSES["10,000 nested arrays"])
    assert "nested deeper than 32" in message(NOT_JSON_THE_PLATFORM_PARSES["33 levels"])
    assert "NaN is not a JSON number" in message(NOT_JSON_THE_PLATFORM_PARSES["NaN"])


def test_32_levels_are_parsed(collector: Collector) -> None:
    """The depth limit counts containers: the body object and 31 arrays inside it are 32 levels."""
    body = b'{"schema_version": "capture/1", "source_id": "' + SOURCE.encode() + b'", "x": '
    response = collector.http.post(
        "/v1/captures", content=body + b"[" * 31 + b"]" * 31 + b"}", headers={**collector.headers, **JSON}
    )

    assert error_of(response)[:2] == (422, "VALIDATION_FAILED")
    assert "nested" not in response.json()["error"]["message"]  # refused by the model (unknown field x)

"""S3 backend: how provider answers map onto if_object_storage outcomes.

These use botocore's Stubber to script answers moto never gives (409 ConditionalRequestConflict, 5xx, an object
deleted between a 412 and the HEAD). They test this module's decisions, not any provider's behaviour; the real
protocol runs in ``tests/integration/storage`` against a moto server.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from botocore.stub import Stubber
from pydantic import SecretStr

from prw_platform.config import S3Settings
from prw_platform.storage import (
    ImmutableMetadataConflict,
    PutResult,
    S3ObjectStore,
    StorageUnavailable,
    build_s3_client,
    evidence_key,
)

HTML = b"<html>Halden</html>"
HTML_SHA256 = hashlib.sha256(HTML).hexdigest()
KEY = evidence_key("ten_primary", HTML_SHA256)
STORED_HEAD = {
    "ContentLength": len(HTML),
    "ETag": '"etag-stored"',
    "ContentType": "text/html",
    "Metadata": {"sha256": HTML_SHA256, "media-type": "text/html"},
}


class Scripted:
    def __init__(self) -> None:
        client = build_s3_client(
            S3Settings(access_key_id="x", secret_access_key=SecretStr("y")), max_attempts=1
        )
        self.stubber = Stubber(client)
        self.sleeps: list[float] = []
        self.store = S3ObjectStore(client, sleep=self.sleeps.append)

    def put_answers(self, code: str, status: int) -> None:
        self.stubber.add_client_error("put_object", service_error_code=code, http_status_code=status)

    def put_succeeds(self) -> None:
        self.stubber.add_response("put_object", {"ETag": '"etag-new"'})

    def head_answers(self, head: dict[str, object] | None) -> None:
        if head is None:
            self.stubber.add_client_error("head_object", service_error_code="404", http_status_code=404)
        else:
            self.stubber.add_response("head_object", head)

    def put(self) -> PutResult:
        return self.store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html")


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    scripted = Scripted()
    with scripted.stubber:
        yield scripted
    scripted.stubber.assert_no_pending_responses()


def test_conditional_request_conflict_is_retried_with_backoff_until_the_put_lands(scripted: Scripted) -> None:
    scripted.put_answers("ConditionalRequestConflict", 409)
    scripted.put_answers("ConditionalRequestConflict", 409)
    scripted.put_succeeds()

    assert scripted.put() == PutResult(stored=True, etag="etag-new", size=len(HTML))
    assert len(scripted.sleeps) == 2


def test_persistent_conditional_conflict_then_a_matching_object_is_already_stored(scripted: Scripted) -> None:
    for _ in range(4):
        scripted.put_answers("ConditionalRequestConflict", 409)
    scripted.head_answers(STORED_HEAD)

    assert scripted.put() == PutResult(stored=False, etag="etag-stored", size=len(HTML))


def test_persistent_conditional_conflict_and_no_object_is_storage_unavailable(scripted: Scripted) -> None:
    for _ in range(4):
        scripted.put_answers("ConditionalRequestConflict", 409)
    scripted.head_answers(None)

    with pytest.raises(StorageUnavailable, match="conflicting"):
        scripted.put()


def test_precondition_failed_for_an_object_deleted_meanwhile_puts_again(scripted: Scripted) -> None:
    scripted.put_answers("PreconditionFailed", 412)
    scripted.head_answers(None)
    scripted.put_succeeds()

    assert scripted.put().stored is True


def test_precondition_failed_with_another_size_is_a_conflict(scripted: Scripted) -> None:
    scripted.put_answers("PreconditionFailed", 412)
    scripted.head_answers({**STORED_HEAD, "ContentLength": len(HTML) + 1})

    with pytest.raises(ImmutableMetadataConflict, match="size"):
        scripted.put()


@pytest.mark.parametrize(
    ("code", "status"),
    [("InternalError", 500), ("SlowDown", 503), ("BadDigest", 400), ("AccessDenied", 403)],
)
def test_provider_errors_are_storage_unavailable_naming_the_provider_code(
    scripted: Scripted, code: str, status: int
) -> None:
    scripted.put_answers(code, status)

    with pytest.raises(StorageUnavailable, match=code) as raised:
        scripted.put()

    assert raised.value.retryable is True

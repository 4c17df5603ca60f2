"""if_object_storage: the one contract every ObjectStore backend passes.

``ObjectStoreContract`` holds the tests; each backend subclasses it with a ``store`` fixture and a way to
corrupt stored bytes behind the store's back. The S3 run talks to a real S3-protocol server (moto over HTTP).
"""

from __future__ import annotations

import abc
import hashlib
import os
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from prw_platform.storage import (
    DigestMismatch,
    FilesystemObjectStore,
    ImmutableMetadataConflict,
    InvalidMediaType,
    ObjectImmutable,
    ObjectKey,
    ObjectNotFound,
    ObjectStore,
    PutResult,
    S3ObjectStore,
    StorageError,
    evidence_key,
    export_key,
)
from prw_platform.storage.s3 import META_MEDIA_TYPE, META_SHA256

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

HTML = b"<html><body>Halden 2 TB NVMe</body></html>"
HTML_SHA256 = hashlib.sha256(HTML).hexdigest()
PROTECTED = frozenset({"evidence-private"})


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put_all_at_once(count: int, put: Callable[[int], PutResult]) -> list[PutResult | StorageError]:
    """Run ``put(i)`` on ``count`` threads released together by a barrier; collect results and errors."""
    barrier = threading.Barrier(count)

    def run(index: int) -> PutResult | StorageError:
        barrier.wait()
        try:
            return put(index)
        except StorageError as error:
            return error

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


class ObjectStoreContract(abc.ABC):
    @pytest.fixture
    def tenant(self) -> str:
        return f"ten_{uuid.uuid4().hex[:12]}"

    @abc.abstractmethod
    def corrupt_stored_bytes(self, store: ObjectStore, key: ObjectKey, data: bytes) -> None:
        """Replace the stored bytes of ``key`` with ``data`` behind the store's back, keeping its metadata."""

    def test_round_trip_returns_the_bytes_and_metadata(self, store: ObjectStore, tenant: str) -> None:
        key = evidence_key(tenant, HTML_SHA256)

        result = store.put_if_absent(key, HTML, HTML_SHA256, "text/html")

        assert result.stored is True
        assert result.size == len(HTML)
        assert result.etag
        stored = store.get(key, verify=True)
        assert (stored.data, stored.sha256, stored.size, stored.media_type) == (
            HTML,
            HTML_SHA256,
            len(HTML),
            "text/html",
        )
        head = store.head(key)
        assert (head.sha256, head.size, head.media_type, head.etag) == (
            HTML_SHA256,
            len(HTML),
            "text/html",
            result.etag,
        )
        assert store.exists(key) is True

    def test_same_digest_size_and_type_again_is_already_stored(self, store: ObjectStore, tenant: str) -> None:
        key = evidence_key(tenant, HTML_SHA256)
        first = store.put_if_absent(key, HTML, HTML_SHA256, "text/html")

        again = store.put_if_absent(key, HTML, HTML_SHA256, "text/html")

        assert again == PutResult(stored=False, etag=first.etag, size=first.size)

    def test_different_media_type_is_immutable_metadata_conflict_and_keeps_the_original(
        self, store: ObjectStore, tenant: str
    ) -> None:
        key = evidence_key(tenant, HTML_SHA256)
        store.put_if_absent(key, HTML, HTML_SHA256, "text/html")

        with pytest.raises(ImmutableMetadataConflict) as raised:
            store.put_if_absent(key, HTML, HTML_SHA256, "application/xhtml+xml")

        assert (raised.value.code, raised.value.status, raised.value.retryable) == (
            "IMMUTABLE_METADATA_CONFLICT",
            409,
            False,
        )
        assert store.get(key, verify=True).media_type == "text/html"

    def test_bytes_not_hashing_to_the_declared_sha256_are_rejected_and_persist_nothing(
        self, store: ObjectStore, tenant: str
    ) -> None:
        key = evidence_key(tenant, HTML_SHA256)

        with pytest.raises(DigestMismatch) as raised:
            store.put_if_absent(key, HTML + b"tampered", HTML_SHA256, "text/html")

        assert (raised.value.code, raised.value.status, raised.value.retryable) == (
            "DIGEST_MISMATCH",
            422,
            False,
        )
        assert store.exists(key) is False

    def test_key_not_ending_in_the_declared_sha256_is_digest_mismatch(
        self, store: ObjectStore, tenant: str
    ) -> None:
        other = b"other bytes"
        key = evidence_key(tenant, digest(other))

        with pytest.raises(DigestMismatch):
            store.put_if_absent(key, HTML, HTML_SHA256, "text/html")

        assert store.exists(key) is False
        assert store.exists(evidence_key(tenant, HTML_SHA256)) is False

    def test_invalid_media_type_is_rejected_and_persists_nothing(
        self, store: ObjectStore, tenant: str
    ) -> None:
        key = evidence_key(tenant, HTML_SHA256)

        with pytest.raises(InvalidMediaType):
            store.put_if_absent(key, HTML, HTML_SHA256, "text/html\nx-injected: 1")

        assert store.exists(key) is False

    def test_identical_bytes_in_two_tenants_are_two_objects(self, store: ObjectStore, tenant: str) -> None:
        # if_artifact_upload / INV-06: "Identical bytes in different tenants remain different objects".
        key_a = evidence_key(f"{tenant}_a", HTML_SHA256)
        key_b = evidence_key(f"{tenant}_b", HTML_SHA256)

        first = store.put_if_absent(key_a, HTML, HTML_SHA256, "text/html")
        second = store.put_if_absent(key_b, HTML, HTML_SHA256, "application/xhtml+xml")

        assert key_a != key_b
        assert key_a.ref != key_b.ref
        assert (first.stored, second.stored) == (True, True)
        assert store.get(key_a).media_type == "text/html"
        assert store.get(key_b).media_type == "application/xhtml+xml"

    def test_missing_object_is_not_found(self, store: ObjectStore, tenant: str) -> None:
        key = evidence_key(tenant, HTML_SHA256)

        with pytest.raises(ObjectNotFound) as raised:
            store.get(key)
        with pytest.raises(ObjectNotFound):
            store.head(key)

        assert (raised.value.code, raised.value.status) == ("OBJECT_NOT_FOUND", 404)
        assert store.exists(key) is False

    def test_concurrent_puts_of_one_key_store_it_exactly_once(self, store: ObjectStore, tenant: str) -> None:
        key = evidence_key(tenant, HTML_SHA256)

        results = put_all_at_once(8, lambda _: store.put_if_absent(key, HTML, HTML_SHA256, "text/html"))

        assert all(isinstance(result, PutResult) for result in results), results
        assert sorted(result.stored for result in results if isinstance(result, PutResult)) == [False] * 7 + [
            True
        ]
        assert store.get(key, verify=True).data == HTML

    def test_concurrent_puts_with_different_media_types_store_one_and_conflict_the_rest(
        self, store: ObjectStore, tenant: str
    ) -> None:
        key = evidence_key(tenant, HTML_SHA256)
        media_types = [f"text/x-variant-{index}" for index in range(6)]

        results = put_all_at_once(6, lambda i: store.put_if_absent(key, HTML, HTML_SHA256, media_types[i]))

        winners = [i for i, result in enumerate(results) if isinstance(result, PutResult)]
        assert len(winners) == 1, results
        assert all(isinstance(results[i], ImmutableMetadataConflict) for i in range(6) if i != winners[0])
        assert store.head(key).media_type == media_types[winners[0]]

    def test_large_object_round_trip(self, store: ObjectStore, tenant: str) -> None:
        data = os.urandom(5 * 1024 * 1024)
        key = evidence_key(tenant, digest(data))

        assert store.put_if_absent(key, data, digest(data), "application/octet-stream").stored is True

        assert store.get(key, verify=True).data == data

    def test_empty_object_round_trip(self, store: ObjectStore, tenant: str) -> None:
        key = evidence_key(tenant, digest(b""))

        assert store.put_if_absent(key, b"", digest(b""), "text/plain").stored is True
        assert store.put_if_absent(key, b"", digest(b""), "text/plain").stored is False

        stored = store.get(key, verify=True)
        assert (stored.data, stored.size) == (b"", 0)

    def test_verified_get_detects_corrupted_bytes(self, store: ObjectStore, tenant: str) -> None:
        key = evidence_key(tenant, HTML_SHA256)
        store.put_if_absent(key, HTML, HTML_SHA256, "text/html")
        self.corrupt_stored_bytes(store, key, HTML.replace(b"2 TB", b"4 TB"))

        with pytest.raises(DigestMismatch):
            store.get(key, verify=True)

        assert store.get(key, verify=False).data == HTML.replace(b"2 TB", b"4 TB")

    def test_export_objects_can_be_deleted_and_delete_is_idempotent(
        self, store: ObjectStore, tenant: str
    ) -> None:
        key = export_key(tenant, HTML_SHA256)
        store.put_if_absent(key, HTML, HTML_SHA256, "text/html")

        store.delete(key)
        store.delete(key)

        assert store.exists(key) is False
        assert store.put_if_absent(key, HTML, HTML_SHA256, "text/html").stored is True

    def test_evidence_is_never_deleted(self, store: ObjectStore, tenant: str) -> None:
        # INV-05: stored artifacts are immutable; the evidence bucket is protected.
        key = evidence_key(tenant, HTML_SHA256)
        store.put_if_absent(key, HTML, HTML_SHA256, "text/html")

        with pytest.raises(ObjectImmutable):
            store.delete(key)

        assert store.get(key).data == HTML


class TestFilesystemObjectStoreContract(ObjectStoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> FilesystemObjectStore:
        return FilesystemObjectStore(tmp_path / "objects", protected_buckets=PROTECTED)

    def corrupt_stored_bytes(self, store: ObjectStore, key: ObjectKey, data: bytes) -> None:
        assert isinstance(store, FilesystemObjectStore)
        path = store.path_of(key)
        header = path.read_bytes().split(b"\n", 1)[0]
        path.chmod(0o644)
        path.write_bytes(header + b"\n" + data)


class TestS3ObjectStoreContract(ObjectStoreContract):
    @pytest.fixture
    def store(self, s3_client: S3Client) -> S3ObjectStore:
        return S3ObjectStore(s3_client, protected_buckets=PROTECTED)

    def corrupt_stored_bytes(self, store: ObjectStore, key: ObjectKey, data: bytes) -> None:
        assert isinstance(store, S3ObjectStore)
        head = store.head(key)
        # Overwrite through the raw client, keeping the metadata, as bit rot or a rogue writer would.
        store.client.put_object(
            Bucket=key.bucket,
            Key=key.object_name,
            Body=data,
            ContentType=head.media_type,
            Metadata={META_SHA256: head.sha256, META_MEDIA_TYPE: head.media_type},
        )

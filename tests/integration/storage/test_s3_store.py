"""S3 backend against a real S3-protocol server (moto over HTTP on loopback): what the contract suite cannot say.

moto is not AWS S3 or R2. It does NOT verify presigned URL signatures and does NOT verify
``x-amz-checksum-sha256`` against the body, so no test here claims either; the signed-header test only checks
what the URL asks a real provider to enforce.
"""

from __future__ import annotations

import hashlib
import socket
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from botocore.exceptions import ClientError

from prw_platform.config import S3Settings, Settings
from prw_platform.storage import (
    DigestMismatch,
    ImmutableMetadataConflict,
    ObjectKey,
    S3ObjectStore,
    StorageUnavailable,
    build_object_store,
    build_s3_client,
    evidence_key,
    export_key,
)
from tests.support.s3_server import S3Server

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

HTML = b"<html><body>Lumen 1 TB SATA</body></html>"
HTML_SHA256 = hashlib.sha256(HTML).hexdigest()
NOW = datetime(2026, 10, 10, 3, 31, 55, tzinfo=UTC)


@pytest.fixture
def tenant() -> str:
    return f"ten_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def store(s3_client: S3Client) -> S3ObjectStore:
    return S3ObjectStore(s3_client, protected_buckets=frozenset({"evidence-private"}), clock=lambda: NOW)


def test_moto_server_honours_if_none_match_star(s3_client: S3Client, tenant: str) -> None:
    # The S3 contract run is only meaningful if the server enforces create-if-absent itself.
    s3_client.put_object(Bucket="evidence-private", Key=f"{tenant}/probe", Body=b"first", IfNoneMatch="*")

    with pytest.raises(ClientError) as raised:
        s3_client.put_object(
            Bucket="evidence-private", Key=f"{tenant}/probe", Body=b"second", IfNoneMatch="*"
        )

    assert raised.value.response["Error"]["Code"] == "PreconditionFailed"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    body = s3_client.get_object(Bucket="evidence-private", Key=f"{tenant}/probe")["Body"].read()
    assert body == b"first"


def test_object_is_stored_at_tenant_slash_sha256_with_its_metadata(
    store: S3ObjectStore, s3_client: S3Client, tenant: str
) -> None:
    store.put_if_absent(evidence_key(tenant, HTML_SHA256), HTML, HTML_SHA256, "text/html")

    head = s3_client.head_object(Bucket="evidence-private", Key=f"{tenant}/{HTML_SHA256}")

    assert head["ContentType"] == "text/html"
    assert head["ContentLength"] == len(HTML)
    assert head["Metadata"] == {"sha256": HTML_SHA256, "media-type": "text/html"}


def test_presigned_put_over_real_http_stores_the_object(store: S3ObjectStore, tenant: str) -> None:
    key = evidence_key(tenant, HTML_SHA256)
    target = store.presign_put(key, HTML_SHA256, len(HTML), "text/html", timedelta(seconds=300))
    assert target is not None

    # moto does not check the signature: this shows the URL and headers reach the right object, not that a
    # provider would accept the signature.
    response = httpx.put(target.url, content=HTML, headers=target.headers, timeout=10)

    assert response.status_code == 200, response.text
    stored = store.get(key, verify=True)
    assert (stored.data, stored.media_type) == (HTML, "text/html")
    assert store.put_if_absent(key, HTML, HTML_SHA256, "text/html").stored is False


def test_presigned_put_signs_key_length_type_digest_and_create_only(
    store: S3ObjectStore, tenant: str
) -> None:
    # if_artifact_upload: the capability is "valid for one key and one content length", for 300 s.
    key = evidence_key(tenant, HTML_SHA256)

    target = store.presign_put(key, HTML_SHA256, len(HTML), "text/html", timedelta(seconds=300))

    assert target is not None
    url = urlsplit(target.url)
    query = parse_qs(url.query)
    assert url.path == f"/evidence-private/{tenant}/{HTML_SHA256}"
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["X-Amz-Expires"] == ["300"]
    assert set(query["X-Amz-SignedHeaders"][0].split(";")) >= {
        "content-length",
        "content-type",
        "if-none-match",
        "x-amz-checksum-sha256",
        "x-amz-meta-sha256",
        "x-amz-meta-media-type",
    }
    assert target.method == "PUT"
    assert target.headers["Content-Length"] == str(len(HTML))
    assert target.headers["If-None-Match"] == "*"
    assert target.expires_at == NOW + timedelta(seconds=300)


def test_repeated_presigned_put_is_412_and_overwrites_nothing(store: S3ObjectStore, tenant: str) -> None:
    key = evidence_key(tenant, HTML_SHA256)
    store.put_if_absent(key, HTML, HTML_SHA256, "text/html")
    target = store.presign_put(key, HTML_SHA256, len(HTML), "text/html", timedelta(seconds=300))
    assert target is not None

    response = httpx.put(target.url, content=HTML, headers=target.headers, timeout=10)

    assert response.status_code == 412
    assert store.get(key, verify=True).data == HTML


def test_presign_rejects_a_key_not_ending_in_the_digest_and_overlong_ttls(
    store: S3ObjectStore, tenant: str
) -> None:
    key = evidence_key(tenant, hashlib.sha256(b"other").hexdigest())

    with pytest.raises(DigestMismatch):
        store.presign_put(key, HTML_SHA256, len(HTML), "text/html", timedelta(seconds=300))
    with pytest.raises(ValueError, match="ttl"):
        store.presign_put(evidence_key(tenant, HTML_SHA256), HTML_SHA256, 1, "text/html", timedelta(days=8))


def test_object_written_without_prw_metadata_is_a_conflict_never_overwritten(
    store: S3ObjectStore, s3_client: S3Client, tenant: str
) -> None:
    key = evidence_key(tenant, HTML_SHA256)
    s3_client.put_object(Bucket=key.bucket, Key=key.object_name, Body=HTML, ContentType="text/html")

    with pytest.raises(DigestMismatch):
        store.head(key)
    with pytest.raises(ImmutableMetadataConflict):
        store.put_if_absent(key, HTML, HTML_SHA256, "text/html")

    assert s3_client.head_object(Bucket=key.bucket, Key=key.object_name)["Metadata"] == {}


def test_missing_bucket_is_storage_unavailable(store: S3ObjectStore, tenant: str) -> None:
    key = ObjectKey(bucket="no-such-bucket", tenant_id=tenant, sha256=HTML_SHA256)

    with pytest.raises(StorageUnavailable, match="NoSuchBucket"):
        store.put_if_absent(key, HTML, HTML_SHA256, "text/html")
    with pytest.raises(StorageUnavailable, match="NoSuchBucket"):
        store.get(key)


def _closed_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    "operation",
    [
        pytest.param(lambda s, k: s.put_if_absent(k, HTML, HTML_SHA256, "text/html"), id="put_if_absent"),
        pytest.param(lambda s, k: s.get(k), id="get"),
        pytest.param(lambda s, k: s.head(k), id="head"),
        pytest.param(lambda s, k: s.exists(k), id="exists"),
        pytest.param(lambda s, k: s.delete(export_key(k.tenant_id, k.sha256)), id="delete"),
    ],
)
def test_unreachable_endpoint_is_retryable_storage_unavailable(
    operation: Callable[[S3ObjectStore, ObjectKey], object],
) -> None:
    settings = S3Settings(
        endpoint_url=f"http://127.0.0.1:{_closed_loopback_port()}", access_key_id="x", secret_access_key="y"
    )
    down = S3ObjectStore(build_s3_client(settings, connect_timeout=0.5, read_timeout=0.5, max_attempts=1))

    with pytest.raises(StorageUnavailable) as raised:
        operation(down, evidence_key("ten_primary", HTML_SHA256))

    assert (raised.value.code, raised.value.status, raised.value.retryable) == (
        "STORAGE_UNAVAILABLE",
        503,
        True,
    )


def test_build_object_store_selects_s3_from_settings(
    s3_server: S3Server, s3_client: S3Client, tenant: str
) -> None:
    store = build_object_store(Settings(object_store="s3", s3=s3_server.settings()))
    key = evidence_key(tenant, HTML_SHA256)

    assert isinstance(store, S3ObjectStore)
    assert store.put_if_absent(key, HTML, HTML_SHA256, "text/html").stored is True
    assert s3_client.head_object(Bucket="evidence-private", Key=key.object_name)["ContentLength"] == len(HTML)

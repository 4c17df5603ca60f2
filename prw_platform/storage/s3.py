"""S3 ObjectStore (boto3), for AWS S3 and S3-compatible stores such as Cloudflare R2.

if_object_storage maps onto S3 as follows:

* create-if-absent: ``PutObject`` with ``If-None-Match: *`` (R2's ``etagDoesNotMatch: *``). Bytes, content type
  and user metadata (``sha256``, ``media-type``) are one request, so they commit together.
* ``ChecksumSHA256`` makes the provider reject bytes that do not hash to the declared digest in transit.
* 412 PreconditionFailed means the key exists: HEAD it and compare digest, size and media type, giving
  "already stored" or 409 IMMUTABLE_METADATA_CONFLICT. 409 ConditionalRequestConflict (a concurrent conditional
  write in flight) is retried a few times; then the HEAD decides.
* Network errors, timeouts and provider errors become 503 STORAGE_UNAVAILABLE (if_object_storage: "Retry
  5xx/network with backoff"; botocore's standard retry mode does the backoff inside one call).
"""

from __future__ import annotations

import base64
import contextlib
import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from prw_platform.config import S3Settings
from prw_platform.storage.errors import (
    DigestMismatch,
    ImmutableMetadataConflict,
    ObjectNotFound,
    StorageUnavailable,
)
from prw_platform.storage.keys import ObjectKey
from prw_platform.storage.port import (
    ObjectMetadata,
    PresignedPut,
    PutResult,
    StoredObject,
    check_deletable,
    check_presign,
    check_put,
    conflict_reason,
    sha256_hex,
)

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client
    from mypy_boto3_s3.type_defs import HeadObjectOutputTypeDef

#: User metadata names (sent as x-amz-meta-sha256 and x-amz-meta-media-type).
META_SHA256 = "sha256"
META_MEDIA_TYPE = "media-type"

#: if_object_storage timeouts: "Binding op 30 s".
DEFAULT_READ_TIMEOUT_SECONDS = 30.0
DEFAULT_CONNECT_TIMEOUT_SECONDS = 5.0
DEFAULT_MAX_ATTEMPTS = 3
_NOT_FOUND_CODES = frozenset({"404", "NoSuchKey", "NotFound"})
_CONFLICT_ATTEMPTS = 4


def build_s3_client(
    settings: S3Settings,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS,
    read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> S3Client:
    """An S3 client from settings. Keys left unset fall back to boto3's default credential chain."""
    secret = settings.secret_access_key.get_secret_value() if settings.secret_access_key else None
    config = Config(
        # SigV4 signs the presigned PUT's headers (content length, type, checksum, If-None-Match); R2 needs it.
        signature_version="s3v4",
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"mode": "standard", "total_max_attempts": max_attempts},
    )
    session = boto3.session.Session()
    return session.client(
        "s3",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region,
        aws_access_key_id=settings.access_key_id,
        aws_secret_access_key=secret,
        config=config,
    )


def _utc_now() -> datetime:
    return datetime.now(UTC)


class S3ObjectStore:
    def __init__(
        self,
        client: S3Client,
        *,
        protected_buckets: frozenset[str] = frozenset(),
        clock: Callable[[], datetime] = _utc_now,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.protected_buckets = protected_buckets
        self._clock = clock
        self._sleep = sleep

    def put_if_absent(self, key: ObjectKey, data: bytes, sha256: str, media_type: str) -> PutResult:
        check_put(key, data, sha256, media_type)
        for attempt in range(_CONFLICT_ATTEMPTS):
            try:
                response = self.client.put_object(
                    Bucket=key.bucket,
                    Key=key.object_name,
                    Body=data,
                    IfNoneMatch="*",
                    ChecksumSHA256=_checksum(sha256),
                    ContentType=media_type,
                    Metadata={META_SHA256: sha256, META_MEDIA_TYPE: media_type},
                )
            except ClientError as error:
                code, status = _code_and_status(error)
                if code == "PreconditionFailed" or status == 412:
                    with contextlib.suppress(ObjectNotFound):  # an export deleted meanwhile: put again
                        return self._already_stored(key, sha256, len(data), media_type)
                elif code == "ConditionalRequestConflict" or status == 409:
                    # S3: another conditional write to this key is in flight; retry after a short backoff.
                    self._sleep(random.uniform(0, 0.05 * 2**attempt))
                else:
                    raise _unavailable(error, key) from error
            except BotoCoreError as error:
                raise _unavailable(error, key) from error
            else:
                return PutResult(stored=True, etag=_etag(response["ETag"]), size=len(data))
        try:
            return self._already_stored(key, sha256, len(data), media_type)
        except ObjectNotFound:
            raise StorageUnavailable(f"put of {key} kept conflicting with concurrent writes") from None

    def _already_stored(self, key: ObjectKey, sha256: str, size: int, media_type: str) -> PutResult:
        try:
            existing = self.head(key)
        except DigestMismatch as error:
            raise ImmutableMetadataConflict(f"{key} is stored but unreadable: {error}") from error
        reason = conflict_reason(existing, sha256, size, media_type, key=key)
        if reason is not None:
            raise ImmutableMetadataConflict(reason)
        return PutResult(stored=False, etag=existing.etag, size=existing.size)

    def get(self, key: ObjectKey, *, verify: bool = False) -> StoredObject:
        with _translated(key):
            response = self.client.get_object(Bucket=key.bucket, Key=key.object_name)
            data = response["Body"].read()
        metadata = _metadata(key, response["Metadata"], response["ContentLength"], response["ETag"])
        if len(data) != metadata.size:
            raise DigestMismatch(f"{key} is truncated: {len(data)} of {metadata.size} bytes")
        if verify and sha256_hex(data) != metadata.sha256:
            raise DigestMismatch(f"{key} is corrupt: its bytes no longer hash to {metadata.sha256}")
        return StoredObject(
            data=data,
            sha256=metadata.sha256,
            size=metadata.size,
            media_type=metadata.media_type,
            etag=metadata.etag,
        )

    def head(self, key: ObjectKey) -> ObjectMetadata:
        response = self._head(key)
        return _metadata(key, response["Metadata"], response["ContentLength"], response["ETag"])

    def exists(self, key: ObjectKey) -> bool:
        try:
            self._head(key)
        except ObjectNotFound:
            return False
        return True

    def delete(self, key: ObjectKey) -> None:
        check_deletable(key, self.protected_buckets)
        with _translated(key):
            self.client.delete_object(Bucket=key.bucket, Key=key.object_name)

    def presign_put(
        self, key: ObjectKey, sha256: str, size: int, media_type: str, ttl: timedelta
    ) -> PresignedPut | None:
        """if_artifact_upload: a short-lived capability "valid for one key and one content length".

        Every header below is signed, so the uploader must send them verbatim: a different length, type or
        digest fails the signature, and ``If-None-Match: *`` means the capability can only create the object,
        never replace it (INV-05). A repeated PUT after success gets 412, and nothing is overwritten."""
        check_presign(key, sha256, size, media_type, ttl)
        checksum = _checksum(sha256)
        expires_at = self._clock() + ttl
        with _translated(key):
            url = self.client.generate_presigned_url(
                "put_object",
                Params={
                    "Bucket": key.bucket,
                    "Key": key.object_name,
                    "ContentType": media_type,
                    "ContentLength": size,
                    "ChecksumSHA256": checksum,
                    "IfNoneMatch": "*",
                    "Metadata": {META_SHA256: sha256, META_MEDIA_TYPE: media_type},
                },
                ExpiresIn=int(ttl.total_seconds()),
                HttpMethod="PUT",
            )
        headers = {
            "Content-Type": media_type,
            "Content-Length": str(size),
            "If-None-Match": "*",
            "x-amz-checksum-sha256": checksum,
            f"x-amz-meta-{META_SHA256}": sha256,
            f"x-amz-meta-{META_MEDIA_TYPE}": media_type,
        }
        return PresignedPut(url=url, method="PUT", headers=headers, expires_at=expires_at)

    def _head(self, key: ObjectKey) -> HeadObjectOutputTypeDef:
        with _translated(key):
            return self.client.head_object(Bucket=key.bucket, Key=key.object_name)


def _checksum(sha256: str) -> str:
    """S3's ChecksumSHA256 is the base64 of the raw digest."""
    return base64.b64encode(bytes.fromhex(sha256)).decode("ascii")


def _etag(etag: str) -> str:
    return etag.strip('"')


def _metadata(key: ObjectKey, user_metadata: dict[str, str], size: int, etag: str) -> ObjectMetadata:
    sha256 = user_metadata.get(META_SHA256)
    media_type = user_metadata.get(META_MEDIA_TYPE)
    if sha256 is None or media_type is None:
        raise DigestMismatch(
            f"{key} carries no sha256/media-type metadata: it was not written by an ObjectStore"
        )
    if sha256 != key.sha256:
        raise DigestMismatch(f"{key} carries sha256 metadata {sha256}")
    return ObjectMetadata(sha256=sha256, size=size, media_type=media_type, etag=_etag(etag))


def _code_and_status(error: ClientError) -> tuple[str, int]:
    code = str(error.response.get("Error", {}).get("Code", ""))
    status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
    return code, status


def _unavailable(error: ClientError | BotoCoreError, key: ObjectKey) -> StorageUnavailable:
    """Provider and network failures. A provider-side checksum failure (BadDigest) is corruption in transit,
    since the bytes were hashed before sending, so it is retryable like any other transport failure."""
    if isinstance(error, ClientError):
        code, status = _code_and_status(error)
        return StorageUnavailable(f"object store refused {key}: {code or 'error'} (HTTP {status})")
    return StorageUnavailable(f"object store unreachable for {key}: {error}")


@contextlib.contextmanager
def _translated(key: ObjectKey) -> Iterator[None]:
    try:
        yield
    except ClientError as error:
        code, status = _code_and_status(error)
        if code in _NOT_FOUND_CODES or (status == 404 and code != "NoSuchBucket"):
            raise ObjectNotFound(f"{key} is not stored") from error
        raise _unavailable(error, key) from error
    except BotoCoreError as error:
        raise _unavailable(error, key) from error

"""A real S3-protocol server for tests: moto's ThreadedMotoServer on a free loopback port.

It speaks S3 over HTTP, so the S3 backend runs its real boto3 code path (signing, headers, retries, error
parsing). Known gaps against AWS S3 / R2, so tests do not claim them: moto does not verify presigned URL
signatures, does not verify ``x-amz-checksum-sha256`` against the body, and sets user metadata a moment after
the object becomes visible (AWS commits both at once).

One gap is closed here rather than worked around: moto checks ``If-None-Match: *`` and then writes, with nothing
between the two, so two concurrent conditional puts of one key can both succeed. AWS S3 and R2 make the check and
the write one step (at most one succeeds, the others get 412 or 409), and the object store contract tests that
promise. ``_serialize_conditional_writes`` gives moto's handlers that atomicity with one lock around the
conditional PUT and CompleteMultipartUpload paths; unconditional requests do not take it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from threading import Lock
from typing import TYPE_CHECKING, Any

from moto.s3.responses import S3Response
from moto.server import ThreadedMotoServer
from pydantic import SecretStr

from prw_platform.config import S3Settings
from prw_platform.storage import build_s3_client

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

#: moto accepts any credentials; fixed ones keep boto3 away from the machine's credential chain.
TEST_ACCESS_KEY_ID = "testing"
TEST_SECRET_ACCESS_KEY = "testing"


_CONDITIONAL_WRITES = Lock()


def _serialize_conditional_writes() -> None:
    """Make moto's If-None-Match / If-Match check and its write one step, as on AWS S3 (see the module doc)."""
    if getattr(S3Response, "_prw_conditional_writes_serialized", False):
        return

    def conditional(handler: Any) -> Any:
        @wraps(handler)
        def serialized(self: S3Response, *args: Any, **kwargs: Any) -> Any:
            if "If-None-Match" in self.headers or "If-Match" in self.headers:
                with _CONDITIONAL_WRITES:
                    return handler(self, *args, **kwargs)
            return handler(self, *args, **kwargs)

        return serialized

    S3Response.put_object = conditional(S3Response.put_object)  # type: ignore[method-assign]
    S3Response._key_response_post = conditional(S3Response._key_response_post)  # type: ignore[method-assign]
    S3Response._prw_conditional_writes_serialized = True  # type: ignore[attr-defined]


@dataclass(frozen=True)
class S3Server:
    endpoint_url: str

    def settings(self) -> S3Settings:
        return S3Settings(
            endpoint_url=self.endpoint_url,
            region="us-east-1",
            access_key_id=TEST_ACCESS_KEY_ID,
            secret_access_key=SecretStr(TEST_SECRET_ACCESS_KEY),
        )

    def client(self) -> S3Client:
        return build_s3_client(self.settings())


def ensure_buckets(client: S3Client, buckets: Iterable[str]) -> None:
    """Create the buckets if missing (moto's state is process-wide and may have been reset)."""
    existing = {bucket["Name"] for bucket in client.list_buckets().get("Buckets", [])}
    for bucket in buckets:
        if bucket not in existing:
            client.create_bucket(Bucket=bucket)


@contextmanager
def running_s3_server(buckets: Iterable[str] = ()) -> Iterator[S3Server]:
    """Start moto on 127.0.0.1 with an OS-chosen free port, create ``buckets``, stop it on exit."""
    _serialize_conditional_writes()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        s3_server = S3Server(endpoint_url=f"http://{host}:{port}")
        ensure_buckets(s3_server.client(), buckets)
        yield s3_server
    finally:
        server.stop()

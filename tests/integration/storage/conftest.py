from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from prw_platform.storage import EVIDENCE_BUCKET, EXPORTS_BUCKET
from tests.support.s3_server import S3Server, ensure_buckets, running_s3_server

if TYPE_CHECKING:
    from mypy_boto3_s3.client import S3Client

BUCKETS = (EVIDENCE_BUCKET, EXPORTS_BUCKET)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    with running_s3_server(buckets=BUCKETS) as server:
        yield server


@pytest.fixture(scope="session")
def session_s3_client(s3_server: S3Server) -> S3Client:
    # Building a boto3 client loads the service model (~0.2 s): one per session keeps the suite fast.
    return s3_server.client()


@pytest.fixture
def s3_client(session_s3_client: S3Client) -> S3Client:
    ensure_buckets(session_s3_client, BUCKETS)
    return session_s3_client

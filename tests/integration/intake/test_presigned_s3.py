"""if_artifact_upload with an S3-protocol store (moto on loopback): mode=presigned returns the store's own PUT
capability; the bytes go straight to the bucket and reach "stored" when a capture (or a new declare) finds them.

moto does not verify presigned signatures or x-amz-checksum-sha256 (tests/support/s3_server.py), so this shows
the flow and the headers the collector must send, not the store's enforcement of them."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.intake import (
    IntakeContext,
    IntakeService,
    UploadDeclaration,
)
from prw_platform.storage import EVIDENCE_BUCKET, S3ObjectStore
from tests.integration.intake.helpers import PAGE, PAGE_SHA256, SOURCE, World
from tests.integration.intake.test_captures import submission
from tests.support.s3_server import S3Server, running_s3_server


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    with running_s3_server(buckets=(EVIDENCE_BUCKET,)) as server:
        yield server


@pytest.fixture
def s3_intake(context: IntakeContext, s3_server: S3Server) -> IntakeService:
    store = S3ObjectStore(s3_server.client(), protected_buckets=frozenset({EVIDENCE_BUCKET}))
    return IntakeService(
        IntakeContext(db=context.db, store=store, epochs=context.epochs, enqueuer=context.enqueuer)
    )


def declaration(mode: str) -> UploadDeclaration:
    return UploadDeclaration.model_validate(
        {
            "sha256": PAGE_SHA256,
            "bytes": len(PAGE),
            "media_type": "text/html",
            "source_id": SOURCE,
            "mode": mode,
        }
    )


def test_a_presigned_declare_returns_the_stores_put_url_with_the_signed_headers(
    world: World, s3_intake: IntakeService, s3_server: S3Server
) -> None:
    declared = s3_intake.declare_upload(world.principal(), declaration("presigned"))

    assert declared.target is not None
    assert declared.target.url is not None
    assert declared.target.url.startswith(
        f"{s3_server.endpoint_url}/{EVIDENCE_BUCKET}/{world.tenant}/{PAGE_SHA256}"
    )
    assert declared.target.headers["Content-Length"] == str(len(PAGE))
    assert declared.target.headers["If-None-Match"] == "*"
    assert "x-amz-checksum-sha256" in declared.target.headers


def test_a_streamed_declare_on_s3_still_goes_through_the_resolver(
    world: World, s3_intake: IntakeService
) -> None:
    declared = s3_intake.declare_upload(world.principal(), declaration("streamed"))

    assert declared.target is not None
    assert declared.target.url is None


def test_bytes_put_to_the_presigned_url_are_stored_and_a_capture_can_cite_them(
    world: World, s3_intake: IntakeService, owner_db: Database
) -> None:
    declared = s3_intake.declare_upload(world.principal(), declaration("presigned"))
    assert declared.target is not None
    assert declared.target.url is not None

    put = httpx.put(declared.target.url, content=PAGE, headers=declared.target.headers)
    assert put.status_code == 200, put.text
    submitted = s3_intake.submit_capture(world.principal(), "presigned-key", submission())

    assert not submitted.replayed
    assert world.counts(owner_db)["artifact"] == 1
    assert s3_intake.declare_upload(world.principal(), declaration("presigned")).status == "already_stored"

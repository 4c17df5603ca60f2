"""``prw collect`` through the presigned S3 upload path (if_artifact_upload: "PUT bytes using the presigned
capability"): the served intake API over an S3-protocol store (moto on loopback, tests/support/s3_server.py)
answers every declare with the store's own PUT URL; the client PUTs the bytes straight to the bucket, never to
intake's streamed route, and every capture then finds its artifact stored (intake adopts the object it finds).

moto does not verify presigned signatures or x-amz-checksum-sha256, so this shows the client's path and the
object it leaves, not the store's enforcement (tests/integration/intake/test_presigned_s3.py says the same)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prw_api.intake import create_app
from prw_api.server import BackgroundServer
from prw_cli.main import app
from prw_platform.auth import ProvisionedClient
from prw_platform.config import Settings
from prw_platform.db.database import Database
from prw_platform.storage import EVIDENCE_BUCKET, S3ObjectStore
from tests.e2e.intake.conftest import IntakeApiServices
from tests.e2e.intake.faults import Faults
from tests.integration.intake.helpers import SOURCE, World
from tests.support.s3_server import S3Server, running_s3_server

runner = CliRunner()
PUT_THROUGH_INTAKE = ("PUT", "/v1/artifacts/uploads/{id}", "*")
DECLARE = ("POST", "/v1/artifacts/uploads")


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    with running_s3_server(buckets=(EVIDENCE_BUCKET,)) as server:
        yield server


@pytest.fixture
def store(s3_server: S3Server) -> S3ObjectStore:  # the intake services of conftest.py use this store
    return S3ObjectStore(s3_server.client(), protected_buckets=frozenset({EVIDENCE_BUCKET}))


@pytest.fixture
def counted(settings: Settings, services: IntakeApiServices) -> Faults:
    """The intake app with no fault planned: it only counts the requests it sees."""
    return Faults(create_app(settings, services.intake, services.auth, services.collectors))


@pytest.fixture
def intake_url(counted: Faults) -> Iterator[str]:
    with BackgroundServer(counted) as server:
        yield server.url


@pytest.fixture
def pages(tmp_path: Path) -> Path:
    folder = tmp_path / "pages"
    folder.mkdir()
    for n in range(1, 4):
        (folder / f"s3-{n}.html").write_text(f"<html><title>S3 page {n}</title><body>{n}</body></html>")
    return folder


def test_collect_puts_each_page_to_its_presigned_s3_url_and_captures_it(
    counted: Faults,
    intake_url: str,
    client: ProvisionedClient,
    world: World,
    owner_db: Database,
    s3_server: S3Server,
    pages: Path,
) -> None:
    env = {
        "PRW_COLLECTOR_CLIENT_ID": client.client_id,
        "PRW_COLLECTOR_CLIENT_SECRET": client.client_secret,
        "COLUMNS": "250",
    }
    argv = ["collect", "--source", SOURCE, "--intake", intake_url, str(pages), "--receipt-wait", "0"]

    result = runner.invoke(app, argv, env=env)

    assert result.exit_code == 0, result.output
    assert "captures 3, outcome succeeded" in result.output
    digests = {hashlib.sha256(page.read_bytes()).hexdigest(): page.read_bytes() for page in pages.iterdir()}
    # One declare per page (counted by its sha256), no byte through intake: every PUT went to the store's URL.
    declared = {s for (method, route, s) in counted.seen if (method, route) == DECLARE and s != "*"}
    assert declared == set(digests)
    assert counted.seen[PUT_THROUGH_INTAKE] == 0
    s3 = s3_server.client()
    for digest, data in digests.items():
        stored = s3.get_object(Bucket=EVIDENCE_BUCKET, Key=f"{world.tenant}/{digest}")
        assert stored["Body"].read() == data
    with owner_db.transaction(read_only=True) as conn:
        rows = conn.execute(
            """SELECT a.sha256, count(DISTINCT c.capture_id) AS captures
               FROM resolver.artifact a
               JOIN resolver.capture_artifact ca USING (tenant_id, artifact_id)
               JOIN resolver.capture c USING (tenant_id, capture_id)
               WHERE a.tenant_id = %s GROUP BY a.sha256""",
            (world.tenant,),
        ).fetchall()
    assert {row["sha256"]: row["captures"] for row in rows} == dict.fromkeys(digests, 1)

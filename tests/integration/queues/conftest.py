"""Queue fixtures: each contract test runs on PostgreSQL (real server, resolver_app role) and on SQS (moto's
server on loopback), each time on a new queue with a unique name.

Queues are isolated by their unique names, so the PostgreSQL tests share one fresh database per session (cloned
from the migrated template like every test database) instead of cloning one per test.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.queues import PostgresQueue, Queue, SqsQueue, ensure_sqs_queues
from tests.integration.queues.delivery import QueueBackend
from tests.support.postgres import MAIN, fresh_database
from tests.support.sqs_server import SqsServer, running_sqs_server

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

SQS_PREFIX = "prw-test-"


def unique_queue_name() -> str:
    return f"t-{uuid.uuid4().hex[:16]}"


@pytest.fixture(scope="session")
def queue_db_url(pg_admin_url: str, pg_templates: dict[str, str]) -> Iterator[str]:
    with fresh_database(pg_admin_url, pg_templates[MAIN], "prw_q") as url:
        yield url


@pytest.fixture(scope="session")
def queue_dbs(queue_db_url: str) -> Iterator[dict[str | None, Database]]:
    """One pool per role on the session's queue database; None is the owner."""
    dbs: dict[str | None, Database] = {
        role: Database(queue_db_url, role=role, max_size=4, application_name=f"prw-test-q-{role}").open()
        for role in (None, *roles.SERVICE_ROLES, roles.RESOLVER_SWEEPER)
    }
    yield dbs
    for db in dbs.values():
        db.close()


@pytest.fixture(scope="session")
def sqs_server() -> Iterator[SqsServer]:
    with running_sqs_server() as server:
        yield server


@pytest.fixture(scope="session")
def sqs_client(sqs_server: SqsServer) -> SQSClient:
    # Building a boto3 client loads the service model: one per session keeps the suite fast.
    return sqs_server.client()


def make_sqs_queue(client: SQSClient, *, max_receives: int = 3, visibility_timeout: int = 30) -> SqsQueue:
    name = unique_queue_name()
    ensure_sqs_queues(
        client, [name], prefix=SQS_PREFIX, max_receives=max_receives, visibility_timeout=visibility_timeout
    )
    # moto's DLQ counts are exact, so a DLQ scan need not long-poll before deciding it saw everything.
    return SqsQueue(
        client,
        name,
        prefix=SQS_PREFIX,
        max_receives=max_receives,
        visibility_timeout=visibility_timeout,
        scan_wait_seconds=0,
    )


def make_postgres_queue(
    db: Database, *, max_receives: int = 3, visibility_timeout: int = 30
) -> PostgresQueue:
    return PostgresQueue(
        db,
        unique_queue_name(),
        max_receives=max_receives,
        visibility_timeout=visibility_timeout,
        poll_interval_seconds=0.05,
    )


@pytest.fixture(params=["postgres", "sqs"])
def backend(request: pytest.FixtureRequest) -> QueueBackend:
    if request.param == "postgres":
        db = request.getfixturevalue("queue_dbs")[roles.RESOLVER_APP]

        def make_pg(**options: int) -> Queue:
            return make_postgres_queue(db, **options)

        return QueueBackend("postgres", make_pg, exclusive_delivery=True)

    client: SQSClient = request.getfixturevalue("sqs_client")

    def make_sqs(**options: int) -> Queue:
        return make_sqs_queue(client, **options)

    return QueueBackend("sqs", make_sqs, exclusive_delivery=False)


@pytest.fixture
def queue(backend: QueueBackend) -> Queue:
    """A fresh queue with max_receives=3 (ADR-009's 5, made smaller to keep tests short)."""
    return backend.make(max_receives=3)

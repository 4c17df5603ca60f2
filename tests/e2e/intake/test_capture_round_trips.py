"""Pins the database round trips of one capture (capture throughput): POST /v1/captures served over HTTP,
its main and control databases behind a counting proxy on loopback (tests/support/pg_proxy.py), the PostgreSQL
resolution queue, the history epoch cached as in production (``PRW_INTAKE_EPOCH_CACHE_SECONDS``).

Before the change one capture cost 35 round trips in 6 transactions (credential read, stored artifacts, control
epoch, capture transaction, queue send, enqueued mark, each with a pool check), then 8 round trips of one
transaction, then 3 (psycopg waited for the BEGIN it sent by itself in pipeline mode); it is now one transaction in
pipeline mode and two round trips: BEGIN, the tenant, the credential (if_capture_submit: "Token valid in form but
client revoked" is still checked on every request), the stored artifacts, the key's advisory lock and the key's
receipt in the first (read with a Flush); the writes, the job's message and the COMMIT in the second (the
transaction's one Sync). A change that adds a round trip fails here."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from prw_api.intake import create_app
from prw_api.server import BackgroundServer
from prw_platform.auth import (
    CollectorAuthService,
    ProvisionedClient,
    TokenSettings,
    revoke_client,
)
from prw_platform.config import Settings
from prw_platform.contracts import ResolutionJob
from prw_platform.db.database import Database
from prw_platform.db.roles import RESOLVER_APP
from prw_platform.queues.postgres import PostgresQueue
from prw_platform.resolver.intake import (
    CollectorService,
    IntakeContext,
    IntakeService,
    QueueJobEnqueuer,
    control_plane_epochs,
)
from prw_platform.storage import FilesystemObjectStore
from tests.e2e.intake.conftest import Collector, token_for
from tests.e2e.intake.flows import capture, error_of, submit, upload
from tests.integration.intake.helpers import World, job_rows
from tests.support.pg_proxy import CountingPgProxy, counting_proxy
from tests.support.postgres import TestDatabases

#: One capture, steady state (pool connections open, epoch cached): see the module docstring.
ROUND_TRIPS_PER_CAPTURE = 2
CAPTURES = 5
WARM_UP = 6


@pytest.fixture
def proxy(databases: TestDatabases) -> Iterator[CountingPgProxy]:
    with counting_proxy(databases.main) as running:
        yield running


@pytest.fixture
def proxied_server(
    settings: Settings, databases: TestDatabases, proxy: CountingPgProxy, world: World
) -> Iterator[tuple[BackgroundServer, PostgresQueue]]:
    """The intake app as ``Platform.intake`` composes it, every database connection through the proxy."""
    # One pooled connection: under a loaded suite the next request can arrive before the last one's connection is
    # back in the pool, and a pool that grows then opens a new connection whose statements are not prepared yet
    # (their Parse messages would count as the captures' traffic).
    resolver = Database(proxy.url(databases.main), role=RESOLVER_APP, max_size=1).open()
    control = Database(proxy.url(databases.control), role=None, max_size=2).open()
    queue = PostgresQueue(resolver, f"resolution-jobs-{world.tenant.replace('_', '-')}")
    intake = IntakeService(
        IntakeContext(
            db=resolver,
            store=FilesystemObjectStore(settings.object_store_root),
            # The longest cache IntakeSettings allows: under a loaded suite the warm-up and the measured captures may
            # outlast the default 5 s, and a re-read of the epoch would count as the captures' round trips.
            epochs=control_plane_epochs(control, cache_seconds=60.0),
            enqueuer=QueueJobEnqueuer(queue),
        )
    )
    auth = CollectorAuthService.from_settings(settings, resolver, TokenSettings())
    try:
        with BackgroundServer(create_app(settings, intake, auth, CollectorService(resolver))) as running:
            yield running, queue
    finally:
        resolver.close()
        control.close()


@pytest.fixture
def proxied_collector(
    proxied_server: tuple[BackgroundServer, PostgresQueue], client: ProvisionedClient
) -> Iterator[Collector]:
    server, _ = proxied_server
    with httpx.Client(base_url=server.url, timeout=10) as http:
        yield Collector(http, token_for(http, client))


def test_a_capture_costs_one_transaction_of_two_round_trips(
    world: World,
    proxied_collector: Collector,
    proxied_server: tuple[BackgroundServer, PostgresQueue],
    proxy: CountingPgProxy,
    owner_db: Database,
) -> None:
    _, queue = proxied_server
    ref = upload(proxied_collector)
    # Warm up: the pools' connections are open, the catalog's epoch is cached and psycopg has prepared the
    # statements it runs often (after 5 executions, one more round trip each).
    for n in range(WARM_UP):
        warm = submit(proxied_collector, capture(ref, native_record_id=f"warm-{n}"), key=f"warm-{n}")
        assert warm.status_code == 202, warm.text

    before, messages_before = proxy.round_trips, proxy.messages()
    for n in range(CAPTURES):
        response = submit(proxied_collector, capture(ref, native_record_id=f"rt-{n}"), key=f"rt-{n}")
        assert response.status_code == 202, response.text
    per_capture = (proxy.round_trips - before) / CAPTURES
    sent = proxy.messages() - messages_before

    assert per_capture == ROUND_TRIPS_PER_CAPTURE, f"{per_capture} round trips per capture: {dict(sent)}"
    # One pipeline per capture: the reads' Flush and the one Sync that closes it are its two round trips; BEGIN
    # and COMMIT are in it, so no statement travels as a simple query of its own.
    assert sent[b"S"] == CAPTURES, dict(sent)
    assert sent[b"Q"] == 0, dict(sent)
    # Durable in that one transaction: every job row is enqueued and its message is on the queue.
    rows = job_rows(owner_db, world.tenant)
    assert len(rows) == CAPTURES + WARM_UP
    assert {row["status"] for row in rows} == {"enqueued"}
    queued = {ResolutionJob.from_message(m.json()).job_id for m in queue.receive(10) + queue.receive(10)}
    assert queued == {str(row["job_id"]) for row in rows}


def test_the_in_transaction_credential_check_refuses_a_revoked_client_at_once(
    world: World,
    proxied_collector: Collector,
    resolver_db: Database,
    client: ProvisionedClient,
    owner_db: Database,
) -> None:
    """No credential cache: a capture after the revocation's commit is 401 CREDENTIAL_REVOKED, persists nothing."""
    ref = upload(proxied_collector)
    assert submit(proxied_collector, capture(ref), key="before").status_code == 202
    before = world.counts(owner_db)

    assert revoke_client(resolver_db, world.tenant, client.client_id)
    response = submit(proxied_collector, capture(ref, native_record_id="after"), key="after")

    assert error_of(response) == (401, "CREDENTIAL_REVOKED", False)
    assert world.counts(owner_db) == before

"""Pins the database round trips of one decision (decision throughput): ``decide`` as resolver_app,
its connections behind a counting proxy on loopback (tests/support/pg_proxy.py).

AW-01 runs in one transaction in pipeline mode. Before its reads were pipelined a create-and-map decision cost
about ten round trips, one per read (cursor lock, idempotency key, source catalog, listing, item id, each
identifier, mapping, release policy), then the writes with the cursor advance and the COMMIT. The reads are now sent
together right behind the cursor lock, which the server runs first, and judged afterwards in the seed's order:
BEGIN, the tenant, the lock and every read in the first round trip; the writes and the cursor advance (whose row
count is checked before the COMMIT) in the second; the COMMIT in the third. A change that adds one fails here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prw_platform.db.database import Database
from prw_platform.db.roles import RESOLVER_APP
from prw_platform.resolver.decisions import decide
from tests.integration.resolver.decision_builders import Catalog
from tests.support.pg_proxy import CountingPgProxy, counting_proxy
from tests.support.postgres import TestDatabases

#: One create-and-map or map decision on a manual catalog, steady state: see the module docstring.
ROUND_TRIPS_PER_DECISION = 3
DECISIONS = 5
#: psycopg prepares a statement at its 5th execution; the pool's connection is open after the first.
WARM_UP = 6


@pytest.fixture
def proxy(databases: TestDatabases) -> Iterator[CountingPgProxy]:
    with counting_proxy(databases.main) as running:
        yield running


@pytest.fixture
def proxied_db(databases: TestDatabases, proxy: CountingPgProxy) -> Iterator[Database]:
    db = Database(proxy.url(databases.main), role=RESOLVER_APP, max_size=1).open()
    yield db
    db.close()


def test_a_create_or_map_decision_costs_one_transaction_of_three_round_trips(
    manual_catalog: Catalog, proxied_db: Database, proxy: CountingPgProxy
) -> None:
    catalog = manual_catalog
    source = "src_manual"

    def run(cmd: object) -> None:
        decide(cmd, proxied_db, catalog.stream, clock=catalog.clock)  # type: ignore[arg-type]

    for n in range(WARM_UP):
        run(catalog.create(n + 1, source_id=source))

    before, messages_before = proxy.round_trips, proxy.messages()
    for n in range(DECISIONS):
        run(catalog.create(100 + n, source_id=source))
    created = (proxy.round_trips - before) / DECISIONS
    sent = proxy.messages() - messages_before
    assert created == ROUND_TRIPS_PER_DECISION, f"{created} round trips per create: {dict(sent)}"
    # One pipeline per decision: BEGIN and COMMIT are in it, so no statement travels as a simple query.
    assert sent[b"Q"] == 0, dict(sent)

    item_id = catalog.decide(catalog.create(200, source_id=source)).item_id
    assert item_id is not None
    for n in range(WARM_UP):
        run(catalog.map(f"rec_map_warm_{n}", item_id, source_id=source))
    before = proxy.round_trips
    for n in range(DECISIONS):
        run(catalog.map(f"rec_map_{n}", item_id, source_id=source))
    mapped = (proxy.round_trips - before) / DECISIONS
    assert mapped == ROUND_TRIPS_PER_DECISION, f"{mapped} round trips per map"

"""Property-based contract testing of the intake API: schemathesis generates requests for every
operation of the served OpenAPI, sends them over real HTTP with a real collector token, and checks each response:
no server error, no status the contract does not document, every body and content type as documented.

Bounded (``MAX_EXAMPLES`` per operation) so that it fits the suite's budget. The operations are driven from the
test body (``operation.as_strategy()``) rather than ``schemathesis.pytest.from_fixture``, whose pytest plugin does
not load with this pytest; the checks are the same.
"""

from __future__ import annotations

from collections import Counter

import httpx
import schemathesis

from prw_api.server import BackgroundServer
from tests.e2e.intake.conftest import Collector
from tests.support.schemathesis_run import exercise

MAX_EXAMPLES = 25


def test_no_request_gets_a_server_error_or_an_undocumented_answer(
    server: BackgroundServer, collector: Collector, http: httpx.Client
) -> None:
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 5  # token, declare, upload, capture, receipt

    statuses: Counter[str] = Counter()
    for operation in operations:
        headers = {} if operation.path == "/v1/oauth/token" else collector.headers
        exercise(operation, statuses, max_examples=MAX_EXAMPLES, headers=headers)

    # Not vacuous: every operation was called and answered. Generated data is mostly refused (unknown ids, bad
    # digests, no such client): the point is how, and every refusal matched the contract.
    assert {key.split(" ")[0] + " " + key.split(" ")[1] for key in statuses} >= {
        f"{o.method.upper()} {o.path}" for o in operations
    }
    assert sum(statuses.values()) >= len(operations) * 5
    assert all(int(key.rsplit(" ", 1)[1]) < 500 for key in statuses), statuses

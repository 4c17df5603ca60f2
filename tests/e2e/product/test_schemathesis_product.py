"""Property-based contract testing of the product API: schemathesis generates requests for every
operation of the served OpenAPI (filters, classes, facets, cursors, ids), sends them over real HTTP to the
product server over the released test catalog, and checks each response: no server error, no status the contract
does not document, every body and content type as documented.

Bounded (``MAX_EXAMPLES`` per operation) to fit the suite's budget; driven from the test body like the intake's
(tests/e2e/intake/test_schemathesis_intake.py).
"""

from __future__ import annotations

from collections import Counter

import schemathesis

from prw_api.server import BackgroundServer
from tests.e2e.product.catalog import Catalog
from tests.support.schemathesis_run import exercise

MAX_EXAMPLES = 40


def test_no_product_request_gets_a_server_error_or_an_undocumented_answer(
    server: BackgroundServer, catalog: Catalog
) -> None:
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {f"{o.method.upper()} {o.path}" for o in operations} >= {
        "GET /v1/items",
        "GET /v1/items/{item_id}",
        "GET /v1/sources/{source_id}",
        "GET /v1/items/{item_id}/listings",
        "GET /v1/merchants",
        "GET /v1/merchants/{merchant_id}",
        "POST /v1/shipping/evaluations",
    }

    statuses: Counter[str] = Counter()
    for operation in operations:
        exercise(operation, statuses, max_examples=MAX_EXAMPLES)

    # Not vacuous: every operation was called and answered, the list with 200s among its answers.
    assert {key.rsplit(" ", 1)[0] for key in statuses} >= {f"{o.method.upper()} {o.path}" for o in operations}
    assert statuses["GET /v1/items 200"] > 0
    assert statuses["GET /v1/merchants 200"] > 0
    assert all(int(key.rsplit(" ", 1)[1]) < 500 for key in statuses), statuses

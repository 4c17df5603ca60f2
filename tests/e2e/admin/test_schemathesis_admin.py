"""Property-based contract testing of the admin API: schemathesis generates requests for every
operation of the served OpenAPI and sends them over real HTTP with a logged-in operator_admin session (the
session cookie and its CSRF token, from the development identity provider), over review cases that real
resolution opened. Each response is checked: no server error, no status the contract does not document, every
body and content type as documented.

Bounded (``MAX_EXAMPLES`` per operation) to fit the suite's budget; driven from the test body
(tests/support/schemathesis_run.py). ``POST /auth/logout`` closes the session, so it runs last.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import schemathesis

from prw_api.admin.deps import CSRF_HEADER, SESSION_COOKIE
from prw_api.server import BackgroundServer
from tests.e2e.admin.conftest import Cases, Operator
from tests.support.schemathesis_run import exercise
from tests.support.schemathesis_run import name as _name

MAX_EXAMPLES = 25
LOGOUT = "POST /auth/logout"


def test_no_admin_request_gets_a_server_error_or_an_undocumented_answer(
    admin: BackgroundServer, login: Callable[[str], Operator], cases: Cases
) -> None:
    cases.open()
    ada = login("ada")
    session = {"Cookie": f"{SESSION_COOKIE}={ada.http.cookies[SESSION_COOKIE]}", CSRF_HEADER: ada.csrf}
    schema = schemathesis.openapi.from_url(f"{admin.url}/openapi.json")
    operations = sorted(
        (result.ok() for result in schema.get_all_operations()), key=lambda o: _name(o) == LOGOUT
    )
    assert {_name(o) for o in operations} >= {
        "POST /v1/decisions",
        "GET /v1/review",
        "GET /v1/review/{case_id}",
        "POST /v1/releases",
        "GET /v1/workers",
        "GET /v1/decisions/{decision_id}",
        LOGOUT,
    }

    statuses: Counter[str] = Counter()
    for operation in operations:
        exercise(operation, statuses, max_examples=MAX_EXAMPLES, headers=session)

    # Not vacuous: every operation was called and answered, and the session was live (reads answered 200).
    assert {key.rsplit(" ", 1)[0] for key in statuses} >= {_name(o) for o in operations}
    assert statuses["GET /v1/review 200"] > 0
    assert statuses["GET /v1/workers 200"] > 0
    assert all(int(key.rsplit(" ", 1)[1]) < 500 for key in statuses), statuses

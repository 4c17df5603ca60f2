"""One way to drive schemathesis over a served OpenAPI from a test body (its pytest plugin does not load with
this pytest): each operation's strategy under a bounded hypothesis budget, every response checked for a server
error, an undocumented status or content type, and a body the schema refuses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def name(operation: schemathesis.APIOperation) -> str:
    return f"{operation.method.upper()} {operation.path}"


def exercise(
    operation: schemathesis.APIOperation,
    statuses: Counter[str],
    *,
    max_examples: int,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Send ``max_examples`` generated requests; count the answers as ``"<METHOD> <path> <status>"``."""

    @given(case=operation.as_strategy())
    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def run(case: schemathesis.Case) -> None:
        response = case.call_and_validate(headers=dict(headers or {}), checks=CHECKS)
        statuses[f"{name(operation)} {response.status_code}"] += 1

    run()

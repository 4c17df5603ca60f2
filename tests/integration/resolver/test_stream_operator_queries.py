"""The SQL in docs/operators/stream.md runs and reports what an operator expects to see."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from prw_platform.db.database import Database
from prw_platform.resolver.stream.relay import relay_batch
from tests.integration.resolver.decision_builders import Catalog

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "operators" / "stream.md"


def _queries() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)


def _run(owner_db: Database, sql: str) -> list[dict[str, Any]]:
    with owner_db.transaction() as conn:
        return conn.execute(sql).fetchall()


def test_the_operator_queries_show_committed_published_and_no_gaps(
    catalog: Catalog, relay_db: Database
) -> None:
    catalog.decide(catalog.create(1))
    catalog.decide(catalog.create(2))
    catalog.decide(catalog.review("rec_unknown"))
    relay_batch(relay_db, lambda messages: None, batch_size=5)
    positions, gaps, decisions, lock_waits, review_cases = _queries()

    [stream] = _run(catalog.owner_db, positions)
    assert (stream["committed_position"], stream["published_through"], stream["unpublished"]) == (9, 5, 4)
    assert stream["fenced_at"] is None
    assert _run(catalog.owner_db, gaps) == []
    assert {r["event_type"] for r in _run(catalog.owner_db, decisions)} >= {
        "catalog_item.created",
        "listing.observed",
    }
    assert _run(catalog.owner_db, lock_waits) == []
    assert [r["kind"] for r in _run(catalog.owner_db, review_cases)] == ["identity"]


def test_the_gap_query_reports_a_missing_position(catalog: Catalog) -> None:
    catalog.decide(catalog.create(1))
    with catalog.owner_db.transaction() as conn:  # simulate a writer that bypassed the decision service
        conn.execute("DELETE FROM resolver.outbox WHERE position = 2")
    gaps = _queries()[1]
    assert [(r["missing_from"], r["missing_to"]) for r in _run(catalog.owner_db, gaps)] == [(2, 2)]

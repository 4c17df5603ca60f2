"""docs/analysts.md stays true: every SQL example runs as product_app against the current schema."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prw_platform.db.database import Database
from prw_platform.product.consumer import apply_delivery
from prw_platform.product.scopes import ProjectedScope
from tests.unit.product.stream import TENANT, StreamBuilder

ANALYSTS_GUIDE = Path(__file__).parents[3] / "docs" / "analysts.md"
EXAMPLES = [
    block
    for block in re.findall(r"```sql\n(.*?)```", ANALYSTS_GUIDE.read_text(), flags=re.DOTALL)
    if "SET ROLE" not in block
]


def test_the_guide_has_query_examples() -> None:
    assert len(EXAMPLES) >= 6


def _deliver_a_catalog_with_something_to_show_for_every_question(stream: StreamBuilder, db: Database) -> None:
    released = [
        stream.item("itm_a"),
        stream.listing("lst_1"),
        stream.mapping("lst_1", "itm_a"),
        stream.release(),
    ]
    # Applied but not released: an item update and a remap.
    private = [stream.item("itm_a", title="renamed"), stream.item("itm_b"), stream.mapping("lst_1", "itm_b")]
    # A mapping parked behind an item that is never delivered.
    stream.item("itm_never_delivered")
    parked = [stream.listing("lst_2"), stream.mapping("lst_2", "itm_never_delivered")]
    for message in released + private + parked:
        apply_delivery(db, message)


@pytest.mark.parametrize("query", EXAMPLES, ids=[f"example{n}" for n in range(len(EXAMPLES))])
def test_analyst_query_example_runs_as_product_app_and_finds_rows(
    query: str, scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    _deliver_a_catalog_with_something_to_show_for_every_question(stream, product_db)

    with product_db.transaction(tenant_id=TENANT, read_only=True) as conn:
        rows = conn.execute(query).fetchall()

    assert rows

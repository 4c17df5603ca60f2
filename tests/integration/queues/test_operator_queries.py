"""The SQL in docs/operators/queues.md runs and shows what an operator expects to see."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from prw_platform.db.database import Database
from prw_platform.queues import MAX_RECEIVES_EXCEEDED, PostgresQueue
from tests.integration.queues.delivery import drain, receive_one

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "operators" / "queues.md"


def _queries() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)


def _run(owner_db: Database, sql: str) -> list[dict[str, Any]]:
    with owner_db.transaction() as conn:
        return conn.execute(sql).fetchall()


def test_the_operator_queries_show_depth_dead_letters_and_redrive(
    resolver_db: Database, owner_db: Database
) -> None:
    queue = PostgresQueue(resolver_db, "resolution-jobs", max_receives=1)
    queue.send({"tenant_id": "ten_primary", "n": 1}, message_id="in-flight")
    receive_one(queue, visibility_timeout=600)
    queue.send({"tenant_id": "ten_primary", "n": 2}, message_id="poison")
    receive_one(queue, visibility_timeout=1)
    while not queue.dead_letters():
        assert queue.receive(1, visibility_timeout=600, wait_seconds=1) == []
    queue.send({"tenant_id": "ten_other", "catalog_id": "cat_x"}, message_id="mismatch")
    queue.dead_letter(receive_one(queue, visibility_timeout=600), "TENANT_MISMATCH", detail="capture cap_1")
    queue.send({"n": 3}, message_id="delayed", delay_seconds=600)
    queue.send({"n": 4}, message_id="visible")
    depth, by_reason, latest, redrive = _queries()

    [row] = _run(owner_db, depth)
    assert (row["queue_name"], row["visible"], row["in_flight"], row["delayed"]) == (
        "resolution-jobs",
        1,
        1,
        1,
    )
    assert row["oldest_visible_age"] is not None
    assert [(r["reason"], r["dead"]) for r in _run(owner_db, by_reason)] == [
        (MAX_RECEIVES_EXCEEDED, 1),
        ("TENANT_MISMATCH", 1),
    ]
    newest = _run(owner_db, latest)[0]
    assert (newest["message_key"], newest["tenant_id"], newest["catalog_id"], newest["detail"]) == (
        "mismatch",
        "ten_other",
        "cat_x",
        "capture cap_1",
    )

    assert _run(owner_db, redrive) == [{"queue_name": "resolution-jobs", "message_key": "poison"}]
    assert [d.reason for d in queue.dead_letters()] == ["TENANT_MISMATCH"]
    delivered = {m.message_id: m.receive_count for m in drain(queue, expected=2)}
    assert delivered == {"visible": 1, "poison": 1}

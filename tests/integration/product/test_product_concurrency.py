"""Deliveries of one stream applied concurrently (several consumers, one queue) still release every parked
event and advance progress through every position: the stream's progress row serializes them (AW-04)."""

from __future__ import annotations

import threading
from typing import Any

from prw_platform.db.database import Database
from prw_platform.product.consumer import DeliveryResult, apply_delivery
from prw_platform.product.progress import stream_progress
from prw_platform.product.scopes import ProjectedScope
from tests.unit.product.stream import TENANT, StreamBuilder

ROUNDS = 15


def _race(db: Database, first: dict[str, Any], second: dict[str, Any]) -> list[DeliveryResult]:
    start = threading.Barrier(2)
    results: list[DeliveryResult] = []
    errors: list[BaseException] = []

    def deliver(message: dict[str, Any]) -> None:
        start.wait()
        try:
            results.append(apply_delivery(db, message))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=deliver, args=(m,)) for m in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors, errors
    return results


def test_a_dependency_committing_concurrently_with_its_dependent_never_strands_it_parked(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database
) -> None:
    for round_number in range(ROUNDS):
        item = stream.item(f"itm_{round_number}")
        listing = stream.listing(f"lst_{round_number}")
        mapping = stream.mapping(f"lst_{round_number}", f"itm_{round_number}")
        apply_delivery(product_db, listing)

        _race(product_db, mapping, item)

    (report,) = stream_progress(product_db, TENANT)
    assert report.parked_count == 0
    assert report.applied_position == 3 * ROUNDS

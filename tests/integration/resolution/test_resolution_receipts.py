"""if_receipt_get: a receipt starts ``stored`` and follows its capture through real resolution — ``accepted`` once
a decision committed, ``in_review`` when a review case opened, ``failed`` with the dead-letter code — set by the
consumer through ``intake.receipts`` in the transaction of its results. "A receipt status of accepted never means
applied": nothing here runs the relay or the product service, and the receipt is accepted all the same."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Database
from prw_platform.epochs import issue_epoch
from prw_platform.queues import PostgresQueue
from prw_platform.resolver.intake import Receipt
from prw_platform.resolver.resolution import DEAD_LETTERED, REVIEW_CASE_OPENED, STAGE_COMPLETED
from prw_platform.resolver.stream.cursor import open_cursor
from prw_platform.storage import FilesystemObjectStore, parse_ref
from tests.integration.resolution.pipeline import (
    ANVIL_MICRODATA,
    CATALOG,
    OTHER_TENANT,
    RACING_BIKE,
    TENANT,
    Collector,
    Resolution,
    page,
)

RECEIPTS_GUIDE = Path(__file__).resolve().parents[3] / "docs" / "operators" / "receipts.md"


def _receipt(collector: Collector, resolution: Resolution, capture_id: str) -> Receipt:
    """The receipt as its collector reads it (GET /v1/receipts/{id}'s service call)."""
    receipt_id = resolution.one("SELECT receipt_id FROM resolver.receipt WHERE capture_id = %s", capture_id)[
        "receipt_id"
    ]
    return collector.intake.get_receipt(collector.principal, receipt_id)


def _unpublished(resolution: Resolution) -> int:
    return int(resolution.one("SELECT count(*) AS n FROM resolver.outbox WHERE published_at IS NULL")["n"])


def test_a_committed_automatic_decision_moves_the_receipt_from_stored_to_accepted_not_applied(
    collector: Collector, resolution: Resolution
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    stored = _receipt(collector, resolution, capture_id)
    assert (stored.status, stored.reason, stored.status_changed_at) == ("stored", None, None)

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision) == (STAGE_COMPLETED, "create_item_and_map")
    accepted = _receipt(collector, resolution, capture_id)
    assert (accepted.status, accepted.reason) == ("accepted", None)
    assert isinstance(accepted.status_changed_at, datetime)
    assert (accepted.receipt_id, accepted.received_at) == (stored.receipt_id, stored.received_at)
    # Accepted never means applied: the accepted change is still in the outbox, not relayed, not applied.
    assert _unpublished(resolution) > 0


def test_a_review_case_moves_the_receipt_to_in_review(collector: Collector, resolution: Resolution) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.run()
    capture_id = collector.submit(page(RACING_BIKE), record="acme-racing-bike")

    (outcome,) = resolution.run().outcomes

    assert outcome.status == REVIEW_CASE_OPENED
    receipt = _receipt(collector, resolution, capture_id)
    assert (receipt.status, receipt.reason) == ("in_review", None)


def test_a_redelivered_job_leaves_the_accepted_receipt_as_it_was(
    collector: Collector, resolution: Resolution, queue: PostgresQueue
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    message = resolution.job_message(capture_id)
    resolution.run()
    accepted = _receipt(collector, resolution, capture_id)

    queue.send(message, message_id=message["job_id"])
    resolution.run()

    assert _receipt(collector, resolution, capture_id) == accepted


def test_a_dead_lettered_job_fails_the_receipt_with_the_dead_letter_code(
    collector: Collector, resolution: Resolution, store: FilesystemObjectStore
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    message = resolution.job_message(capture_id)
    path = store.path_of(parse_ref(message["artifacts"][0]["ref"]))
    os.chmod(path, 0o644)  # objects are read-only (INV-05); this test plays the corruption
    corrupted = bytearray(path.read_bytes())
    corrupted[-2] ^= 0x20
    path.write_bytes(bytes(corrupted))

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.reason) == (DEAD_LETTERED, "DIGEST_MISMATCH")
    receipt = _receipt(collector, resolution, capture_id)
    assert (receipt.status, receipt.reason) == ("failed", "DIGEST_MISMATCH")
    assert resolution.job_status(message["job_id"]) == "dead_lettered"


@pytest.mark.parametrize(
    ("pins", "reason"),
    [
        ({"adapter": "pa_schemaorg@9.9.9"}, "UNKNOWN_ADAPTER_VERSION"),
        ({"adapter": "pa_schemaorg@1.0.0", "profile": "np_storage@99"}, "UNKNOWN_PROFILE_VERSION"),
    ],
)
def test_an_uninstalled_pin_fails_the_receipt_with_its_code(
    pins: dict[str, str], reason: str, collector: Collector, resolution: Resolution
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.replace_queued_jobs(resolution.job_message(capture_id) | {"pins": pins})

    resolution.run()

    receipt = _receipt(collector, resolution, capture_id)
    assert (receipt.status, receipt.reason) == ("failed", reason)


def test_a_job_naming_another_tenant_leaves_the_receipt_stored(
    collector: Collector, resolution: Resolution
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    message: dict[str, Any] = resolution.job_message(capture_id)
    resolution.replace_queued_jobs(message | {"tenant_id": OTHER_TENANT})

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.reason) == (DEAD_LETTERED, "TENANT_MISMATCH")
    # The forged message is not trusted enough to change the capture's receipt (nor its job row).
    assert _receipt(collector, resolution, capture_id).status == "stored"


def test_a_late_dead_letter_does_not_undo_an_accepted_receipt(
    collector: Collector, resolution: Resolution
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    message = resolution.job_message(capture_id)
    resolution.run()

    # A second job of the same capture (a replay pinning an adapter that is not installed) dead-letters.
    resolution.replace_queued_jobs(
        message | {"job_id": f"{capture_id}:extract:2", "attempt_group": 2, "pins": {"adapter": "pa_x@9.9.9"}}
    )
    (outcome,) = resolution.run().outcomes

    assert outcome.status == DEAD_LETTERED
    assert _receipt(collector, resolution, capture_id).status == "accepted"


def test_the_operator_queries_of_docs_operators_receipts_run(
    collector: Collector, resolution: Resolution
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.run()
    key = resolution.one("SELECT idempotency_key FROM resolver.receipt WHERE capture_id = %s", capture_id)[
        "idempotency_key"
    ]
    by_key, by_status, regions = re.findall(r"```sql\n(.*?)```", RECEIPTS_GUIDE.read_text(), flags=re.DOTALL)

    (use,) = resolution.rows(by_key.replace("cw_lumen_browser:p5-1t-hs:2026-10-10T03:31:55Z", key))
    assert (use["key_generation"], use["capture_id"], use["status"]) == (1, capture_id, "accepted")
    assert [(r["status"], r["count"]) for r in resolution.rows(by_status)] == [("accepted", 1)]
    assert [(r["ran_in"], r["egress"], r["count"]) for r in resolution.rows(regions)] == [(None, None, 1)]


def test_a_poison_job_fails_its_receipt_on_its_final_delivery_with_max_receives_exceeded(
    collector: Collector, resolution: Resolution, queue: PostgresQueue, control_db: Database
) -> None:
    """A job that fails retryably on every delivery (a new history epoch whose stream cursor is not open yet:
    STREAM_NOT_OPEN) is retried until its final delivery (the queue's max_receives-th); the consumer then
    dead-letters it itself with MAX_RECEIVES_EXCEEDED and, in the same transaction as its inbox row, fails the
    receipt with that reason. It does not stay ``stored`` (as it would if the queue dead-lettered it unseen)."""
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-poison")
    issue_epoch(control_db, TENANT, CATALOG, "restored history, cursor not open yet")
    # Extract and normalize complete; the identity stage is the one that cannot lock its stream's cursor.
    job_id = f"{capture_id}:identity:1"

    for delivery in range(1, queue.max_receives):
        (outcome,) = resolution.run().outcomes
        assert (outcome.status, outcome.reason) == ("retry_later", "STREAM_NOT_OPEN"), delivery
        assert _receipt(collector, resolution, capture_id).status == "stored"
        assert resolution.job_status(job_id) == "enqueued"

    report = resolution.run()

    (outcome,) = report.outcomes
    assert (outcome.status, outcome.reason, report.dead_lettered) == (
        DEAD_LETTERED,
        "MAX_RECEIVES_EXCEEDED",
        1,
    )
    assert "STREAM_NOT_OPEN" in (outcome.detail or "")
    failed = _receipt(collector, resolution, capture_id)
    assert (failed.status, failed.reason) == ("failed", "MAX_RECEIVES_EXCEEDED")
    assert resolution.job_status(job_id) == "dead_lettered"
    inbox = resolution.one("SELECT outcome FROM resolver.consumer_inbox WHERE message_id = %s", job_id)
    assert inbox["outcome"] == DEAD_LETTERED
    (entry,) = resolution.dead_letters()
    assert (entry["message_key"], entry["reason"]) == (job_id, "MAX_RECEIVES_EXCEEDED")
    depth = resolution.stage_queues["identity"].depth()
    assert (depth.visible, depth.not_visible, depth.dead) == (0, 0, 1)
    assert resolution.count("resolver.decision") == 0


def test_a_redriven_dead_lettered_job_is_resolved_and_its_receipt_accepted(
    collector: Collector,
    resolution: Resolution,
    queue: PostgresQueue,
    control_db: Database,
    resolver_db: Database,
) -> None:
    """The dead-lettered inbox row does not make a redrive a duplicate: once the cause is fixed (the new epoch's
    cursor opened), the redriven job resolves and its receipt moves from ``failed`` to ``accepted``."""
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-redrive")
    epoch = issue_epoch(control_db, TENANT, CATALOG, "restored history, cursor not open yet")
    for _ in range(queue.max_receives):
        resolution.run()
    assert _receipt(collector, resolution, capture_id).status == "failed"

    with resolver_db.transaction(tenant_id=TENANT) as conn:
        open_cursor(conn, StreamKey(TENANT, CATALOG, epoch.epoch_id), datetime.now(UTC))
    identity_queue = resolution.stage_queues["identity"]  # each stage has its DLQ, re-driven on its own
    (entry,) = identity_queue.dead_letters()
    assert queue.dead_letters() == []
    assert identity_queue.redrive([entry.dead_letter_id]) == 1
    (outcome,) = resolution.run().outcomes

    assert outcome.status == STAGE_COMPLETED
    accepted = _receipt(collector, resolution, capture_id)
    assert (accepted.status, accepted.reason) == ("accepted", None)

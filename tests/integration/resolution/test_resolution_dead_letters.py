"""if_resolution_job's terminal errors go to the DLQ at once with the seed's code, and leave no effect: no
decision, no inbox row but the consumer's ``dead_lettered`` record (a redrive claims it again), no results (SCHEMA_INVALID, TENANT_MISMATCH with a security alert, DIGEST_MISMATCH), as
do pins that are not installed (UNKNOWN_ADAPTER_VERSION, UNKNOWN_PROFILE_VERSION)."""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest

from prw_platform.queues import PostgresQueue
from prw_platform.resolver.resolution import DEAD_LETTERED
from prw_platform.storage import FilesystemObjectStore, parse_ref
from tests.integration.resolution.pipeline import (
    ANVIL_MICRODATA,
    OTHER_TENANT,
    SECOND_CATALOG,
    Collector,
    Resolution,
    page,
)


def _assert_no_effects(resolution: Resolution) -> None:
    settled = resolution.one(
        "SELECT count(*) AS n FROM resolver.consumer_inbox WHERE outcome <> %s", DEAD_LETTERED
    )
    assert settled["n"] == 0
    for table in (
        "decision",
        "resolution_result",
        "extracted_claim",
        "catalog_item",
        "outbox",
    ):
        assert resolution.count(f"resolver.{table}") == 0, table


def _dead_lettered(resolution: Resolution, queue: PostgresQueue, reason: str) -> dict[str, Any]:
    (outcome,) = (report := resolution.run()).outcomes
    assert (outcome.status, outcome.reason, report.dead_lettered, report.acked) == (
        DEAD_LETTERED,
        reason,
        1,
        0,
    )
    (entry,) = resolution.dead_letters()
    assert entry["reason"] == reason
    depth = queue.depth()
    assert (depth.visible, depth.not_visible, depth.dead) == (0, 0, 1)
    _assert_no_effects(resolution)
    resolution.assert_contracts_hold()
    return entry


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda m: {k: v for k, v in m.items() if k != "capture_id"}, id="missing_capture_id"),
        pytest.param(lambda m: m | {"job_id": "no colons here"}, id="job_id_not_capture_stage_group"),
        pytest.param(lambda m: m | {"job_id": "cap_other:extract:1"}, id="job_id_of_another_capture"),
        pytest.param(lambda m: m | {"attempt_group": 2}, id="job_id_of_another_attempt_group"),
        pytest.param(lambda m: m | {"pins": {"adapter": "schemaorg"}}, id="pin_without_version"),
        pytest.param(lambda m: m | {"schema_version": "resolution.job/2"}, id="other_schema_version"),
        pytest.param(lambda m: m | {"credentials": "secret"}, id="unknown_field"),
    ],
)
def test_schema_invalid_job_goes_to_the_dlq(
    forge: Any, collector: Collector, resolution: Resolution, queue: PostgresQueue
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.replace_queued_jobs(forge(resolution.job_message(capture_id)))

    entry = _dead_lettered(resolution, queue, "SCHEMA_INVALID")

    assert "resolution.job.v1.json" in entry["detail"] or "capture_id:stage:attempt_group" in entry["detail"]


def test_bytes_body_is_schema_invalid(
    collector: Collector, resolution: Resolution, queue: PostgresQueue
) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.replace_queued_jobs()
    queue.send(b"\x00not json", message_id="cap_x:extract:1")

    _dead_lettered(resolution, queue, "SCHEMA_INVALID")


@pytest.mark.parametrize(
    "claimed",
    [
        pytest.param({"tenant_id": OTHER_TENANT}, id="other_tenant"),
        pytest.param({"catalog_id": SECOND_CATALOG}, id="other_catalog_of_the_tenant"),
        pytest.param({"tenant_id": "ten_unknown"}, id="unknown_tenant"),
    ],
)
def test_job_naming_another_tenant_or_catalog_than_its_capture_is_tenant_mismatch_with_a_security_alert(
    claimed: dict[str, str],
    collector: Collector,
    resolution: Resolution,
    queue: PostgresQueue,
    caplog: pytest.LogCaptureFixture,
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    message = resolution.job_message(capture_id)
    resolution.replace_queued_jobs(message | claimed)

    with caplog.at_level(logging.ERROR, logger="prw.security"):
        _dead_lettered(resolution, queue, "TENANT_MISMATCH")

    (alert,) = [r for r in caplog.records if r.name == "prw.security"]
    assert alert.getMessage().startswith(f"SECURITY ALERT TENANT_MISMATCH job_id={message['job_id']}")
    # The capture's own job row is untouched: the message is not trusted enough to change it.
    assert resolution.job_status(message["job_id"]) == "enqueued"


def test_stored_bytes_that_no_longer_match_their_sha256_are_digest_mismatch(
    collector: Collector, resolution: Resolution, queue: PostgresQueue, store: FilesystemObjectStore
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    message = resolution.job_message(capture_id)
    path = store.path_of(parse_ref(message["artifacts"][0]["ref"]))
    os.chmod(path, 0o644)  # objects are read-only (INV-05); this test plays the corruption
    corrupted = bytearray(path.read_bytes())
    corrupted[-2] ^= 0x20  # same size, other bytes
    path.write_bytes(bytes(corrupted))

    entry = _dead_lettered(resolution, queue, "DIGEST_MISMATCH")

    assert "corrupt" in entry["detail"]
    assert resolution.job_status(message["job_id"]) == "dead_lettered"


@pytest.mark.parametrize(
    ("pins", "reason"),
    [
        ({"adapter": "pa_schemaorg@9.9.9"}, "UNKNOWN_ADAPTER_VERSION"),
        ({"adapter": "pa_schemaorg@1.0.0", "profile": "np_storage@99"}, "UNKNOWN_PROFILE_VERSION"),
    ],
)
def test_pin_that_is_not_installed_goes_to_the_dlq(
    pins: dict[str, str], reason: str, collector: Collector, resolution: Resolution, queue: PostgresQueue
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    message = resolution.job_message(capture_id)
    resolution.replace_queued_jobs(message | {"pins": pins})

    entry = _dead_lettered(resolution, queue, reason)

    assert "is not installed" in entry["detail"]
    assert resolution.job_status(message["job_id"]) == "dead_lettered"

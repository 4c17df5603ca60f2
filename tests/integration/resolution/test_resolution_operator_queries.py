"""The SQL in docs/operators/resolution.md runs and shows an operator what happened to each job."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from prw_platform.resolver.resolution import ResolutionServices, RetryPolicy
from prw_platform.storage import FilesystemObjectStore, ObjectKey, StorageUnavailable, StoredObject
from tests.integration.resolution.pipeline import (
    ANVIL_MICRODATA,
    JACKET_GTIN,
    OTHER_TENANT,
    RACING_BIKE,
    Collector,
    Resolution,
    page,
)

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "operators" / "resolution.md"


@dataclass
class UnavailableStore:
    inner: FilesystemObjectStore

    def get(self, key: ObjectKey, *, verify: bool = False) -> StoredObject:
        raise StorageUnavailable("connection refused")


def _queries() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)


def test_the_operator_queries_show_jobs_results_review_cases_and_dead_letters(
    collector: Collector, resolution: Resolution, services: ResolutionServices, store: FilesystemObjectStore
) -> None:
    anvil_capture = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    bike_capture = collector.submit(page(RACING_BIKE), record="acme-racing-bike")
    anvil, bike = resolution.run().outcomes
    resolution.replace_queued_jobs(resolution.job_message(anvil_capture) | {"tenant_id": OTHER_TENANT})
    resolution.run()
    jacket_capture = collector.submit(page(JACKET_GTIN), record="jacket-l-green")
    resolution.run(replace(services, store=UnavailableStore(store), retry=RetryPolicy(base_seconds=600)))  # type: ignore[arg-type]
    by_status, latest_jobs, awaiting, claims, attributes, dead, queued, lost = _queries()

    assert [(r["tenant_id"], r["stage"], r["status"], r["jobs"]) for r in resolution.rows(by_status)] == [
        ("ten_primary", "extract", "completed", 2),
        ("ten_primary", "extract", "enqueued", 1),
        ("ten_primary", "identity", "completed", 2),
        ("ten_primary", "normalize", "completed", 2),
    ]
    jobs = {r["job_id"]: r for r in resolution.rows(latest_jobs)}
    assert jobs[anvil.job_id]["outcome"] == "stage_completed"
    assert (jobs[anvil.job_id]["action"], jobs[anvil.job_id]["adapter_rule"]) == (
        "create_item_and_map",
        "supports",
    )
    assert (jobs[bike.job_id]["action"], jobs[bike.job_id]["case_id"]) == ("open_review_case", bike.case_id)
    assert jobs[f"{jacket_capture}:extract:1"]["outcome"] is None  # retrying: nothing written yet
    [case] = resolution.rows(awaiting)
    assert (case["case_id"], case["kind"], case["best_candidate"], case["capture_id"]) == (
        bike.case_id,
        "no_strong_identifier",
        anvil.item_id,
        bike_capture,
    )
    assert [r["attribute"] for r in resolution.rows(claims)] == ["core:title", "core:description"]
    assert [r["key"] for r in resolution.rows(attributes)] == ["core:title"]
    [dead_letter] = resolution.rows(dead)
    assert (dead_letter["reason"], dead_letter["tenant_id"], dead_letter["capture_id"]) == (
        "TENANT_MISMATCH",
        OTHER_TENANT,
        anvil_capture,
    )
    [waiting] = resolution.rows(queued)
    assert (waiting["queue_name"], waiting["job_id"], waiting["receive_count"], waiting["state"]) == (
        "resolution-jobs",
        f"{jacket_capture}:extract:1",
        1,
        "delayed",
    )
    assert resolution.rows(lost) == []

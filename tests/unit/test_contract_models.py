from __future__ import annotations

import json
from pathlib import Path

import pytest

from prw_platform.contracts import AcceptedChange, ResolutionJob, SchemaViolation

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "seed_examples"


def test_accepted_change_seed_example_round_trips() -> None:
    message = json.loads((EXAMPLES / "product.accepted-change.v1.example0.json").read_text())
    event = AcceptedChange.from_message(message)
    assert event.sequence == 9
    assert event.dependencies[0].type == "catalog_item"
    again = event.to_message()
    assert AcceptedChange.from_message(again) == event


def test_resolution_job_seed_example_round_trips() -> None:
    message = json.loads((EXAMPLES / "resolution.job.v1.example0.json").read_text())
    job = ResolutionJob.from_message(message)
    assert job.job_id == ResolutionJob.make_job_id("cap_lum_0310", "extract", 1)
    assert ResolutionJob.from_message(job.to_message()) == job


def test_invalid_message_is_schema_invalid_with_the_path() -> None:
    message = json.loads((EXAMPLES / "resolution.job.v1.example0.json").read_text())
    message["artifacts"][0]["sha256"] = "nope"
    with pytest.raises(SchemaViolation, match=r"artifacts/0/sha256") as caught:
        ResolutionJob.from_message(message)
    assert caught.value.code == "SCHEMA_INVALID"

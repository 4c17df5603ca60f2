"""The queue contracts in schemas/ accept the seed's complete example payloads and refuse malformed ones."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

ROOT = Path(__file__).resolve().parents[2]
SEED_EXAMPLES = ROOT / "tests" / "fixtures" / "seed_examples"


def _validator(name: str) -> Draft202012Validator:
    schema = json.loads((ROOT / "schemas" / name).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def _example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SEED_EXAMPLES / name).read_text())
    return data


@pytest.mark.parametrize(
    ("schema", "example"),
    [
        ("product.accepted-change.v1.json", "product.accepted-change.v1.example0.json"),
        ("resolution.job.v1.json", "resolution.job.v1.example0.json"),
        ("resolution.replay.v1.json", "resolution.replay.v1.example0.json"),
    ],
)
def test_seed_example_validates(schema: str, example: str) -> None:
    validator = _validator(schema)
    errors = list(validator.iter_errors(_example(example)))
    assert errors == []
    for embedded in validator.schema.get("examples", []):
        assert list(validator.iter_errors(embedded)) == []


@pytest.mark.parametrize(
    ("mutate", "why"),
    [
        (lambda e: e.pop("history_epoch"), "history_epoch is required: consumers check the epoch first"),
        (lambda e: e.update(sequence=0), "positions start at 1 (INV-03)"),
        (lambda e: e.update(schema_version="accepted-change/2"), "another schema version"),
        (lambda e: e["aggregate"].pop("revision"), "revision decides application (AW-04)"),
        (lambda e: e.update(secret="x"), "no unknown fields: queue messages carry no secrets"),
        (
            lambda e: e["dependencies"].append({"type": "catalog_item", "id": "x", "revision": 0}),
            "revision >= 1",
        ),
    ],
)
def test_malformed_accepted_change_is_refused(mutate: Any, why: str) -> None:
    event = copy.deepcopy(_example("product.accepted-change.v1.example0.json"))
    mutate(event)
    assert list(_validator("product.accepted-change.v1.json").iter_errors(event)), why


@pytest.mark.parametrize(
    ("mutate", "why"),
    [
        (lambda j: j.update(stage="publish"), "unknown stage"),
        (lambda j: j.update(job_id="cap_1"), "job_id = capture_id:stage:attempt_group"),
        (lambda j: j.update(artifacts=[]), "a job references at least one artifact"),
        (lambda j: j["artifacts"][0].update(sha256="ABC"), "sha256 is 64 lowercase hex"),
        (lambda j: j.update(token="secret"), "messages carry no credentials"),
    ],
)
def test_malformed_resolution_job_is_refused(mutate: Any, why: str) -> None:
    job = copy.deepcopy(_example("resolution.job.v1.example0.json"))
    mutate(job)
    assert list(_validator("resolution.job.v1.json").iter_errors(job)), why


def test_the_seed_replay_example_round_trips_through_its_model() -> None:
    from prw_platform.contracts import ResolutionReplay

    example = _example("resolution.replay.v1.example0.json")
    replay = ResolutionReplay.from_message(example)

    assert replay.job_id == ResolutionReplay.make_job_id(replay.replay_id, replay.capture_id)
    assert replay.to_message() == example


@pytest.mark.parametrize(
    ("mutate", "why"),
    [
        (lambda e: e.update(preserve_observed_at=False), "a replay keeps the capture's observed_at"),
        (lambda e: e.update(mode="force"), "dry_run or apply only"),
        (lambda e: e.update(token="secret"), "no credentials in a message"),
        (lambda e: e.pop("tenant_id"), "the tenant is stamped from the session"),
        (lambda e: e.update(artifacts=[]), "a replay reads stored artifacts"),
    ],
)
def test_malformed_replay_is_refused(mutate: Any, why: str) -> None:
    replay = copy.deepcopy(_example("resolution.replay.v1.example0.json"))
    mutate(replay)
    assert list(_validator("resolution.replay.v1.json").iter_errors(replay)), why

"""The checked-in schemas/product.accepted-change.v1.json and docs/events.md are what the contract models generate
(``python -m prw_platform.contracts.generate``): regenerate them in memory and compare."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from prw_platform.contracts import VOCABULARY, AcceptedChange
from prw_platform.contracts.envelope import ENVELOPE
from prw_platform.contracts.generate import (
    EVENTS_DOC_PATH,
    GENERATOR,
    SCHEMA_PATH,
    accepted_change_schema,
    main,
    rendered_files,
)
from prw_platform.contracts.vocabulary import field_value, payload_models

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", [SCHEMA_PATH, EVENTS_DOC_PATH], ids=str)
def test_the_checked_in_file_is_what_the_models_generate(path: Path) -> None:
    checked_in = (ROOT / path).read_text()
    assert checked_in == rendered_files(ROOT)[path], (
        f"{path} drifted from prw_platform/contracts: run {GENERATOR}"
    )


def test_the_generator_rewrites_a_stale_file_and_check_mode_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in (SCHEMA_PATH, EVENTS_DOC_PATH):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    schema_file = tmp_path / SCHEMA_PATH
    schema_file.write_text(schema_file.read_text().replace('"ItemPayload"', '"ItemPayloadOld"', 1))

    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert str(SCHEMA_PATH) in capsys.readouterr().err
    assert main(["--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    assert schema_file.read_text() == (ROOT / SCHEMA_PATH).read_text()


def test_the_envelope_names_exactly_the_fields_of_accepted_change() -> None:
    assert set(ENVELOPE["properties"]) == set(AcceptedChange.model_fields)
    assert set(ENVELOPE["required"]) <= set(AcceptedChange.model_fields)


def test_every_vocabulary_type_has_a_rule_tying_type_to_aggregate_revisions_and_payload() -> None:
    schema = accepted_change_schema()
    rules = {
        rule["if"]["properties"]["type"]["const"]: rule["then"]["properties"] for rule in schema["allOf"]
    }
    assert set(rules) == set(VOCABULARY)
    for name, entry in VOCABULARY.items():
        assert rules[name]["payload"] == {"$ref": f"#/$defs/{entry.payload.__name__}"}
        assert rules[name]["aggregate"]["properties"]["type"] == {"const": entry.aggregate_type}
        assert entry.payload.__name__ in schema["$defs"]


def test_vocabulary_keys_are_declared_payload_fields_and_dependency_rules_name_their_types() -> None:
    for entry in VOCABULARY.values():
        wire_names = {info.alias or name for name, info in entry.payload.model_fields.items()}
        assert entry.id_key in wire_names, entry.name
        assert entry.revision_key is None or entry.revision_key in wire_names, entry.name
        for aggregate_type in entry.depends_on:
            assert f"`{aggregate_type}`" in entry.dependency_rule, (entry.name, aggregate_type)
        assert entry.dependency_rule == "none" or entry.depends_on, entry.name
    assert (
        field_value(
            VOCABULARY["listing_mapping.created"].payload.model_validate(
                {"listing": "l", "from": None, "item": "i"}
            ),
            "from",
        )
        is None
    )


def _doc() -> str:
    return (ROOT / EVENTS_DOC_PATH).read_text()


def test_docs_list_every_event_type_with_its_aggregate_payload_and_dependency_rule() -> None:
    rows = {
        match["type"]: match
        for match in re.finditer(
            r"^\| `(?P<type>[a-z_]+\.[a-z_]+)` \| `(?P<aggregate>[a-z_]+)`, `id` = payload `(?P<id>\w+)` \| "
            r"(?P<revision>[^|]+) \| (?P<dependencies>[^|]+) \| \[`(?P<payload>\w+)`\]",
            _doc(),
            re.MULTILINE,
        )
    }
    assert set(rows) == set(VOCABULARY)
    for name, entry in VOCABULARY.items():
        row = rows[name]
        assert (row["aggregate"], row["id"], row["payload"]) == (
            entry.aggregate_type,
            entry.id_key,
            entry.payload.__name__,
        )
        assert row["revision"].startswith(entry.revisions.value)
        assert row["dependencies"].startswith(entry.dependency_rule)


def test_docs_field_tables_list_exactly_the_fields_of_each_payload_model() -> None:
    doc = _doc()
    models = {model.__name__: model for model in payload_models()}
    schema_defs = accepted_change_schema()["$defs"]
    for name in (*models, "ItemFields", "ItemAttribute", "Identifiers", "ReleasedItem", "ReleasedListing"):
        table = re.search(rf"^### {name}\n(.*?)(?=^### |\Z|^<!-- end)", doc, re.MULTILINE | re.DOTALL)
        assert table is not None, name
        documented = re.findall(r"^\| `(\w+)` \| .*? \| (yes|no) \|", table[1], re.MULTILINE)
        definition = schema_defs[name]
        assert [field for field, _ in documented] == list(definition["properties"]), name
        assert {field for field, required in documented if required == "yes"} == set(definition["required"])


def test_the_seed_example_embedded_in_the_schema_is_the_fixture() -> None:
    fixture = ROOT / "tests" / "fixtures" / "seed_examples" / "product.accepted-change.v1.example0.json"
    assert accepted_change_schema()["examples"] == [json.loads(fixture.read_text())]

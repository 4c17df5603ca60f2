"""schemas/capture.v1.json is what CaptureSubmission generates (``python -m prw_platform.resolver.intake.schema``),
and the schema and the model agree on what a capture is (if_capture_submit, if_source_fetch)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from pydantic import ValidationError

from prw_platform.resolver.intake.requests import CaptureSubmission
from prw_platform.resolver.intake.schema import (
    CAPTURE_GENERATOR,
    CAPTURE_SCHEMA_PATH,
    EXAMPLE,
    capture_schema,
    main,
    render_capture_schema,
)

ROOT = Path(__file__).resolve().parents[3]


def _validator() -> Draft202012Validator:
    schema = json.loads((ROOT / CAPTURE_SCHEMA_PATH).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


def test_the_checked_in_capture_schema_is_what_the_model_generates() -> None:
    assert (ROOT / CAPTURE_SCHEMA_PATH).read_text() == render_capture_schema(), (
        f"{CAPTURE_SCHEMA_PATH} drifted from CaptureSubmission: run {CAPTURE_GENERATOR}"
    )


def test_check_mode_reports_a_stale_schema_and_the_generator_rewrites_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / CAPTURE_SCHEMA_PATH
    target.parent.mkdir(parents=True)
    shutil.copy(ROOT / CAPTURE_SCHEMA_PATH, target)
    target.write_text(target.read_text().replace('"egress"', '"egress_old"', 1))

    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert str(CAPTURE_SCHEMA_PATH) in capsys.readouterr().err
    assert main(["--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    assert target.read_text() == (ROOT / CAPTURE_SCHEMA_PATH).read_text()


def test_the_schema_names_every_field_of_the_model_including_execution_region_and_egress() -> None:
    properties = capture_schema()["properties"]
    assert set(properties) == {info.alias or name for name, info in CaptureSubmission.model_fields.items()}
    # if_source_fetch: "execution_region and egress are recorded on the capture".
    assert {"execution_region", "egress"} <= set(properties)


def test_the_example_is_valid_for_both_the_schema_and_the_model() -> None:
    assert list(_validator().iter_errors(EXAMPLE)) == []
    submission = CaptureSubmission.model_validate(EXAMPLE)
    assert submission.execution_region is not None
    assert submission.execution_region.country == "DE"
    assert submission.egress is not None
    assert submission.egress.verified is False


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("execution_region", {"country": "de"}),
        ("execution_region", {"country": "DEU"}),
        ("execution_region", {"label": "no country"}),
        ("execution_region", {"country": "DE", "market": "DE"}),
        ("egress", {"country": "Germany"}),
        ("egress", {"country": "DE", "verified": "yes"}),
    ],
)
def test_schema_and_model_refuse_the_same_bad_region_or_egress(field: str, value: object) -> None:
    body = copy.deepcopy(EXAMPLE) | {field: value}
    assert list(_validator().iter_errors(body)) != []
    with pytest.raises(ValidationError):
        CaptureSubmission.model_validate(body)

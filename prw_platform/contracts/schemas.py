"""Load and apply the JSON Schemas in ``schemas/`` (the canonical contract files)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator, FormatChecker

_REPO_SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
ACCEPTED_CHANGE_SCHEMA = "product.accepted-change.v1.json"
RESOLUTION_JOB_SCHEMA = "resolution.job.v1.json"
RESOLUTION_REPLAY_SCHEMA = "resolution.replay.v1.json"


class SchemaViolation(ValueError):
    """A message does not conform to its schema (if_resolution_job: DLQ SCHEMA_INVALID)."""

    code = "SCHEMA_INVALID"

    def __init__(self, schema: str, errors: list[str]) -> None:
        super().__init__(f"{schema}: " + "; ".join(errors))
        self.schema = schema
        self.errors = errors


@cache
def load_schema(name: str) -> dict[str, Any]:
    """``name`` is a file name in ``schemas/`` such as ``product.accepted-change.v1.json``. A wheel ships the
    files inside the package (``prw_platform/contracts/schemas``); a source checkout reads ``schemas/``."""
    packaged = resources.files("prw_platform.contracts").joinpath("schemas", name)
    text = packaged.read_text() if packaged.is_file() else (_REPO_SCHEMAS / name).read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator(name: str, without: frozenset[str] = frozenset()) -> Draft202012Validator:
    schema = {key: value for key, value in load_schema(name).items() if key not in without}
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=FormatChecker())


@cache
def _fast_validator(name: str, without: frozenset[str] = frozenset()) -> Any:
    schema = {key: value for key, value in load_schema(name).items() if key not in without}
    return jsonschema_rs.Draft202012Validator(schema, validate_formats=True)


def validate(name: str, document: object, *, without: frozenset[str] = frozenset()) -> None:
    """Raise ``SchemaViolation`` listing every error. ``without`` names top-level keywords to leave out, such as
    the payload union (``allOf``) that accepted-change messages check with the models it was generated from.

    A compiled validator (jsonschema-rs, which checks every format) answers first: a valid document, the common
    case on the apply path, never pays for jsonschema's much slower walk (bench/README.md). Only
    a document it refuses goes through ``jsonschema``, whose errors (and verdict) are the ones reported."""
    if _fast_validator(name, without).is_valid(document):
        return
    errors = sorted(_validator(name, without).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        raise SchemaViolation(
            name, [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]
        )

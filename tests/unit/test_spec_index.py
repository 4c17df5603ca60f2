"""docs/spec.md is the index of every spec id the tree cites: an id cited without an entry, an entry naming a code
or test path that no longer exists, or a state list that no longer matches the code's constant fails here.

A spec id is a token of one of the seed's id families: ``AW-nn``, ``INV-nn``, ``DEC-nn``, ``ADR-nnn``, ``SPK-nn``,
``STATE-…-nnn`` and the connection names ``if_<words>``. Other letter-number tokens are standards or test data
(GTIN-14, EAN-13, SHA-256, UTF-16, a fixture's SKU) and never match. A Python name starting with ``if_`` would read
as a connection id: name it otherwise. Paths are resolved when the test runs, so a moved module fails its entry.
"""

from __future__ import annotations

import enum
import importlib
import os
import re
import typing
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "spec.md"

SPEC_ID = re.compile(
    r"\b(?:AW-\d{2}|INV-\d{2}|DEC-\d{2}|ADR-\d{3}|SPK-\d{2}|STATE-[A-Z]+-[A-Z]+-\d{3}|if_[a-z]+(?:_[a-z]+)*)\b"
)
_TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".json", ".css", ".js", ".html", ".txt"}
_SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist"}
# Recorded third-party pages and datasets: only our own notes (.md) and code (.py) in them are read.
_RECORDED_DIRS = {"fixtures", "demo_pages"}


def _cited_files() -> list[Path]:
    files = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".") and d not in _SKIPPED_DIRS and not d.endswith(".egg-info")
        )
        here = Path(folder)
        recorded = _RECORDED_DIRS.intersection(here.relative_to(ROOT).parts)
        for name in sorted(names):
            path = here / name
            if path == SPEC or path.suffix not in _TEXT_SUFFIXES:
                continue
            if recorded and path.suffix not in {".md", ".py"}:
                continue
            files.append(path)
    return files


def _citations() -> dict[str, Path]:
    """Every id cited in the tree, with the first file citing it."""
    cited: dict[str, Path] = {}
    for path in _cited_files():
        for spec_id in SPEC_ID.findall(path.read_text("utf-8", errors="replace")):
            cited.setdefault(spec_id, path)
    return cited


def _entries() -> dict[str, str]:
    """The entries of docs/spec.md: an id heading (``### ID · title``) and its text up to the next heading."""
    entries: dict[str, str] = {}
    for section in re.split(r"^#{2,3} ", SPEC.read_text("utf-8"), flags=re.MULTILINE)[1:]:
        heading, _, body = section.partition("\n")
        match = SPEC_ID.match(heading)
        if match:
            assert match.group() not in entries, f"docs/spec.md has two entries for {match.group()}"
            entries[match.group()] = body
    return entries


def _paths(body: str, field: str) -> list[str]:
    line = re.search(rf"^- {field}: (.+)$", body, flags=re.MULTILINE)
    return re.findall(r"`([^`]+)`", line.group(1)) if line else []


def test_every_cited_spec_id_has_an_entry_in_the_spec_index() -> None:
    cited = _citations()
    assert len(cited) > 30, "the scan found almost no citations: is ROOT the repository?"
    missing = sorted(set(cited) - set(_entries()))
    assert not missing, "docs/spec.md has no entry for: " + "; ".join(
        f"{spec_id} (cited in {cited[spec_id].relative_to(ROOT)})" for spec_id in missing
    )


def test_standards_and_fixture_codes_are_not_spec_ids() -> None:
    text = "GTIN-14 EAN-13 ISBN-13 SHA-256 UTF-16 HX-200 TS-41 if_capture_submit notif_x AW-01 AW-001"
    assert SPEC_ID.findall(text) == ["if_capture_submit", "AW-01"]


@pytest.mark.parametrize("spec_id", sorted(_entries()))
def test_an_entry_names_code_and_tests_that_exist(spec_id: str) -> None:
    body = _entries()[spec_id]
    code, tests = _paths(body, "Code"), _paths(body, "Tests")
    assert code, f"{spec_id}: no '- Code:' paths"
    assert tests, f"{spec_id}: no '- Tests:' paths"
    gone = [path for path in code + tests if not (ROOT / path).exists()]
    assert not gone, f"{spec_id}: docs/spec.md names paths that do not exist: {gone}"
    misplaced = [path for path in tests if "tests/" not in path] + [path for path in code if "tests/" in path]
    assert not misplaced, f"{spec_id}: a code path under tests/ or a test path outside it: {misplaced}"


_STATES_LINE = re.compile(r"^- States \(`(?P<ref>[\w.]+)`\): (?P<states>.+)$", re.MULTILINE)


def _code_states(ref: str) -> list[str]:
    module_name, _, name = ref.rpartition(".")
    value = getattr(importlib.import_module(module_name), name)
    if isinstance(value, type) and issubclass(value, enum.Enum):
        return [member.value for member in value]
    if typing.get_origin(value) is typing.Literal:
        return list(typing.get_args(value))
    return list(value)


@pytest.mark.parametrize(
    "match", list(_STATES_LINE.finditer(SPEC.read_text("utf-8"))), ids=lambda m: m["ref"]
)
def test_a_listed_state_machine_has_the_states_of_the_code(match: re.Match[str]) -> None:
    assert re.findall(r"`([^`]+)`", match["states"]) == _code_states(match["ref"])

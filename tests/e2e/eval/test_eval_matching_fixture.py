"""``prw eval matching`` over a slice of the bundled Abt-Buy benchmark (tests/fixtures/eval/abt_buy, see its
PROVENANCE.md) against a real, migrated database: catalog records become items, each listing goes through the
identity stage's candidate path, the printed scores agree with the ``--out`` CSV."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prw_cli.main import app
from tests.support import postgres

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "eval" / "abt_buy"
WIDE = {"COLUMNS": "200"}
#: Listings of the validation split in the slice; the catalog is every Abt record their pairs name.
SLICE_LISTINGS = 12

runner = CliRunner()


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture
def env(databases: postgres.TestDatabases) -> dict[str, str]:
    return {"PRW_DATABASE_URL": databases.main, "PRW_CONTROL_DATABASE_URL": databases.control, **WIDE}


@pytest.fixture
def sliced(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The valid pairs of the first listings that have a labelled match, and the records those pairs name."""
    pairs = _read(FIXTURE / "valid.csv")
    matched = list(dict.fromkeys(p["rtable_id"] for p in pairs if p["label"] == "1"))[:SLICE_LISTINGS]
    chosen = [p for p in pairs if p["rtable_id"] in matched]
    left = {p["ltable_id"] for p in chosen}
    catalog = [r for r in _read(FIXTURE / "tableA.csv") if r["id"] in left]
    listings = [r for r in _read(FIXTURE / "tableB.csv") if r["id"] in matched]
    return (
        _write(tmp_path / "catalog.csv", catalog),
        _write(tmp_path / "listings.csv", listings),
        _write(tmp_path / "pairs.csv", chosen),
    )


def _measure(output: str, name: str) -> str:
    found = re.search(rf"│ {re.escape(name)}\s*│\s*(\S+)\s*│", output)
    assert found is not None, f"{name} is not in the table:\n{output}"
    return found.group(1)


def test_the_fixture_is_deepmatchers_layout_with_its_licence() -> None:
    assert len(_read(FIXTURE / "tableA.csv")) == 1081
    assert len(_read(FIXTURE / "tableB.csv")) == 1092
    assert not (FIXTURE / "test.csv").exists()  # held out: the platform is evaluated on it separately
    assert "BSD 3-Clause License" in (FIXTURE / "LICENSE").read_text(encoding="utf-8")
    assert "wbsg-uni-mannheim/SC-Block" in (FIXTURE / "PROVENANCE.md").read_text(encoding="utf-8")


def test_eval_matching_prints_the_scores_the_csv_shows(
    env: dict[str, str], sliced: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    catalog, listings, pairs = sliced
    out = tmp_path / "matching.csv"
    args = ["eval", "matching", "--catalog", str(catalog), "--listings", str(listings), "--pairs", str(pairs)]

    result = runner.invoke(app, [*args, "--out", str(out)], env=env)

    assert result.exit_code == 0, result.output
    rows = _read(out)
    candidates = [r for r in rows if r["kind"] == "candidate"]
    # scored_match@1 maps the listings in its auto-map band; each mapping names the rule, its probability and
    # the findings, and the printed precision is the CSV's judged mappings.
    automatic = [r for r in rows if r["kind"] == "automatic"]
    assert automatic, "the slice's listings with a shared model number are in the auto-map band"
    assert {r["rule"] for r in automatic} == {"rule:scored_match@1"}
    assert all(r["reason"].startswith("match probability") for r in automatic)
    assert _measure(result.stdout, "automatic mappings") == str(len(automatic))
    right = sum(r["judged"] == "match" for r in automatic)
    judged = sum(r["judged"] in ("match", "non-match") for r in automatic)
    assert _measure(result.stdout, "automatic precision (judged)") == f"{right / judged:.3f}"
    assert _measure(result.stdout, "listings identified") == str(SLICE_LISTINGS)
    found_at = {1: 0, 5: 0}
    for listing in {r["listing_id"] for r in rows}:
        ranked = [r for r in candidates if r["listing_id"] == listing]
        assert [int(r["rank"]) for r in ranked] == list(range(1, len(ranked) + 1))
        assert [float(r["score"]) for r in ranked] == sorted(
            (float(r["score"]) for r in ranked), reverse=True
        )
        for k in found_at:
            found_at[k] += any(r["judged"] == "match" for r in ranked[:k])
    assert _measure(result.stdout, "candidate recall@1") == f"{found_at[1] / SLICE_LISTINGS:.3f}"
    assert _measure(result.stdout, "candidate recall@5") == f"{found_at[5] / SLICE_LISTINGS:.3f}"
    assert found_at[5] >= SLICE_LISTINGS - 1
    assert all(
        r["reason"].startswith("match probability") and "title similarity" in r["reason"] for r in candidates
    )

    again = runner.invoke(app, args, env=env)  # the same catalog again: loading replays, nothing is added
    assert again.exit_code == 0, again.output
    assert _measure(again.stdout, "candidate recall@5") == _measure(result.stdout, "candidate recall@5")


def test_a_table_without_a_title_column_is_a_usage_error(
    env: dict[str, str], sliced: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    catalog, _, pairs = sliced
    untitled = _write(tmp_path / "untitled.csv", [{"id": "1", "price": "9.99"}])
    args = ["eval", "matching", "--catalog", str(catalog), "--listings", str(untitled), "--pairs", str(pairs)]
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 2
    assert "NOT_A_MATCHING_TABLE" in result.stderr
    assert "has no rows with a title column (name or title)" in result.stderr


def test_pairs_naming_unknown_records_are_a_usage_error(
    env: dict[str, str], sliced: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    catalog, listings, _ = sliced
    stray = _write(tmp_path / "stray.csv", [{"ltable_id": "99999", "rtable_id": "0", "label": "1"}])
    args = ["eval", "matching", "--catalog", str(catalog), "--listings", str(listings), "--pairs", str(stray)]
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 2
    assert "NOT_A_MATCHING_TABLE" in result.stderr
    assert "names a record that is not in the tables" in result.stderr


def test_two_benchmarks_are_evaluated_in_one_tenant(
    env: dict[str, str], sliced: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Each evaluation catalog has sources of its own (a source belongs to one catalog)."""
    catalog, listings, pairs = sliced
    records = _read(catalog)
    smaller = _write(tmp_path / "smaller.csv", records[:-1])
    kept = {r["id"] for r in records[:-1]}
    fewer_pairs = _write(tmp_path / "fewer.csv", [p for p in _read(pairs) if p["ltable_id"] in kept])
    for table, labelled in ((catalog, pairs), (smaller, fewer_pairs)):
        args = [
            "eval",
            "matching",
            "--catalog",
            str(table),
            "--listings",
            str(listings),
            "--pairs",
            str(labelled),
        ]
        result = runner.invoke(app, args, env=env)
        assert result.exit_code == 0, result.output

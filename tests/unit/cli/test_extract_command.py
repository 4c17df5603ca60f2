"""`prw extract`: the adapter author's dry run on a local file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from prw_cli.commands.extract import guess_media_type
from prw_cli.main import app
from prw_platform.plugins import AUTOLOAD_ENV

runner = CliRunner()
LISTING = Path(__file__).resolve().parents[1] / "plugins" / "fixtures" / "listing_870_evo.json"
WIDE = {"COLUMNS": "200"}


@pytest.fixture(autouse=True)
def _autoload_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)


def _json(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = runner.invoke(app, ["extract", *args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_auto_picks_the_listing_adapter_and_normalizes_with_the_newest_core_profile() -> None:
    document = _json(str(LISTING), "--url", "https://shop.example/p/870-evo-1tb")
    assert (document["adapter"], document["adapter_selection"], document["profile"]) == (
        "pa_prw_listing_json@1.0.0",
        "auto",
        "np_core@2",
    )
    assert document["media_type"] == "application/json"
    assert {
        "attribute": "core:gtin",
        "value": "8806090545917",
        "evidence_locator": "/gtin",
        "source": None,
        "confidence": None,
    } in document["claims"]
    assert document["listing"]["price"] == "89.90"  # a Decimal, printed as a string
    normalized = {row["key"]: row for row in document["normalized"]}
    assert normalized["core:gtin"]["value"] == "08806090545917"
    assert normalized["core:price"]["value"] == "89.90"
    assert normalized["core:currency"]["evidence_locators"] == ["/currency"]
    assert document["problems"] == []
    assert document["diagnostics"] == []


def test_a_class_profile_adds_its_attributes() -> None:
    document = _json(str(LISTING), "--adapter", "pa_prw_listing_json@1.0.0", "--profile", "np_storage@2")
    assert document["adapter_selection"] == "pinned"
    normalized = {row["key"]: row for row in document["normalized"]}
    assert (normalized["storage:capacity"]["value"], normalized["storage:capacity"]["unit"]) == ("1000", "GB")
    assert normalized["storage:interface"]["value"] == "sata"


def test_problems_are_printed_and_are_not_a_failure(tmp_path: Path) -> None:
    listing = tmp_path / "bad_gtin.json"
    listing.write_text('{"title": "T", "gtin": "4006381333932", "price": "$10 - $20"}', encoding="utf-8")
    problems = {(p["attribute"], p["code"]) for p in _json(str(listing))["problems"]}
    # np_core@2: the bare-dollar default alone is no currency to publish (withheld, UNCERTAIN_VALUE).
    assert problems == {
        ("core:gtin", "GTIN_INVALID_CHECK_DIGIT"),
        ("core:price", "PRICE_RANGE"),
        ("core:currency", "UNCERTAIN_VALUE"),
    }


def test_an_unknown_adapter_pin_exits_2_with_the_unknown_adapter_version_message() -> None:
    result = runner.invoke(app, ["extract", "--adapter", "pa_nowhere@9.9.9", str(LISTING)], env=WIDE)
    assert result.exit_code == 2
    assert (
        "UNKNOWN_ADAPTER_VERSION: adapter pa_nowhere@9.9.9 is not installed; installed adapters:"
        in result.stderr
    )
    assert "pa_prw_listing_json@1.0.0" in result.stderr


def test_an_unknown_profile_pin_exits_2() -> None:
    result = runner.invoke(app, ["extract", str(LISTING), "--profile", "np_core@99"], env=WIDE)
    assert result.exit_code == 2
    assert "UNKNOWN_PROFILE_VERSION: profile np_core@99 is not installed" in result.stderr


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    result = runner.invoke(app, ["extract", str(missing)], env=WIDE)
    assert result.exit_code == 2
    assert f"FILE_NOT_FOUND: {missing} does not exist or is not a file" in result.stderr


def test_an_extraction_error_exits_1_with_its_reason(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"title": ', encoding="utf-8")
    result = runner.invoke(app, ["extract", str(broken)], env=WIDE)
    assert result.exit_code == 1
    assert "EXTRACTION_FAILED: pa_prw_listing_json@1.0.0: listing document is not valid JSON" in result.stderr


def test_no_supporting_adapter_exits_1(tmp_path: Path) -> None:
    image = tmp_path / "photo.png"
    image.write_bytes(b"\x89PNG\r\n")
    result = runner.invoke(app, ["extract", str(image)], env=WIDE)
    assert result.exit_code == 1
    assert "NO_ADAPTER: no installed adapter supports media type image/png" in result.stderr


def test_the_media_type_option_overrides_the_extension(tmp_path: Path) -> None:
    listing = tmp_path / "listing.txt"
    listing.write_bytes(LISTING.read_bytes())
    document = _json(str(listing), "--media-type", "application/vnd.prw.listing+json")
    assert (document["media_type"], document["adapter"]) == (
        "application/vnd.prw.listing+json",
        "pa_prw_listing_json@1.0.0",
    )


def test_a_pinned_adapter_runs_even_when_it_does_not_support_the_file(tmp_path: Path) -> None:
    listing = tmp_path / "listing.txt"
    listing.write_bytes(LISTING.read_bytes())
    result = runner.invoke(
        app, ["extract", str(listing), "--adapter", "pa_prw_listing_json@1.0.0", "--json"], env=WIDE
    )
    assert result.exit_code == 1  # text/plain: the adapter finds no JSON artifact and says so
    assert "no JSON artifact" in result.stderr


def test_without_a_core_profile_the_claims_are_shown_unnormalized() -> None:
    document = _json(str(LISTING), env={AUTOLOAD_ENV: "1"})
    assert document["profile"] is None
    assert document["normalized"] == []
    assert document["claims"]
    assert document["diagnostics"] == ["no np_core profile is installed: claims were not normalized"]


def test_the_table_output_has_every_section() -> None:
    result = runner.invoke(app, ["extract", str(LISTING), "--profile", "np_storage@1"], env=WIDE)
    assert result.exit_code == 0, result.output
    for section in ("claims (12)", "listing (5)", "normalized (11)", "problems (0)", "diagnostics (0)"):
        assert section in result.stdout
    assert "pa_prw_listing_json@1.0.0 (auto)" in result.stdout
    assert "/specs/read~1write cache" in result.stdout


@pytest.mark.parametrize(
    ("name", "media_type"),
    [
        ("a.json", "application/json"),
        ("a.html", "text/html"),
        ("a.HTM", "text/html"),
        ("a.jsonld", "application/ld+json"),
        ("a.unknownext", "application/octet-stream"),
    ],
)
def test_media_types_are_guessed_from_the_extension(name: str, media_type: str) -> None:
    assert guess_media_type(Path(name)) == media_type


# --- several files or a directory in one run ---------------------------------------------------------------------

PAGE = Path(__file__).resolve().parents[3] / "cli" / "prw_cli" / "demo_pages" / "extruct_samples"


def _several(*args: str, env: dict[str, str] | None = None) -> tuple[int, list[dict[str, Any]]]:
    result = runner.invoke(app, ["extract", *args, "--json"], env=env)
    documents: list[dict[str, Any]] = json.loads(result.stdout)
    return result.exit_code, documents


def test_several_files_give_one_document_each_and_a_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"title": ', encoding="utf-8")
    image = tmp_path / "photo.png"
    image.write_bytes(b"\x89PNG\r\n")
    missing = tmp_path / "nope.html"
    page = PAGE / "schema.org_product.html"

    code, documents = _several(str(LISTING), str(broken), str(image), str(missing), str(page))

    assert code == 1  # at least one file failed
    assert [(d["file"], d["status"]) for d in documents] == [
        (str(LISTING), "ok"),
        (str(broken), "failed"),
        (str(image), "failed"),
        (str(missing), "failed"),
        (str(page), "ok"),
    ]
    assert [d["error"]["code"] for d in documents if d["error"]] == [
        "EXTRACTION_FAILED",
        "NO_ADAPTER",
        "FILE_NOT_FOUND",
    ]
    # An extracted file's document is the one-file document, with its status.
    assert {**_json(str(LISTING)), "status": "ok", "error": None} == documents[0]
    assert documents[4]["adapter"] == "pa_schemaorg@3.0.0"


def test_every_file_extracted_exits_0(tmp_path: Path) -> None:
    code, documents = _several(str(LISTING), str(PAGE / "schema.org_product.html"))
    assert code == 0
    assert [d["status"] for d in documents] == ["ok", "ok"]


def test_a_directory_is_read_recursively_in_name_order_without_hidden_files(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "listing.json").write_bytes(LISTING.read_bytes())
    (tmp_path / "a.json").write_bytes(LISTING.read_bytes())
    (tmp_path / "notes.md").write_text("not a capture", encoding="utf-8")
    (tmp_path / ".hidden.json").write_bytes(LISTING.read_bytes())
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.json").write_bytes(LISTING.read_bytes())

    code, documents = _several(str(tmp_path), "--glob", "*.json")

    assert code == 0
    assert [d["file"] for d in documents] == [str(tmp_path / "a.json"), str(tmp_path / "b" / "listing.json")]


def test_the_table_has_a_row_per_file_and_the_failures_in_full_after_it(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(LISTING.read_bytes())
    (tmp_path / "z.png").write_bytes(b"\x89PNG\r\n")

    result = runner.invoke(app, ["extract", str(tmp_path)], env=WIDE)

    assert result.exit_code == 1
    rows = [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in result.stdout.splitlines()
        if line.startswith("│")
    ]
    assert rows == [
        ["a.json", "pa_prw_listing_json@1.0.0", "12", "7", "0", "ok"],
        ["z.png", "-", "-", "-", "-", "NO_ADAPTER"],
    ]
    assert "1 extracted, 1 failed" in result.stdout
    assert "z.png: NO_ADAPTER: no installed adapter supports media type image/png" in result.stdout


def test_an_unreadable_file_is_reported_in_its_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked.json"
    locked.write_bytes(LISTING.read_bytes())
    read_bytes = Path.read_bytes

    def refuse(path: Path) -> bytes:
        if path == locked:
            raise PermissionError(13, "Permission denied")
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    code, documents = _several(str(locked), str(LISTING))

    assert code == 1
    assert documents[0]["error"] == {"code": "FILE_UNREADABLE", "message": f"{locked}: Permission denied"}
    assert documents[1]["status"] == "ok"


def test_an_adapter_bug_is_reported_in_its_row_and_the_others_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prw_platform.plugins import PluginRegistry

    select = PluginRegistry.select_adapter

    class Buggy:
        name, version = "pa_buggy", "1.0.0"

        def supports(self, capture: object) -> bool:
            return True

        def extract(self, capture: object, artifacts: object) -> object:
            raise ZeroDivisionError("division by zero")

    def buggy_for_png(registry: PluginRegistry, capture: Any) -> Any:
        return Buggy() if capture.media_type == "image/png" else select(registry, capture)

    monkeypatch.setattr(PluginRegistry, "select_adapter", buggy_for_png)
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "b.json").write_bytes(LISTING.read_bytes())

    code, documents = _several(str(tmp_path))

    assert code == 1
    assert documents[0]["error"] == {"code": "ADAPTER_BUG", "message": "ZeroDivisionError: division by zero"}
    assert documents[1]["status"] == "ok"


def test_url_names_one_file_and_is_refused_with_several(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["extract", str(LISTING), str(LISTING), "--url", "https://x.example/"], env=WIDE
    )
    assert result.exit_code == 2
    assert "USAGE: --url names the page one file was captured from" in result.stderr


def test_a_directory_without_matching_files_exits_2(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(LISTING.read_bytes())
    result = runner.invoke(app, ["extract", str(tmp_path), "--glob", "*.html"], env=WIDE)
    assert result.exit_code == 2
    assert f"NO_FILES: no file matching '*.html' in {tmp_path}" in result.stderr


def test_an_unknown_pin_stops_a_run_of_several_files_before_any_file() -> None:
    result = runner.invoke(
        app, ["extract", str(LISTING), str(LISTING), "--adapter", "pa_nowhere@9.9.9"], env=WIDE
    )
    assert result.exit_code == 2
    assert "UNKNOWN_ADAPTER_VERSION" in result.stderr
    assert result.stdout == ""

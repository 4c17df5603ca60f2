"""``prw extract``: an adapter author's dry run on local files. Nothing is stored, nothing is fetched.

Reads each file, builds the CaptureView an adapter would see, chooses the adapter (``auto`` picks as resolution
does: ``PluginRegistry.select_adapter``), extracts, normalizes with a profile (default: the newest ``np_core``).

One FILE: prints claims, listing fields, normalized attributes, problems and diagnostics (``--json``: one
document). Exit codes: 0 extracted (problems are data, not failures); 1 extraction failed or no adapter supports
the file; 2 usage: unknown pin (UNKNOWN_ADAPTER_VERSION / UNKNOWN_PROFILE_VERSION), missing file.

Several files, or a directory (every file inside, recursively, hidden ones left out; ``--glob`` narrows it): the
plugins are loaded once, a progress bar runs on stderr, and one row per file says adapter, claims, attributes,
problems and status (``--json``: an array of the one-file documents, each with a status). A file that fails
(missing, unreadable, unsupported, an extraction error, even an adapter bug) is reported in its row and the others
go on. Exit codes: 0 every file extracted; 1 at least one failed; 2 usage (unknown pin, no file to read).
"""

from __future__ import annotations

import hashlib
import json
import math
import mimetypes
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from prw_cli.output import results_console
from prw_platform.plugins import (
    Artifact,
    CaptureView,
    Extraction,
    ExtractionError,
    Normalization,
    NormalizationProfile,
    NormalizedAttribute,
    PluginError,
    PluginRegistry,
    SourceAdapter,
    UnknownAdapterVersion,
    UnknownProfileVersion,
    get_plugin_manager,
)

DEFAULT_PROFILE = "np_core"
_EXTRA_MEDIA_TYPES = {".jsonld": "application/ld+json", ".htm": "text/html", ".html": "text/html"}

console = results_console()
err_console = Console(stderr=True)


def guess_media_type(path: Path) -> str:
    suffix = path.suffix.lower()
    return _EXTRA_MEDIA_TYPES.get(suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _fail(code: str, message: str, exit_code: int) -> typer.Exit:
    err_console.print(f"[red]{code}[/red]: {message}", markup=True, highlight=False)
    return typer.Exit(exit_code)


class FileFailed(Exception):
    """One file could not be dry-run: the code and message of its row, and the exit code of a one-file run."""

    def __init__(self, code: str, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.code, self.message, self.exit_code = code, message, exit_code


@dataclass(frozen=True, slots=True)
class DryRun:
    """What every file of one run shares: the registry (plugins loaded once), the adapter pin, the profile."""

    registry: PluginRegistry
    adapter_pin: str
    pinned_adapter: SourceAdapter | None
    profile: NormalizationProfile | None
    url: str | None
    media_type: str | None

    @classmethod
    def load(
        cls, adapter_pin: str, profile_pin: str | None, url: str | None, media_type: str | None
    ) -> DryRun:
        """Raises the registry's errors: an unknown pin, a plugin that does not load."""
        registry = PluginRegistry.from_manager(get_plugin_manager())
        pinned = None if adapter_pin == "auto" else registry.adapter(adapter_pin)
        return cls(registry, adapter_pin, pinned, _choose_profile(registry, profile_pin), url, media_type)

    def run(self, file: Path) -> dict[str, Any]:
        """The file's document; raises FileFailed."""
        if not file.is_file():
            raise FileFailed("FILE_NOT_FOUND", f"{file} does not exist or is not a file", 2)
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise FileFailed("FILE_UNREADABLE", f"{file}: {exc.strerror}") from exc
        return self.run_bytes(data, file, self.media_type or guess_media_type(file), self.url)

    def run_bytes(self, data: bytes, file: Path, media_type: str, url: str | None) -> dict[str, Any]:
        """The document for bytes already read (``prw eval`` reads compressed pages and knows each page's
        URL); raises FileFailed."""
        sha256 = hashlib.sha256(data).hexdigest()
        capture = CaptureView(
            capture_id=f"dry_run_{sha256[:12]}",
            source_id="local_file",
            media_type=media_type,
            url=url,
            adapter_hint=None if self.adapter_pin == "auto" else self.adapter_pin,
        )
        artifact = Artifact(f"art_{sha256[:12]}", sha256, capture.media_type, data)
        adapter = self.pinned_adapter or self.registry.select_adapter(capture)
        if adapter is None:
            message = f"no installed adapter supports media type {capture.media_type}; installed: "
            raise FileFailed("NO_ADAPTER", message + (", ".join(self.registry.adapter_pins) or "none"))
        notes = []
        if self.pinned_adapter is not None and adapter.supports(capture) is not True:
            notes.append(
                f"{self.adapter_pin} does not support this capture (supports() is False); extracted as pinned"
            )
        try:
            extraction = adapter.extract(capture, [artifact])
        except ExtractionError as exc:
            raise FileFailed(exc.code, f"{adapter.name}@{adapter.version}: {exc}") from exc
        normalization = self.profile.normalize(extraction.claims) if self.profile is not None else None
        if self.profile is None:
            notes.append(f"no {DEFAULT_PROFILE} profile is installed: claims were not normalized")
        return _document(file, capture, sha256, extraction, normalization, self.pinned_adapter is None, notes)


def extract(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="The captured bytes to read (an HTML page, a JSON listing, ...): files, or directories (every"
            " file inside, recursively).",
            show_default=False,
        ),
    ],
    adapter_pin: Annotated[
        str, typer.Option("--adapter", help="auto, or an exact pin such as pa_schemaorg@1.0.0.")
    ] = "auto",
    url: Annotated[
        str | None, typer.Option("--url", help="The URL the file was captured from (one FILE only).")
    ] = None,
    media_type: Annotated[
        str | None, typer.Option("--media-type", help="Default: guessed from each file's extension.")
    ] = None,
    profile_pin: Annotated[
        str | None, typer.Option("--profile", help="Default: the newest installed np_core.")
    ] = None,
    pattern: Annotated[
        str, typer.Option("--glob", help="In directories, only the files whose name matches, e.g. '*.html'.")
    ] = "*",
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print JSON (Decimals as strings): one document, or an array for several."
        ),
    ] = False,
) -> None:
    """Dry-run an adapter (and a profile) on local files.

    One FILE prints everything the adapter and the profile saw; several files or a directory print one row per
    file. A file that fails is reported in its row and the others go on.
    """
    one_file = len(paths) == 1 and not paths[0].is_dir()
    if not one_file and url is not None:
        raise _fail("USAGE", "--url names the page one file was captured from: give one FILE with it", 2)
    try:
        dry_run = DryRun.load(adapter_pin, profile_pin, url, media_type)
    except (UnknownAdapterVersion, UnknownProfileVersion) as exc:
        raise _fail(exc.code, str(exc), 2) from exc
    except PluginError as exc:
        raise _fail(exc.code, str(exc), 1) from exc

    if one_file:
        try:
            result = dry_run.run(paths[0])
        except FileFailed as failed:
            raise _fail(failed.code, failed.message, failed.exit_code) from failed
        if as_json:
            typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            _render(result)
        return

    files = list(expand(paths, pattern))
    if not files:
        raise _fail("NO_FILES", f"no file matching {pattern!r} in {', '.join(map(str, paths))}", 2)
    results = _run_all(dry_run, files)
    if as_json:
        typer.echo(json.dumps([result for _, result in results], indent=2, ensure_ascii=False))
    else:
        _render_results(results)
    if any(result["status"] != "ok" for _, result in results):
        raise typer.Exit(1)


def expand(paths: Sequence[Path], pattern: str = "*") -> Iterator[tuple[Path, str]]:
    """(file, label) in the order given; a directory's files sorted, recursively, without hidden files or
    folders, labelled relative to it. A path that is neither a file nor a directory is kept: its row says so."""
    for path in paths:
        if not path.is_dir():
            yield path, str(path)
            continue
        for found in sorted(path.rglob(pattern)):
            relative = found.relative_to(path)
            if found.is_file() and not any(part.startswith(".") for part in relative.parts):
                yield found, str(relative)


def _run_all(dry_run: DryRun, files: Sequence[tuple[Path, str]]) -> list[tuple[str, dict[str, Any]]]:
    results: list[tuple[str, dict[str, Any]]] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal) as bar:
        task = bar.add_task("extracting", total=len(files))
        for file, label in files:
            bar.update(task, description=label)
            results.append((label, _row(dry_run, file)))
            bar.advance(task)
    return results


def _row(dry_run: DryRun, file: Path) -> dict[str, Any]:
    try:
        return {**dry_run.run(file), "status": "ok", "error": None}
    except FileFailed as failed:
        error = {"code": failed.code, "message": failed.message}
    except Exception as exc:  # an adapter bug: reported in its row; run the file alone for the traceback
        error = {"code": "ADAPTER_BUG", "message": f"{type(exc).__name__}: {exc}"}
    return {"file": str(file), "status": "failed", "error": error}


def _render_results(results: list[tuple[str, dict[str, Any]]]) -> None:
    """One row per file; the failures' messages after the table, in full."""
    failures = [(label, result["error"]) for label, result in results if result["status"] != "ok"]
    table = Table(
        title=f"prw extract: {len(results)} files",
        title_justify="left",
        caption=f"{len(results) - len(failures)} extracted, {len(failures)} failed",
        caption_justify="left",
    )
    table.add_column("file", overflow="fold")
    table.add_column("adapter", overflow="fold")
    for column in ("claims", "attributes", "problems"):
        table.add_column(column, justify="right")
    table.add_column("status", overflow="fold")
    for label, result in results:
        # Text, not markup: file names and messages may hold brackets.
        if result["status"] == "ok":
            counts = (str(len(result[key])) for key in ("claims", "normalized", "problems"))
            table.add_row(Text(label), Text(result["adapter"]), *counts, Text("ok", style="green"))
        else:
            table.add_row(Text(label), "-", "-", "-", "-", Text(result["error"]["code"], style="red"))
    console.print(table)
    for label, error in failures:
        console.print(Text.assemble((label, "bold"), ": ", (error["code"], "red"), f": {error['message']}"))


def _choose_profile(registry: PluginRegistry, pin: str | None) -> NormalizationProfile | None:
    if pin is not None:
        return registry.profile(pin)
    try:
        return registry.latest_profile(DEFAULT_PROFILE)
    except UnknownProfileVersion:
        return None


def _plain(value: object) -> Any:
    """JSON-safe: Decimals as strings (never floats), non-finite floats as strings."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


def _document(
    file: Path,
    capture: CaptureView,
    sha256: str,
    extraction: Extraction,
    normalization: Normalization | None,
    auto: bool,
    notes: list[str],
) -> dict[str, Any]:
    listing = extraction.listing
    return {
        "file": str(file),
        "sha256": sha256,
        "media_type": capture.media_type,
        "url": capture.url,
        "adapter": extraction.adapter,
        "adapter_selection": "auto" if auto else "pinned",
        "profile": normalization.profile if normalization else None,
        "claims": [
            {
                "attribute": c.attribute,
                "value": _plain(c.value),
                "evidence_locator": c.evidence_locator,
                "source": c.source,
                "confidence": c.confidence,
            }
            for c in extraction.claims
        ],
        "listing": {
            "title": listing.title,
            "url": listing.url,
            "price": _plain(listing.price),
            "currency": listing.currency,
            "availability": listing.availability,
        },
        "normalized": _attributes(normalization.attributes if normalization else ()),
        "withheld": _attributes(normalization.withheld if normalization else ()),
        "problems": [
            {"attribute": p.attribute, "code": p.code, "message": p.message, "raw_value": _plain(p.raw_value)}
            for p in (normalization.problems if normalization else ())
        ],
        "diagnostics": list(extraction.diagnostics) + notes,
        "rules_fired": [
            {"rule": r.rule, "attribute": r.attribute, "before": _plain(r.before), "after": _plain(r.after)}
            for r in extraction.rules_fired
        ],
    }


def _attributes(attributes: Sequence[NormalizedAttribute]) -> list[dict[str, Any]]:
    return [
        {
            "key": a.key,
            "value": _plain(a.value),
            "unit": a.unit,
            "definition_version": a.definition_version,
            "evidence_locators": list(a.evidence_locators),
            "confidence": a.confidence,
        }
        for a in attributes
    ]


def _render(result: dict[str, Any]) -> None:
    console.print(
        f"[bold]{result['file']}[/bold]  {result['media_type']}  sha256 {result['sha256'][:16]}…\n"
        f"adapter [bold]{result['adapter']}[/bold] ({result['adapter_selection']})  "
        f"profile [bold]{result['profile'] or '-'}[/bold]",
        highlight=False,
    )
    sections: list[tuple[str, tuple[str, ...], list[dict[str, Any]]]] = [
        ("claims", ("attribute", "value", "evidence_locator", "source", "confidence"), result["claims"]),
        ("listing", ("field", "value"), [{"field": k, "value": v} for k, v in result["listing"].items()]),
        (
            "normalized",
            ("key", "value", "unit", "definition_version", "evidence_locators", "confidence"),
            result["normalized"],
        ),
        (
            "withheld (under the profile's publication threshold)",
            ("key", "value", "unit", "evidence_locators", "confidence"),
            result["withheld"],
        ),
        ("problems", ("attribute", "code", "message"), result["problems"]),
        ("diagnostics", ("diagnostic",), [{"diagnostic": d} for d in result["diagnostics"]]),
    ]
    for title, columns, rows in sections:
        console.print(f"\n[bold]{title}[/bold] ({len(rows)})", highlight=False)
        if not rows:
            continue
        table = Table()
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*(_cell(row[column]) for column in columns))
        console.print(table)


def _cell(value: object) -> Text:
    """Plain text, never rich markup: locators such as ``meta[property=og:price:amount]`` keep their brackets."""
    if value is None:
        return Text("-")
    if isinstance(value, list):
        return Text("\n".join(str(item) for item in value))
    return Text(str(value))

"""``prw extract``: an adapter author's dry run on a local file. Nothing is stored, nothing is fetched.

Reads FILE, builds the CaptureView an adapter would see, chooses the adapter (``auto`` picks as resolution
does: ``PluginRegistry.select_adapter``), extracts, normalizes with a profile (default: the newest ``np_core``)
and prints claims, listing fields, normalized attributes, problems and diagnostics.

Exit codes: 0 extracted (problems are data, not failures); 1 extraction failed or no adapter supports the file;
2 usage: unknown pin (UNKNOWN_ADAPTER_VERSION / UNKNOWN_PROFILE_VERSION), missing file.
"""

from __future__ import annotations

import hashlib
import json
import math
import mimetypes
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from prw_platform.plugins import (
    Artifact,
    CaptureView,
    Extraction,
    ExtractionError,
    Normalization,
    NormalizationProfile,
    PluginError,
    PluginRegistry,
    SourceAdapter,
    UnknownAdapterVersion,
    UnknownProfileVersion,
    get_plugin_manager,
)

DEFAULT_PROFILE = "np_core"
_EXTRA_MEDIA_TYPES = {".jsonld": "application/ld+json", ".htm": "text/html", ".html": "text/html"}

console = Console()
err_console = Console(stderr=True)


def guess_media_type(path: Path) -> str:
    suffix = path.suffix.lower()
    return _EXTRA_MEDIA_TYPES.get(suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _fail(code: str, message: str, exit_code: int) -> typer.Exit:
    err_console.print(f"[red]{code}[/red]: {message}", markup=True, highlight=False)
    return typer.Exit(exit_code)


def extract(
    file: Annotated[
        Path, typer.Argument(help="The captured bytes to read (an HTML page, a JSON listing, ...).")
    ],
    adapter_pin: Annotated[
        str, typer.Option("--adapter", help="auto, or an exact pin such as pa_schemaorg@1.0.0.")
    ] = "auto",
    url: Annotated[str | None, typer.Option("--url", help="The URL the file was captured from.")] = None,
    media_type: Annotated[
        str | None, typer.Option("--media-type", help="Default: guessed from the file extension.")
    ] = None,
    profile_pin: Annotated[
        str | None, typer.Option("--profile", help="Default: the newest installed np_core.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON document (Decimals as strings).")
    ] = False,
) -> None:
    """Dry-run an adapter (and a profile) on a local file."""
    if not file.is_file():
        raise _fail("FILE_NOT_FOUND", f"{file} does not exist or is not a file", 2)
    data = file.read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    capture = CaptureView(
        capture_id=f"dry_run_{sha256[:12]}",
        source_id="local_file",
        media_type=media_type or guess_media_type(file),
        url=url,
        adapter_hint=None if adapter_pin == "auto" else adapter_pin,
    )
    artifact = Artifact(f"art_{sha256[:12]}", sha256, capture.media_type, data)
    try:
        registry = PluginRegistry.from_manager(get_plugin_manager())
        adapter = _choose_adapter(registry, capture, adapter_pin)
        profile = _choose_profile(registry, profile_pin)
    except (UnknownAdapterVersion, UnknownProfileVersion) as exc:
        raise _fail(exc.code, str(exc), 2) from exc
    except PluginError as exc:
        raise _fail(exc.code, str(exc), 1) from exc
    if adapter is None:
        message = f"no installed adapter supports media type {capture.media_type}; installed: "
        raise _fail("NO_ADAPTER", message + (", ".join(registry.adapter_pins) or "none"), 1)

    notes = []
    if adapter_pin != "auto" and adapter.supports(capture) is not True:
        notes.append(
            f"{adapter_pin} does not support this capture (supports() is False); extracted as pinned"
        )
    try:
        extraction = adapter.extract(capture, [artifact])
    except ExtractionError as exc:
        raise _fail(exc.code, f"{adapter.name}@{adapter.version}: {exc}", 1) from exc
    normalization = profile.normalize(extraction.claims) if profile is not None else None
    if profile is None:
        notes.append(f"no {DEFAULT_PROFILE} profile is installed: claims were not normalized")

    result = _document(file, capture, sha256, extraction, normalization, adapter_pin == "auto", notes)
    if as_json:
        typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        _render(result)


def _choose_adapter(registry: PluginRegistry, capture: CaptureView, pin: str) -> SourceAdapter | None:
    return registry.select_adapter(capture) if pin == "auto" else registry.adapter(pin)


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
            {"attribute": c.attribute, "value": _plain(c.value), "evidence_locator": c.evidence_locator}
            for c in extraction.claims
        ],
        "listing": {
            "title": listing.title,
            "url": listing.url,
            "price": _plain(listing.price),
            "currency": listing.currency,
            "availability": listing.availability,
        },
        "normalized": [
            {
                "key": a.key,
                "value": _plain(a.value),
                "unit": a.unit,
                "definition_version": a.definition_version,
                "evidence_locators": list(a.evidence_locators),
            }
            for a in (normalization.attributes if normalization else ())
        ],
        "problems": [
            {"attribute": p.attribute, "code": p.code, "message": p.message, "raw_value": _plain(p.raw_value)}
            for p in (normalization.problems if normalization else ())
        ],
        "diagnostics": list(extraction.diagnostics) + notes,
    }


def _render(result: dict[str, Any]) -> None:
    console.print(
        f"[bold]{result['file']}[/bold]  {result['media_type']}  sha256 {result['sha256'][:16]}…\n"
        f"adapter [bold]{result['adapter']}[/bold] ({result['adapter_selection']})  "
        f"profile [bold]{result['profile'] or '-'}[/bold]",
        highlight=False,
    )
    sections: list[tuple[str, tuple[str, ...], list[dict[str, Any]]]] = [
        ("claims", ("attribute", "value", "evidence_locator"), result["claims"]),
        ("listing", ("field", "value"), [{"field": k, "value": v} for k, v in result["listing"].items()]),
        (
            "normalized",
            ("key", "value", "unit", "definition_version", "evidence_locators"),
            result["normalized"],
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


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return "\n".join(str(item) for item in value)
    return str(value)

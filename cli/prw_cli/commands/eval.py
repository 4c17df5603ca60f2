"""``prw eval``: how well the installed plugins do on annotated data, in a benchmark's own metric.

``prw eval extraction DIR`` runs the installed adapters (``--adapter``: auto, or one pin) and the profile on
every page of an annotated page set, in one process (the plugins are loaded once: ``prw extract``'s ``DryRun``),
prints precision / recall / F1 per attribute as Zyte's product extraction benchmark defines them
(``prw_cli.evaluation.metric``), and with ``--out`` writes each page's predictions beside the truth to a CSV.
Exit codes: 0 evaluated (misses are results, not failures); 2 usage (unknown pin, not a page set).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from prw_cli.commands.extract import DryRun
from prw_cli.evaluation.extraction import (
    DatasetError,
    PageResult,
    csv_header,
    csv_row,
    load_dataset,
    run_all,
    score,
)
from prw_platform.plugins import PluginError, UnknownAdapterVersion, UnknownProfileVersion

app = typer.Typer(help="Measure the installed plugins on annotated data, in a benchmark's own metric.")
console = Console()
err_console = Console(stderr=True)


def _fail(code: str, message: str, exit_code: int) -> typer.Exit:
    err_console.print(Text.assemble((code, "red"), f": {message}"))
    return typer.Exit(exit_code)


@app.command("extraction")
def extraction(
    directory: Annotated[
        Path,
        typer.Argument(
            help="An annotated page set: ground-truth.json and html/<page id>.html[.gz] (the layout of Zyte's"
            " product extraction benchmark).",
            show_default=False,
        ),
    ],
    adapter_pin: Annotated[
        str, typer.Option("--adapter", help="auto, or an exact pin such as pa_schemaorg@1.1.0.")
    ] = "auto",
    profile_pin: Annotated[
        str | None, typer.Option("--profile", help="Default: the newest installed np_core.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write one CSV row per page: predicted, expected, outcome, evidence."),
    ] = None,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", min=0, help="Bootstrap resamples for the ± spread (0: none).")
    ] = 1000,
) -> None:
    """Run the installed adapter and profile on every annotated page and print precision, recall and F1 per
    attribute.

    The metric is Zyte's product extraction benchmark's: one predicted value per page and attribute, a wrong
    value is a false positive and a false negative, price compared as a number. Misses are results: the exit
    code is 0 whatever the scores.
    """
    try:
        pages = load_dataset(directory)
    except DatasetError as exc:
        raise _fail("NOT_A_PAGE_SET", str(exc), 2) from exc
    try:
        dry_run = DryRun.load(adapter_pin, profile_pin, None, "text/html")
    except (UnknownAdapterVersion, UnknownProfileVersion) as exc:
        raise _fail(exc.code, str(exc), 2) from exc
    except PluginError as exc:
        raise _fail(exc.code, str(exc), 1) from exc

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal) as bar:
        task = bar.add_task("evaluating", total=len(pages))
        results = list(run_all(dry_run, pages, lambda page: bar.advance(task)))
    _render(directory, adapter_pin, results, bootstrap)
    if out is not None:
        with out.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(csv_header())
            writer.writerows(csv_row(result) for result in results)
        console.print(f"per-page predictions: {out}", highlight=False)


def _render(directory: Path, adapter_pin: str, results: list[PageResult], n_bootstrap: int) -> None:
    adapters = sorted({r.adapter for r in results if r.adapter}) or ["-"]
    failed = [r for r in results if r.error]
    table = Table(
        title=f"prw eval extraction: {directory} ({len(results)} pages), adapter {', '.join(adapters)}",
        title_justify="left",
        caption=f"{len(results) - len(failed)} pages extracted, {len(failed)} failed (counted as no prediction);"
        f" ± is the bootstrap standard deviation ({n_bootstrap} resamples)",
        caption_justify="left",
    )
    table.add_column("attribute")
    for column in ("F1", "precision", "recall", "support", "tp", "fp", "fn"):
        table.add_column(column, justify="right")
    for result in score(results, n_bootstrap):
        value, spread = result.scores, result.spread
        table.add_row(
            result.attribute,
            f"{value.f1:.3f} ± {spread.f1:.3f}",
            f"{value.precision:.3f} ± {spread.precision:.3f}",
            f"{value.recall:.3f} ± {spread.recall:.3f}",
            str(result.support),
            *(str(count) for count in result.counts),
        )
    console.print(table)
    for page_result in failed:
        console.print(
            Text.assemble((page_result.page.page_id, "bold"), ": ", (page_result.error or "", "red"))
        )

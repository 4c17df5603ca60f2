"""``prw eval``: how well the installed plugins do on annotated data, in a benchmark's own metric.

``prw eval extraction DIR`` runs the installed adapters (``--adapter``: auto, or one pin) and the profile on
every page of an annotated page set, in one process (the plugins are loaded once: ``prw extract``'s ``DryRun``),
prints precision / recall / F1 per attribute as Zyte's product extraction benchmark defines them
(``prw_cli.evaluation.metric``), and with ``--out`` writes each page's predictions beside the truth to a CSV.
``--strip-markup`` runs every page without its structured markup and meta tags (the visible-page rules alone);
``--rules`` adds what each adapter rule changed (pages, fixed, broke); ``--confidence`` adds, per confidence
threshold, the precision and coverage of the values that would be published automatically
(``prw_cli.evaluation.reports``). Exit codes: 0 evaluated (misses are results, not failures); 2 usage (unknown
pin, not a page set).

``prw eval matching --catalog A.csv --listings B.csv --pairs P.csv`` loads the catalog table as items of an
evaluation catalog of its own (real PostgreSQL: embedded, or PRW_DATABASE_URL), runs every listing the pairs name
through the identity stage's candidate path (pg_trgm candidates, then the installed identity rules), prints the
automatic mappings made, their precision, the share of labelled matches they cover and recall@1 / @5 of the
labelled item among the candidates, and with ``--out`` writes every automatic mapping and candidate list.
Exit codes: 0 evaluated; 2 usage (NOT_A_MATCHING_TABLE).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from prw_cli.commands.extract import DryRun
from prw_cli.evaluation import matching as matching_eval
from prw_cli.evaluation.extraction import (
    DatasetError,
    PageResult,
    csv_header,
    csv_row,
    load_dataset,
    run_all,
    score,
)
from prw_cli.evaluation.reports import CONFIDENCE_ATTRIBUTES, confidence_report, rule_report
from prw_cli.output import results_console
from prw_cli.settings import load_settings
from prw_platform.plugins import PluginError, UnknownAdapterVersion, UnknownProfileVersion

app = typer.Typer(help="Measure the installed plugins on annotated data, in a benchmark's own metric.")
console = results_console()
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
    strip: Annotated[
        bool,
        typer.Option(
            "--strip-markup",
            help="Run every page without its JSON-LD, microdata, RDFa and meta tags (the visible page alone).",
        ),
    ] = False,
    rules: Annotated[
        bool,
        typer.Option("--rules", help="Also print each adapter rule's effect: pages changed, fixed, broke."),
    ] = False,
    confidence: Annotated[
        bool,
        typer.Option(
            "--confidence",
            help="Also print, per confidence threshold, precision and coverage of what would be published.",
        ),
    ] = False,
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

    with _progress() as bar:
        task = bar.add_task("evaluating", total=len(pages))
        results = list(run_all(dry_run, pages, lambda page: bar.advance(task), strip))
    _render(directory, results, bootstrap, strip)
    if rules:
        _render_rules(results)
    if confidence:
        _render_confidence(results)
    if out is not None:
        with out.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(csv_header())
            writer.writerows(csv_row(result) for result in results)
        console.print(f"per-page predictions: {out}", highlight=False)


def _progress() -> Progress:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal)


def _csv_option(flag: str, help_text: str) -> Any:
    return typer.Option(flag, exists=True, dir_okay=False, show_default=False, help=help_text)


@app.command("matching")
def matching(
    catalog: Annotated[Path, _csv_option("--catalog", "Table loaded as catalog items (id, name).")],
    listings: Annotated[Path, _csv_option("--listings", "Table whose rows are identified (id, name).")],
    pairs_file: Annotated[
        Path, _csv_option("--pairs", "Labelled pairs: ltable_id (catalog), rtable_id (listing), label.")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write every automatic mapping and candidate list to this CSV."),
    ] = None,
    tenant: Annotated[str, typer.Option(help="Tenant of the evaluation catalog.")] = "ten_eval",
) -> None:
    """Load one table as catalog items and identify the other's rows through the identity stage; print the
    automatic mappings, their precision, their coverage of the labelled matches, and candidate recall@1 / @5."""
    from prw_platform.bootstrap import bootstrap

    try:
        catalog_rows, listing_rows = matching_eval.load_table(catalog), matching_eval.load_table(listings)
        pairs = matching_eval.load_pairs(pairs_file, catalog_rows, listing_rows)
    except matching_eval.TableError as exc:
        raise _fail("NOT_A_MATCHING_TABLE", str(exc), 2) from exc
    catalog_id = f"cat_eval_{catalog.stem}_{len(catalog_rows)}".lower().replace("-", "_")
    with bootstrap(load_settings(), migrate=True) as platform:
        bench = platform.matching_bench(tenant, catalog_id)
        with _progress() as bar:
            task = bar.add_task("loading the catalog", total=len(catalog_rows))
            bench.load_catalog(list(catalog_rows.values()), lambda record: bar.advance(task))
            task = bar.add_task("identifying listings", total=len(pairs.listings))
            results = []
            for listing_id in pairs.listings:
                results.append(bench.identify(listing_rows[listing_id]))
                bar.advance(task)
    scores = matching_eval.score(results, pairs)
    _render_matching(f"{catalog.name} <- {listings.name}, pairs {pairs_file.name}", scores)
    if out is not None:
        with out.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(matching_eval.csv_header())
            for result in results:
                writer.writerows(matching_eval.csv_rows(result, pairs))
        console.print(f"automatic mappings and candidates: {out}", highlight=False)


def _render_matching(title: str, scores: matching_eval.MatchingScores) -> None:
    table = _table(f"prw eval matching: {title}", ("measure",), ("value", "of"))
    table.add_row("listings identified", str(scores.listings), "")
    table.add_row("automatic mappings", str(scores.automatic), str(scores.listings))
    judged = scores.automatic_correct + scores.automatic_wrong
    correct = f"{scores.automatic_correct}/{judged}"
    table.add_row("automatic precision (judged)", f"{scores.precision:.3f}", correct)
    table.add_row("automatic mappings unjudged", str(scores.unjudged), str(scores.automatic))
    covered = f"{scores.automatic_correct}/{scores.matches}"
    table.add_row("coverage of true matches", f"{scores.coverage:.3f}", covered)
    table.add_row("candidate recall@1", f"{scores.recall_at_1:.3f}", str(scores.matches))
    table.add_row("candidate recall@5", f"{scores.recall_at_5:.3f}", str(scores.matches))
    console.print(table)


def _render(directory: Path, results: list[PageResult], n_bootstrap: int, strip: bool) -> None:
    adapters = sorted({r.adapter for r in results if r.adapter}) or ["-"]
    failed = [r for r in results if r.error]
    stripped = ", markup stripped" if strip else ""
    table = _table(
        f"prw eval extraction: {directory} ({len(results)} pages{stripped}), adapter {', '.join(adapters)}",
        ("attribute",),
        ("F1", "precision", "recall", "support", "tp", "fp", "fn"),
        caption=f"{len(results) - len(failed)} pages extracted, {len(failed)} failed (counted as no prediction);"
        f" ± is the bootstrap standard deviation ({n_bootstrap} resamples)",
    )
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


def _table(
    title: str, labels: tuple[str, ...], numbers: tuple[str, ...], caption: str | None = None
) -> Table:
    """A results table: its title and caption left-justified, label columns, then right-justified numbers."""
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for column in labels:
        table.add_column(column)
    for column in numbers:
        table.add_column(column, justify="right")
    return table


def _render_rules(results: list[PageResult]) -> None:
    table = _table(
        "adapter rules: pages where each changed a scored value",
        ("rule", "attribute"),
        ("pages", "fixed", "broke", "neither"),
        caption="fixed: wrong or missing before, right after; broke: right before, not after. A rule that "
        "changes one page only is not shown to be general.",
    )
    rows = rule_report(results)
    for row in rows:
        style = "yellow" if row.pages == 1 else None
        table.add_row(
            Text(row.rule, style=style or ""),
            row.attribute,
            str(row.pages),
            str(row.fixed),
            str(row.broke),
            str(row.neither),
        )
    if not rows:
        table.add_row("(no rule fired)", "-", "0", "0", "0", "0")
    console.print(table)


def _render_confidence(results: list[PageResult]) -> None:
    table = _table(
        "published automatically at each confidence threshold",
        ("attribute", "threshold"),
        ("published", "right", "precision", "coverage", "support"),
        caption="published: values whose confidence reaches the threshold; precision: right / published; "
        "coverage: right / pages with a true value; profile: what the profile itself published.",
    )
    for attribute in CONFIDENCE_ATTRIBUTES:
        for row in confidence_report(results, attribute):
            table.add_row(
                attribute,
                row.threshold,
                str(row.published),
                str(row.correct),
                f"{row.precision:.3f}",
                f"{row.coverage:.3f}",
                str(row.support),
            )
    console.print(table)

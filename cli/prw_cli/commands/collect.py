"""``prw collect``: send local pages to intake as one collector instance, with the platform's collector client
(``prw_cli.collect``): token, register, heartbeats, upload, capture with a deterministic Idempotency-Key, receipt;
retried per the seed's policy. Prints a row per page and exits 0 when every page has its capture, 1 when some
page failed or no token could be had, 3 when the run stopped on revoked credentials.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from prw_cli.output import results_console

if TYPE_CHECKING:
    from prw_cli.collect import CollectRun

console = results_console()
err_console = Console(stderr=True)

EXIT_PAGE_FAILED = 1
EXIT_CREDENTIAL_REVOKED = 3


def collect(
    paths: Annotated[
        list[Path], typer.Argument(help="Files, or directories of files, one page each.", exists=True)
    ],
    source: Annotated[str, typer.Option("--source", help="Source id the pages come from (src_...).")],
    intake: Annotated[
        str, typer.Option("--intake", envvar="PRW_INTAKE_URL", help="Intake base URL.")
    ] = "http://127.0.0.1:8081",
    client_id: Annotated[
        str, typer.Option("--client-id", envvar="PRW_COLLECTOR_CLIENT_ID", help="OAuth client id.")
    ] = "",
    client_secret: Annotated[
        str,
        typer.Option(
            "--client-secret",
            envvar="PRW_COLLECTOR_CLIENT_SECRET",
            help="OAuth client secret (prefer the env).",
        ),
    ] = "",
    url_base: Annotated[
        str | None, typer.Option("--url-base", help="Each capture's url: this base + the page's record id.")
    ] = None,
    media_type: Annotated[
        str | None, typer.Option("--media-type", help="Media type of every page (default: from the suffix).")
    ] = None,
    glob: Annotated[str, typer.Option("--glob", help="Files of a directory to send, recursively.")] = "*",
    register: Annotated[
        bool, typer.Option("--register/--no-register", help="Register and send heartbeats.")
    ] = True,
    max_attempts: Annotated[
        int, typer.Option("--max-attempts", min=1, help="Requests per step, at most.")
    ] = 8,
    backoff_base: Annotated[
        float, typer.Option("--backoff-base", min=0, help="Backoff base, seconds.")
    ] = 1.0,
    backoff_cap: Annotated[float, typer.Option("--backoff-cap", min=0, help="Backoff cap, seconds.")] = 300.0,
    receipt_poll_interval: Annotated[
        float,
        typer.Option(
            "--receipt-poll-interval",
            min=0.01,
            help="Seconds between receipt poll rounds (the seed asks for at least 30).",
        ),
    ] = 30.0,  # prw_cli.collect.flow.RECEIPT_POLL_INTERVAL_SECONDS (kept literal: the module loads lazily)
    receipt_wait: Annotated[
        float,
        typer.Option(
            "--receipt-wait",
            min=0,
            help="Seconds to keep polling receipts still 'stored' after the last page (0: read each once).",
        ),
    ] = 120.0,  # prw_cli.collect.flow.RECEIPT_WAIT_SECONDS
) -> None:
    """Send local pages to intake as a collector: upload, capture (idempotent), receipt; retried with backoff."""
    from rich.progress import Progress

    from prw_cli.collect import CollectorClient, ReceiptPolling, RetryEvent, RetryPolicy, collect, pages_from

    if not client_id or not client_secret:
        err_console.print(
            "[red]missing credentials[/red]: --client-id/--client-secret or PRW_COLLECTOR_CLIENT_*"
        )
        raise typer.Exit(2)
    pages = pages_from(paths, url_base=url_base, media_type=media_type, glob=glob)
    policy = RetryPolicy(backoff_base, backoff_cap, max_attempts)
    with (
        CollectorClient(intake, client_id, client_secret, retry=policy) as client,
        Progress(console=console, transient=True, disable=not console.is_terminal) as progress,
    ):
        task = progress.add_task(f"collect {source}", total=len(pages))

        def retried(event: RetryEvent) -> None:
            progress.update(task, description=f"retry {event.step} ({event.reason}) in {event.delay:.1f} s")

        run = collect(
            client,
            pages,
            source,
            register=register,
            on_page=lambda outcome: progress.update(
                task, advance=1, description=outcome.page.native_record_id
            ),
            on_retry=retried,
            receipts=ReceiptPolling(receipt_poll_interval, receipt_wait),
        )
    _print(run)
    if run.stopped is not None:
        raise typer.Exit(EXIT_CREDENTIAL_REVOKED)
    if not run.ok:  # a page failed, or no token could be had
        raise typer.Exit(EXIT_PAGE_FAILED)


def _print(run: CollectRun) -> None:
    for warning in run.warnings:
        err_console.print(f"[yellow]warning[/yellow]: {warning}", highlight=False)
    table = Table(title="prw collect", title_justify="left")
    for column in ("file", "sha256", "HTTP", "receipt", "capture", "attempts", "outcome"):
        table.add_column(column, overflow="fold")
    for o in run.outcomes:
        outcome = o.outcome if o.error is None else f"{o.outcome}: {o.error}"
        receipt = f"{o.receipt_id} ({o.receipt_status})" if o.receipt_id else ""
        table.add_row(
            o.page.native_record_id,
            o.sha256[:12],
            "" if o.http_status is None else str(o.http_status),
            receipt,
            o.capture_id or "",
            str(o.attempts or ""),
            outcome,
        )
    console.print(table)
    report = run.report
    failures = ", ".join(f"{kind} x{n}" for kind, n in sorted(report.failures.items())) or "none"
    console.print(
        f"pages {report.pages_fetched}, captures {report.captures_submitted}, outcome {report.outcome}; "
        f"failures by kind: {failures}",
        highlight=False,
    )
    if run.aborted is not None:
        err_console.print(f"[red]aborted[/red]: no token: {run.aborted}", highlight=False)
    if run.stopped is not None:
        err_console.print(
            f"[red]stopped[/red]: {run.stopped}. The client is revoked or superseded: retrying cannot help; "
            "alert the operator (prw clients create --supersede issues a new client).",
            highlight=False,
        )

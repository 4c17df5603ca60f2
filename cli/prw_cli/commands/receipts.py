"""``prw receipts show``: an operator reads any receipt (if_receipt_get: "operator dashboard (any receipt in the
tenant)"), through ``Platform.reports`` (the read-only ``prw_operator`` role).

The status is how far resolution got: ``stored``, ``accepted`` (a decision committed), ``in_review`` (a review
case opened) or ``failed`` with the dead-letter code. A receipt status of accepted never means applied. The
platform is imported when the command runs, not for ``--help``.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from prw_cli.output import results_console

app = typer.Typer(help="Capture receipts: show any receipt's status (stored, accepted, in_review, failed).")
console = results_console()
err_console = Console(stderr=True)


@app.callback()
def receipts() -> None:
    """A group even with one command, so that the command line reads ``prw receipts show RECEIPT_ID``."""


@app.command("show")
def show(
    receipt_id: Annotated[str, typer.Argument(help="The receipt (rcpt_...).")],
    tenant: Annotated[
        str | None, typer.Option(help="Only this tenant's receipt (another tenant's is TENANT_SCOPE_DENIED).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Show one receipt: its capture, instance, status (and reason when failed). Accepted never means applied."""
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap
    from prw_platform.errors import IntakeError

    with bootstrap(load_settings()) as platform:
        try:
            found = platform.reports.receipt(receipt_id, tenant)
        except IntakeError as error:
            err_console.print(f"[red]{error.code}[/red]: {error}", highlight=False)
            raise typer.Exit(1) from error
    receipt = found.receipt
    document = {
        "receipt_id": receipt.receipt_id,
        "tenant_id": found.tenant_id,
        "capture_id": receipt.capture_id,
        "instance_id": receipt.instance_id,
        "status": receipt.status,
        "reason": receipt.reason,
        "received_at": receipt.received_at.isoformat(),
        "status_changed_at": receipt.status_changed_at.isoformat() if receipt.status_changed_at else None,
    }
    if as_json:
        typer.echo(json.dumps(document, indent=2))
        return
    table = Table(title=f"receipt {receipt.receipt_id}", show_header=False)
    for name, value in document.items():
        table.add_row(name, "-" if value is None else str(value))
    console.print(table)

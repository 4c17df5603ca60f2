"""``prw release CATALOG [--tenant T]``: release a catalog's accepted state now, through the same
platform service as the admin origin's ``POST /v1/releases`` (``Platform.decisions``, AW-01: the stream cursor
lock, an immutable decision with the operator as actor, the release authorization and its outbox event in one
transaction). Prints the release as a table (or ``--json``). Nothing to release exits 1 with
NOTHING_TO_RELEASE and writes nothing. The platform is imported when the command runs, not for ``--help``.
"""

from __future__ import annotations

import getpass
import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from prw_cli.output import results_console

console = results_console()
err_console = Console(stderr=True)


def release(
    catalog: Annotated[str, typer.Argument(help="The catalog to release (cat_...).")],
    tenant: Annotated[
        str | None, typer.Option(help="The catalog's tenant (default: PRW_PRODUCT_TENANT_ID).")
    ] = None,
    rationale: Annotated[str, typer.Option(help="Recorded on the release's decision.")] = (
        "manual release of the accepted state"
    ),
    idempotency_key: Annotated[
        str | None, typer.Option(help="A retry with the same key returns the first release.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Release a catalog's accepted state now (a release authorization, recorded as a decision).

    Everything accepted and not yet released in CATALOG: the product service publishes it once it applied the
    release.authorized event.
    """
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap
    from prw_platform.errors import DecisionError, StreamUnavailable
    from prw_platform.services import AuthorizeRelease

    settings = load_settings()
    tenant_id = tenant or settings.product_tenant_id
    # The actor of an operator at the command line: the operating-system user (never a rule, never an LLM).
    command = AuthorizeRelease(catalog, f"operator:cli:{getpass.getuser()}", rationale, idempotency_key)
    with bootstrap(settings) as platform:
        try:
            released = platform.decisions.release(command, tenant_id)
        except (DecisionError, StreamUnavailable) as error:
            err_console.print(f"[red]{error.code}[/red]: {error}", highlight=False)
            raise typer.Exit(1) from error
    document = {
        "tenant_id": tenant_id,
        "catalog_id": released.catalog_id,
        "release_id": released.release_id,
        "publication_revision": released.publication_revision,
        "items": released.items,
        "listings": released.listings,
        "decision_id": released.decision_id,
        "outbox": [event.event_id for event in released.events],
        "replayed": released.replayed,
    }
    if as_json:
        typer.echo(json.dumps(document, indent=2))
        return
    table = Table(title=f"release {released.release_id} @ {released.publication_revision}", show_header=False)
    for name, value in document.items():
        table.add_row(name, ", ".join(value) if isinstance(value, list) else str(value))
    console.print(table)

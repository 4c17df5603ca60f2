"""``prw clients``: provision and revoke collector clients (if_collector_bootstrap step 1: "The operator creates a
client ... and gets client_id and secret").

The secret is printed once and never stored in clear: keep it in the collector's secret store. The platform (the
database stack) is imported when a command runs, not for ``--help``.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from prw_cli.output import results_console

app = typer.Typer(help="Collector OAuth clients: create (client_id + secret, shown once) and revoke.")
console = results_console()
err_console = Console(stderr=True)


@app.command("create")
def create(
    tenant: Annotated[str, typer.Option(help="Tenant the client is bound to.")],
    catalog: Annotated[str, typer.Option(help="Catalog its captures go to.")],
    worker: Annotated[str, typer.Option(help="Worker id (cw_...).")],
    instance: Annotated[str, typer.Option(help="Stable collector instance id (ci_...); the token's sub.")],
    source: Annotated[
        list[str] | None,
        typer.Option(help="Granted source id; repeat for several. None for a product client (exports:read)."),
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option(help="Granted scope; repeat for several. Default: every collector scope."),
    ] = None,
    supersede: Annotated[
        bool, typer.Option("--supersede", help="Revoke the instance's other clients (credential rotation).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Create a collector client and print its client_id and secret (the secret only this once)."""
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap
    from prw_platform.errors import ClientProvisioningError
    from prw_platform.services import COLLECTOR_SCOPES, ClientSpec

    spec = ClientSpec(
        tenant, catalog, worker, instance, tuple(source or ()), tuple(scope or COLLECTOR_SCOPES)
    )
    with bootstrap(load_settings()) as platform:
        try:
            provisioned = platform.clients.create(spec, supersede=supersede)
        except ClientProvisioningError as error:
            err_console.print(f"[red]{error.code}[/red]: {error}", highlight=False)
            raise typer.Exit(1) from error
    if as_json:
        document = {
            "client_id": provisioned.client_id,
            "client_secret": provisioned.client_secret,
            "tenant_id": tenant,
            "catalog_id": catalog,
            "worker_id": worker,
            "instance_id": instance,
            "sources": list(provisioned.binding.sources),
            "scopes": list(provisioned.binding.scopes),
            "superseded": list(provisioned.superseded),
        }
        typer.echo(json.dumps(document, indent=2))
        return
    table = Table(title="collector client (the secret is shown once: store it now)", show_header=False)
    for name, value in (
        ("client_id", provisioned.client_id),
        ("client_secret", provisioned.client_secret),
        ("tenant / catalog", f"{tenant} / {catalog}"),
        ("worker / instance", f"{worker} / {instance}"),
        ("sources", " ".join(provisioned.binding.sources)),
        ("scopes", " ".join(provisioned.binding.scopes)),
        ("superseded", " ".join(provisioned.superseded) or "-"),
    ):
        table.add_row(name, value)
    console.print(table)


@app.command("revoke")
def revoke(
    tenant: Annotated[str, typer.Option(help="The client's tenant.")],
    client_id: Annotated[str, typer.Argument(help="The client to revoke.")],
) -> None:
    """Revoke a client: its tokens fail with 401 CREDENTIAL_REVOKED from the next request on."""
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap

    with bootstrap(load_settings()) as platform:
        revoked = platform.clients.revoke(tenant, client_id)
    if not revoked:
        err_console.print(f"no active client {client_id} in tenant {tenant}", highlight=False)
        raise typer.Exit(1)
    console.print(f"revoked {client_id}", highlight=False)

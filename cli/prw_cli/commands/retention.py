"""``prw retention status | prune`` and ``prw export snapshot``: the operations the Dagster ``retention``
asset, ``prune_job`` and ``exports_job`` run, from the command line, through the same platform services and stages
(``Platform.retention_status``, the ``prune`` stage's ``Platform.pruner``, ``Platform.snapshot_exports``).

The platform is imported when a command runs, not for ``--help``.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from prw_cli.output import results_console

if TYPE_CHECKING:
    from prw_platform.bootstrap import Platform

app = typer.Typer(
    help="Outbox retention (AW-03 Prune): status of every stream (consumers, leases, blocked retention), prune now."
)
export_app = typer.Typer(
    help="Snapshot exports of a catalog (if_projection_bootstrap): build one now and print its manifest."
)
console = results_console()
err_console = Console(stderr=True)


@app.callback()
def retention() -> None:
    """Outbox retention: consumers, leases, the pruned-through cursor."""


@export_app.callback()
def export() -> None:
    """Snapshot exports of a catalog's accepted state."""


def _platform() -> Platform:
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap

    return bootstrap(load_settings())


@app.command("status")
def status(
    tenant: Annotated[str | None, typer.Option(help="One tenant only.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """One row per stream: committed position, pruned-through P, the bound and its holder, blocked retention,
    consumers and live leases (near expiry marked). Exit 1 when a stream is blocked longer than allowed or a lease
    is near expiry, so that a cron or a check can alert on it."""
    with _platform() as platform:
        statuses = platform.retention_status(tenant)
    alerting = any(s.blocked_alert or s.leases_near_expiry for s in statuses)
    if as_json:
        typer.echo(json.dumps([_document(s) for s in statuses], indent=2, default=str))
        raise typer.Exit(1 if alerting else 0)
    table = Table(title=f"Retention ({len(statuses)} streams)")
    for column in (
        "tenant",
        "catalog",
        "epoch",
        "committed",
        "pruned through",
        "held by",
        "blocked",
        "consumers",
        "leases",
    ):
        table.add_column(
            column, overflow="fold", justify="right" if column in ("committed", "pruned through") else "left"
        )
    for s in statuses:
        blocked = "" if s.blocked_by is None else f"{s.blocked_seconds:.0f} s by {s.blocked_by}"
        table.add_row(
            s.tenant_id,
            s.catalog_id,
            s.history_epoch,
            str(s.committed_position),
            str(s.pruned_through),
            s.held_by,
            f"[red]{blocked}[/red]" if s.blocked_alert else blocked,
            ", ".join(
                f"{c.consumer} at {c.acknowledged_position} (lag {c.lag})"
                for c in s.consumers
                if not c.retired
            ),
            ", ".join(
                f"{lease.lease_id} at {lease.pinned_at}, {lease.expires_in_seconds:.0f} s"
                + (" [yellow]near expiry[/yellow]" if lease.near_expiry else "")
                for lease in s.leases
            ),
        )
    console.print(table)
    raise typer.Exit(1 if alerting else 0)


def _document(s: Any) -> dict[str, Any]:
    from dataclasses import asdict

    document: dict[str, Any] = asdict(s)
    return document


@app.command("prune")
def prune(
    max_rows: Annotated[int | None, typer.Option(min=1, help="Remove at most this many outbox rows.")] = None,
) -> None:
    """Prune every stream now, as the ``prune`` stage does on its schedule (progress per chunk)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn

    with _platform() as platform:
        removed = 0
        with Progress(
            SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True
        ) as progress:
            task = progress.add_task("pruning")

            def step(chunk: Any) -> None:
                nonlocal removed
                removed += chunk.rows
                progress.update(
                    task, description=f"{chunk.stream.catalog_id}: through {chunk.after} ({removed} rows)"
                )

            report = platform.pruner.prune(max_rows, progress=step)
        statuses = {(s.tenant_id, s.catalog_id, s.history_epoch): s for s in platform.retention_status()}
    table = Table(title=f"Pruned {report.rows} outbox rows")
    for column in ("tenant", "catalog", "epoch", "P before", "P after", "rows", "blocked by"):
        table.add_column(column, overflow="fold")
    for pruned in report.streams:
        key = (pruned.stream.tenant_id, pruned.stream.catalog_id, pruned.stream.history_epoch)
        holder = pruned.blocked_by or ""
        if key in statuses and statuses[key].blocked_alert:
            holder = f"[red]{holder} (blocked {statuses[key].blocked_seconds:.0f} s)[/red]"
        table.add_row(*key, str(pruned.before), str(pruned.after), str(pruned.rows), holder)
    console.print(table)


@export_app.command("snapshot")
def snapshot(
    tenant: Annotated[str, typer.Option(help="The tenant.")],
    catalog: Annotated[str, typer.Option(help="The catalog.")],
    aggregate: Annotated[
        list[str] | None,
        typer.Option("--aggregate", help="An aggregate type to export (repeat); default all."),
    ] = None,
    key: Annotated[str | None, typer.Option(help="Idempotency key (the same key: the same export).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the export as one JSON document.")] = False,
) -> None:
    """Request a snapshot export and build it now (the ``exports`` stage's work for this one export); prints the
    manifest: epoch, committed cursor W, lease, one checksummed object per aggregate type."""
    from prw_platform.errors import IntakeError

    with _platform() as platform:
        exports = platform.snapshot_exports
        try:
            requested = exports.request_for(tenant, catalog, key or f"cli-{secrets.token_hex(8)}", aggregate)
            done = requested.snapshot
            if done.status == "pending":
                with console.status(f"exporting {tenant}/{catalog} ({done.export_id})"):
                    done = exports.run_export(tenant, done.export_id)
        except IntakeError as error:
            err_console.print(f"[red]{error.code}[/red]: {error}")
            raise typer.Exit(2) from error
    if as_json:
        typer.echo(json.dumps(_document(done), indent=2, default=str))
    else:
        title = f"Export {done.export_id}: {done.status}"
        if done.status == "ready":
            title += f" at {done.history_epoch} position {done.position} (lease {done.lease_id})"
        table = Table(title=title)
        for column in ("aggregate", "objects", "bytes", "sha256"):
            table.add_column(column, overflow="fold")
        for obj in (done.manifest or {}).get("objects", []):
            table.add_row(obj["aggregate"], str(obj["count"]), str(obj["size"]), obj["sha256"])
        console.print(table)
        if done.status != "ready":
            err_console.print(f"[red]{done.error_code}[/red]: {done.error}")
    raise typer.Exit(0 if done.status == "ready" else 1)

"""``prw plugins``: what is installed, as the platform's plugin manager sees it (``list_plugins``)."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from prw_cli.output import results_console
from prw_platform.plugins import PLUGIN_API_VERSION, PluginError, get_plugin_manager, list_plugins

console = results_console()
err_console = Console(stderr=True)


def plugins(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON document instead of a table.")
    ] = False,
) -> None:
    """One row per registered plugin: name, distribution and version, kind, name@version pins, hooks."""
    try:
        infos = list_plugins(get_plugin_manager())
    except PluginError as exc:
        err_console.print(f"[red]{exc.code}[/red]: {exc}", markup=True, highlight=False)
        raise typer.Exit(1) from exc
    if as_json:
        document = {"plugin_api": PLUGIN_API_VERSION, "plugins": [dataclasses.asdict(info) for info in infos]}
        typer.echo(json.dumps(document, indent=2))
        return
    table = Table(title=f"prw plugins (plugin API {PLUGIN_API_VERSION})")
    for column in ("plugin", "distribution", "version", "kind", "pins", "hooks"):
        table.add_column(column, overflow="fold")
    for info in infos:
        table.add_row(
            info.name,
            info.distribution or "-",
            info.distribution_version or "-",
            ", ".join(info.kinds) or "-",
            "\n".join(info.pins) or "-",
            "\n".join(info.hooks) or "-",
        )
    console.print(table)

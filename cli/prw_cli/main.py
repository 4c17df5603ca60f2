"""Entry point of the `prw` command."""

import typer

from prw_cli.commands import extract, plugins

app = typer.Typer(help="PRW platform command line.", no_args_is_help=True)
app.command("plugins")(plugins.plugins)
app.command("extract")(extract.extract)

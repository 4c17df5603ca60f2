"""Entry point of the `prw` command."""

import typer

app = typer.Typer(help="PRW platform command line.", no_args_is_help=True)
